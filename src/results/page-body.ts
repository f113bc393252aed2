import fs from 'node:fs/promises';

/**
 * The body of a results answer, one closed type of three kinds:
 * - `bytes`: in memory (a small page, an envelope without rows); sent as often as asked;
 * - `file`: files DuckDB wrote (a large page, a Parquet file), sent once and then removed;
 * - `parts`: a long range DuckDB is writing part after part (rows-in-parts.ts), each part sent
 *   while it is written; how long it is becomes known only once sent.
 * Each has its size (when known before sending) and `discard()`, which removes its files. The
 * one place that tells the kinds apart is the sender (src/http/send-answer.ts).
 */

export type PageBody = BytesBody | FileBody | PartsBody;

/** What every kind of body does. */
interface Body {
  /** The body's bytes, when known before it is sent: not for parts still being written. */
  readonly size: number | undefined;
  /** Whether it can be sent again (so an answer cache may keep it): only bytes in memory can. */
  readonly reusable: boolean;
  /** These rows with the text before and after them (which may depend on the rows' bytes): the whole body. */
  framed(head: string, tail: (rowsBytes: number) => string): PageBody;
  /** Removes the body's files, those written and those still being written. Never rejects. */
  discard(): Promise<void>;
}

const EMPTY = Buffer.alloc(0);

export class BytesBody implements Body {
  readonly kind = 'bytes';
  readonly reusable = true;

  constructor(readonly bytes: Buffer) {}

  get size(): number {
    return this.bytes.length;
  }

  framed(head: string, tail: (rowsBytes: number) => string): BytesBody {
    return new BytesBody(ownedBytes(head, this.bytes, tail(this.bytes.length)));
  }

  discard(): Promise<void> {
    return Promise.resolve();
  }
}

export const NO_ROWS = new BytesBody(EMPTY);

/**
 * The rows between their head and tail, in memory of their own, for an answer a cache keeps.
 * Buffer.concat and Buffer.from put a result under 4 KB into a shared 8 KB pool slab, and a
 * kept view keeps its whole slab alive, while the cache counts the answer at its length. Each
 * answer cut its head, rows, tail and their join from the pool, so few kept answers shared a
 * slab. Measured (2026-11-23, docs/library-notes.md): after `LOAD_REQUESTS=16000 npm run
 * test:load`, 3,102 kept answers held 2,229 slabs (17.4 MB; 11.5 MB of the live memory's
 * 12 MB growth over the phases, now 3 MB); 20,000 distinct one-row pages, counted 19.5 MB,
 * added 63 MB of live memory, now 29 MB. Head and tail are written straight into it.
 */
function ownedBytes(head: string, rows: Buffer, tail: string): Buffer {
  const headBytes = Buffer.byteLength(head);
  const bytes = Buffer.allocUnsafeSlow(headBytes + rows.length + Buffer.byteLength(tail));
  bytes.write(head, 0);
  rows.copy(bytes, headBytes);
  bytes.write(tail, headBytes + rows.length);
  return bytes;
}

/** A file as DuckDB wrote it. */
export interface WrittenFile {
  path: string;
  size: number;
}

export class FileBody implements Body {
  readonly kind = 'file';
  readonly reusable = false;

  constructor(
    /** The files, in order, as DuckDB wrote them. */
    readonly files: readonly WrittenFile[],
    /** The rows' bytes: the files' bytes less those after the last row (`trailingBytes`). */
    readonly rowsBytes: number,
    readonly head: Buffer = EMPTY,
    readonly tail: Buffer = EMPTY,
  ) {}

  /** Consecutive files of one page's rows, each ending in `trailingBytes` that are not rows. */
  static written(files: readonly WrittenFile[], trailingBytes: number): FileBody {
    const size = files.reduce((sum, file) => sum + file.size, 0);
    return new FileBody(files, Math.max(0, size - trailingBytes));
  }

  get size(): number {
    return this.head.length + this.rowsBytes + this.tail.length;
  }

  framed(head: string, tail: (rowsBytes: number) => string): FileBody {
    return new FileBody(this.files, this.rowsBytes, Buffer.from(head), Buffer.from(tail(this.rowsBytes)));
  }

  /**
   * Rows of at most `maxBytes` are read into memory and their files removed: a small page is
   * kept as bytes (and its answer cached).
   */
  async inMemoryIfAtMost(maxBytes: number): Promise<PageBody> {
    if (this.rowsBytes > maxBytes) return this;
    try {
      const contents = await Promise.all(this.files.map((file) => fs.readFile(file.path)));
      const rows = Buffer.concat(contents).subarray(0, this.rowsBytes);
      return new BytesBody(this.size === rows.length ? rows : Buffer.concat([this.head, rows, this.tail]));
    } finally {
      await this.discard();
    }
  }

  /**
   * One unlink per file: `fs.rm` first runs lstat on the main thread, which took 150 ms of
   * it over 120 files in a profile of bench/whole-results.ts.
   */
  async discard(): Promise<void> {
    await Promise.all(this.files.map((file) => unlinkIfThere(file.path)));
  }
}

/**
 * Never rejects: files are removed on the way out (a client gone, a timer), where a rejection
 * would go unhandled. A file that cannot be removed stays in DATA_DIR/tmp, which the next
 * start empties.
 */
export async function unlinkIfThere(file: string): Promise<void> {
  await fs.unlink(file).catch(() => undefined);
}

/**
 * A file DuckDB is writing now, whose rows can be sent while it writes the rest (rows-file.ts
 * starts it; the sender reads it as it grows). The file exists, empty, before DuckDB opens it.
 */
export interface RowsBeingWritten {
  path: string;
  /** Settles once the file exists. */
  created: Promise<void>;
  /** The file as written, once DuckDB is done; rejects, the file removed, if the statement fails. */
  written: Promise<FileBody>;
  /** Bytes at the file's end that are not rows (sent by no reader). */
  trailing: number;
}

/** A long range's parts, in order (rows-in-parts.ts). */
export interface Parts {
  readonly count: number;
  /** Part `index`, being written or written: from then on its file is the taker's to remove. */
  part(index: number): RowsBeingWritten;
  /** Starts no more parts and removes the files of those not taken. */
  discard(): Promise<void>;
}

export class PartsBody implements Body {
  readonly kind = 'parts';
  readonly reusable = false;
  readonly size = undefined;

  constructor(
    readonly parts: Parts,
    /** What goes between two parts' rows (the format's separator). */
    readonly separator: Buffer,
    readonly head: Buffer = EMPTY,
    /** The text after the rows, given their bytes (known once they are sent). */
    readonly tail: (rowsBytes: number) => string = () => '',
  ) {}

  framed(head: string, tail: (rowsBytes: number) => string): PartsBody {
    return new PartsBody(this.parts, this.separator, Buffer.from(head), tail);
  }

  discard(): Promise<void> {
    return this.parts.discard();
  }
}
