// Log lines for the live view: appended in batches, capped so a day-long follow cannot exhaust
// memory, and searched incrementally (only new lines are tested against the current search).
export interface LogLine {
  timestamp: string;
  stream: string;
  message: string;
}

export class LogBuffer {
  private lines: LogLine[] = [];
  /** Lines dropped from the front because of the cap, so indexes stay stable for the matcher. */
  private dropped = 0;
  private search = '';
  /** Absolute indexes (dropped + position) of the lines that match `search`. */
  private matches: number[] = [];

  constructor(readonly capacity = 100_000) {}

  get size(): number {
    return this.lines.length;
  }

  /** Lines currently shown: all of them, or those matching the search. */
  get visibleCount(): number {
    return this.search ? this.matches.length : this.lines.length;
  }

  append(batch: readonly LogLine[]): void {
    if (batch.length === 0) return;
    const firstNew = this.dropped + this.lines.length;
    for (const line of batch) this.lines.push(line);
    if (this.search) {
      for (let i = 0; i < batch.length; i++) {
        if (matches(batch[i]!, this.search)) this.matches.push(firstNew + i);
      }
    }
    const excess = this.lines.length - this.capacity;
    if (excess > 0) {
      this.lines.splice(0, excess);
      this.dropped += excess;
      const firstKept = this.matches.findIndex((index) => index >= this.dropped);
      this.matches.splice(0, firstKept < 0 ? this.matches.length : firstKept);
    }
  }

  /**
   * Adds text to the newest line, for output that arrives in pieces (a run's chunks end mid-line).
   * Longer text can only start to match the search, never stop, so only a new match is recorded.
   */
  appendToLast(text: string): void {
    const position = this.lines.length - 1;
    const last = this.lines[position];
    if (!last) return;
    const grown = { ...last, message: last.message + text };
    this.lines[position] = grown;
    const index = this.dropped + position;
    if (this.search && this.matches.at(-1) !== index && matches(grown, this.search)) this.matches.push(index);
  }

  /** A new search tests every line once; later appends test only themselves. */
  setSearch(text: string): void {
    this.search = text.toLowerCase();
    this.matches = [];
    if (!this.search) return;
    for (let i = 0; i < this.lines.length; i++) {
      if (matches(this.lines[i]!, this.search)) this.matches.push(this.dropped + i);
    }
  }

  /** The `index`-th visible line. */
  at(index: number): LogLine | undefined {
    if (!this.search) return this.lines[index];
    const absolute = this.matches[index];
    return absolute === undefined ? undefined : this.lines[absolute - this.dropped];
  }

  clear(): void {
    this.lines = [];
    this.matches = [];
    this.dropped = 0;
  }
}

function matches(line: LogLine, lowerCaseSearch: string): boolean {
  return line.message.toLowerCase().includes(lowerCaseSearch);
}
