/** How a BatchBuffer writes and when. */
export interface BatchBufferOptions<T> {
  /** Longest a row waits in memory before its batch is written. */
  intervalMs: number;
  /** Rows per write; reaching it writes at once. */
  maxRows: number;
  /** Rows kept while writes fail (the database away); beyond it the oldest are dropped. */
  maxPending: number;
  /** One write of one batch (one multi-row INSERT). */
  write(rows: T[]): Promise<void>;
  /** A write failed (the rows stay for the next attempt), or rows were dropped (`dropped` > 0). */
  onError(error: unknown, dropped: number): void;
}

/**
 * Rows written off the request path: push() only appends to an array; a timer (at most
 * `intervalMs` after the first row of a batch) or a full batch (`maxRows`) writes them, one write
 * at a time. A failed write keeps its rows for the next attempt. A process killed without close()
 * loses what had not been written yet: at most `intervalMs` of rows, plus the write under way.
 */
export class BatchBuffer<T> {
  private rows: T[] = [];
  private timer?: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();
  private queued = false;
  private closed = false;

  constructor(private readonly options: BatchBufferOptions<T>) {}

  /** Rows waiting to be written. */
  get pending(): number {
    return this.rows.length;
  }

  push(row: T): void {
    this.rows.push(row);
    if (this.closed || this.rows.length >= this.options.maxRows) {
      void this.flush();
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => void this.flush(), this.options.intervalMs);
      this.timer.unref();
    }
  }

  /** Writes every row pushed so far; resolves once they are written (or their write failed). Never rejects. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queued) return this.writing;
    this.queued = true;
    this.writing = this.writing.then(() => {
      this.queued = false;
      return this.writeAll();
    });
    return this.writing;
  }

  /** Writes what is left; rows pushed later are written at once, each on its own. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private async writeAll(): Promise<void> {
    while (this.rows.length > 0) {
      const batch = this.rows.splice(0, this.options.maxRows);
      try {
        await this.options.write(batch);
      } catch (e) {
        this.rows = batch.concat(this.rows);
        const dropped = Math.max(0, this.rows.length - this.options.maxPending);
        if (dropped > 0) this.rows.splice(0, dropped);
        this.options.onError(e, dropped);
        if (!this.closed && this.timer === undefined) {
          this.timer = setTimeout(() => void this.flush(), this.options.intervalMs);
          this.timer.unref();
        }
        return;
      }
    }
  }
}
