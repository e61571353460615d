/**
 * Turning Docker's timestamped output into log lines: bounded line splitting, timestamp parsing,
 * and the timestamp form used as the shipping cursor. Pure functions, no I/O.
 */

/** Longest message kept per line; longer lines are cut here and marked. */
export const MAX_LINE_BYTES = 16 * 1024;
export const TRUNCATION_MARKER = ' …[truncated]';
/** Room for Docker's `<timestamp> ` prefix on top of the message bound. */
const PREFIX_ALLOWANCE = 64;

export interface ParsedLine {
  /** Normalised RFC 3339 (UTC, nine fraction digits), or null when the line had none. */
  ts: string | null;
  message: string;
}

const TIMESTAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;

/**
 * Docker writes RFC3339NanoFixed in UTC; normalising anyway (UTC, nine digits) makes every cursor
 * comparison a plain string comparison, which the Redis script relies on.
 */
export function normalizeTimestamp(raw: string): string | null {
  const match = TIMESTAMP.exec(raw);
  if (!match) return null;
  const [, seconds = '', fraction = '', zone = 'Z'] = match;
  const nanos = fraction.padEnd(9, '0');
  if (zone === 'Z') return `${seconds}.${nanos}Z`;
  const ms = Date.parse(`${seconds}${zone}`);
  if (Number.isNaN(ms)) return null;
  return `${new Date(ms).toISOString().slice(0, 19)}.${nanos}Z`;
}

/** A normalised timestamp in the form Docker's `since` parameter takes: `<unix seconds>.<nanos>`. */
export function toDockerSince(ts: string): string {
  const seconds = Math.floor(Date.parse(`${ts.slice(0, 19)}Z`) / 1000);
  return `${seconds}.${ts.slice(20, 29)}`;
}

/** Splits `<timestamp> <message>` and bounds the message. */
export function parseLine(raw: Buffer, isTruncated: boolean, maxBytes = MAX_LINE_BYTES): ParsedLine {
  const text = raw.toString('utf8');
  const space = text.indexOf(' ');
  const ts = space > 0 ? normalizeTimestamp(text.slice(0, space)) : null;
  let message = ts ? text.slice(space + 1) : text;
  if (isTruncated || Buffer.byteLength(message) > maxBytes) {
    // Cutting bytes can split a character: drop the replacement character that leaves behind.
    message = Buffer.from(message)
      .subarray(0, maxBytes)
      .toString('utf8')
      .replace(/\uFFFD$/, '');
    message += TRUNCATION_MARKER;
  }
  return { ts, message };
}

export interface LineSplitter {
  write(chunk: Buffer): void;
  /** Emits a last line that had no newline (output that ended mid-line). */
  end(): void;
}

/**
 * Splits a byte stream into lines without ever holding more than one bounded line: past the
 * bound the line is emitted as truncated and the rest of it is skipped up to the next newline.
 */
export function createLineSplitter(
  onLine: (line: Buffer, isTruncated: boolean) => void,
  maxBytes = MAX_LINE_BYTES,
): LineSplitter {
  const limit = maxBytes + PREFIX_ALLOWANCE;
  let parts: Buffer[] = [];
  let size = 0;
  let isSkipping = false;

  const emit = (isTruncated: boolean) => {
    let line = Buffer.concat(parts, size);
    parts = [];
    size = 0;
    if (line.at(-1) === 0x0d) line = line.subarray(0, -1);
    onLine(line, isTruncated);
  };

  return {
    write(chunk) {
      let start = 0;
      while (start < chunk.length) {
        const newline = chunk.indexOf(0x0a, start);
        const end = newline < 0 ? chunk.length : newline;
        if (!isSkipping) {
          const piece = chunk.subarray(start, end);
          const room = limit - size;
          if (piece.length > room) {
            parts.push(piece.subarray(0, room));
            size += room;
            emit(true);
            isSkipping = true;
          } else if (piece.length > 0) {
            parts.push(piece);
            size += piece.length;
          }
        }
        if (newline < 0) return;
        if (!isSkipping) emit(false);
        isSkipping = false;
        start = newline + 1;
      }
    },
    end() {
      if (size > 0 && !isSkipping) emit(false);
      parts = [];
      size = 0;
      isSkipping = false;
    },
  };
}
