import type { Parts, RowsBeingWritten } from './page-body.js';

/**
 * The rows of a long range written part after part, each part by one DuckDB statement into
 * a file of its own, and sent while it is written (each part's file read as it grows): the
 * socket is busy while DuckDB writes. At most `atOnce` parts are being written at a time,
 * and at most `window` parts are started beyond the last one taken (the one being sent, whose
 * taker removes the previous one before taking the next): at most `1 + window` parts are on
 * disk, so disk and memory stay bounded whatever the result's size.
 *
 * Measured (bench/whole-results.ts, 1,000,000 rows × 6 columns as one CSV, 100 MB):
 * one COPY of the whole range, then its file sent, took 1.45–1.65× DuckDB's COPY alone,
 * and the server's RSS grew by 70–110 MB meanwhile (DuckDB's parallel writer holds rows to
 * write them in order; the file grew in bursts of 10–40 MB); in parts of a row group, two at
 * a time, each sent once written, 1.2–1.75×; in one part sent while written, ~25% less wall
 * time and ~30% less CPU than that (tuning.ts, RESULT_PART_BYTES).
 */
export class RowsInParts implements Parts {
  private readonly started: RowsBeingWritten[] = [];
  private writing = 0;
  private taken = 0;
  private stopped = false;

  constructor(
    /** How many parts there are. */
    readonly count: number,
    private readonly write: (part: number) => RowsBeingWritten,
    private readonly atOnce: number,
    private readonly window: number,
  ) {
    this.fill();
  }

  /**
   * Part `index`, being written or written; take them in order (taking one again returns
   * the same). Its file is then the taker's to remove, once written.
   */
  part(index: number): RowsBeingWritten {
    this.taken = Math.max(this.taken, index + 1);
    this.fill();
    return this.started[index] as RowsBeingWritten;
  }

  /** The first part, to look at without taking it: discard() still removes it if nobody takes it. */
  get first(): RowsBeingWritten {
    return this.started[0] as RowsBeingWritten;
  }

  /** Starts no more parts, waits for those started and not taken, and removes their files. */
  async discard(): Promise<void> {
    this.stopped = true;
    const left = this.started.slice(this.taken);
    this.taken = this.started.length;
    await Promise.all(
      left.map((part) =>
        part.written.then(
          (file) => file.discard(),
          () => undefined,
        ),
      ),
    );
  }

  private fill(): void {
    while (
      !this.stopped &&
      this.started.length < this.count &&
      this.writing < this.atOnce &&
      this.started.length - this.taken < this.window
    ) {
      this.writing++;
      const part = this.write(this.started.length);
      this.started.push(part);
      // Whoever takes the part sees its failure; here only its end matters.
      part.written
        .catch(() => undefined)
        .finally(() => {
          this.writing--;
          this.fill();
        });
    }
  }
}
