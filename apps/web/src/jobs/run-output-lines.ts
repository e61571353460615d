import type { LogBuffer, LogLine } from '../logs/log-buffer.ts';

/**
 * A run's live output arrives in chunks (docs/jobs.md#following-a-run): one may hold many lines,
 * or end mid-line (a prompt without a newline is shipped at once, a long line is cut at 16 KiB),
 * and the next chunk of the same stream continues that line. The log view shows one row per line,
 * so chunks are cut at newlines here and an unfinished line stays the buffer's last row and grows.
 */
export class RunOutputLines {
  /** The stream whose line is the buffer's last row and has not ended yet. */
  private open: string | null = null;

  constructor(private readonly buffer: LogBuffer) {}

  add(entries: readonly LogLine[]): void {
    for (const entry of entries) {
      if (entry.message === '') continue;
      const pieces = entry.message.split('\n');
      const rest = pieces.pop() ?? '';
      const fresh: LogLine[] = [];
      pieces.forEach((piece, index) => {
        const text = piece.replace(/\r$/, '');
        if (index === 0 && this.open === entry.stream) this.buffer.appendToLast(text);
        else fresh.push({ ...entry, message: text });
      });
      if (rest !== '') {
        if (pieces.length === 0 && this.open === entry.stream) this.buffer.appendToLast(rest);
        else fresh.push({ ...entry, message: rest });
      }
      this.buffer.append(fresh);
      this.open = rest === '' ? null : entry.stream;
    }
  }
}
