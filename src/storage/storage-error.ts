/**
 * Failures inside DuckDB, wrapped at the storage boundary so the layers above never handle
 * the driver's own error type, nor read DuckDB's wording: this file is the one place that
 * reads DuckDB's error texts and turns them into types. A DuckDB upgrade that rewords a
 * message breaks this file only (test/storage/storage-error.test.ts pins each text against a
 * real DuckDB). `message` keeps DuckDB's text for the logs; it is never sent to clients as is.
 */
export class StorageError extends Error {
  override name = 'StorageError';

  constructor(
    message: string,
    readonly sql?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The disk under the database is full: a write failed, the transaction rolled back. */
export class StorageFullError extends StorageError {
  override name = 'StorageFullError';
}

/** Another process holds the database file. */
export class DatabaseLockedError extends StorageError {
  override name = 'DatabaseLockedError';
}

/** DuckDB's memory limit (DUCKDB_MEMORY_LIMIT) was reached; the statement was undone. */
export class OutOfMemoryError extends StorageError {
  override name = 'OutOfMemoryError';
}

/** The statement was interrupted (a cancel, a client that left, shutdown). */
export class InterruptedError extends StorageError {
  override name = 'InterruptedError';
}

/** What DuckDB's CSV reader found wrong with a file, in our words. */
export type CsvProblem =
  | 'field-count'
  | 'unterminated-quote'
  | 'text-after-quote'
  | 'line-too-long'
  | 'encoding'
  | 'line-ends'
  | 'unreadable';

/**
 * DuckDB's CSV reader refused a file. `line` is DuckDB's own count, which counts records
 * rather than physical lines and is only indicative in a parallel read: callers that must
 * name the line find it themselves (see src/tables/csv-rejects.ts).
 */
export class CsvReadError extends StorageError {
  override name = 'CsvReadError';

  constructor(
    message: string,
    readonly problem: CsvProblem,
    readonly line: number | undefined,
    sql?: string,
    options?: { cause?: unknown },
  ) {
    super(message, sql, options);
  }
}

/** A statement's `raise(payload)` fired: the SQL itself refused a value. */
export class RaisedError extends StorageError {
  override name = 'RaisedError';

  constructor(
    message: string,
    readonly payload: string,
    sql?: string,
    options?: { cause?: unknown },
  ) {
    super(message, sql, options);
  }
}

/** Marks the errors our own SQL raises, so they are never taken for DuckDB's. */
const RAISE_MARK = 'service-raise:';

/**
 * SQL that fails the statement with `payload` (letters, digits, `_`, `:`, `-` and spaces),
 * which the caller gets back as `RaisedError.payload`.
 */
export function raise(payload: string): string {
  if (!/^[\w:\- ]*$/.test(payload))
    throw new Error(`raise payload ${JSON.stringify(payload)} has other characters`);
  return `error('${RAISE_MARK}${payload}')`;
}

/** The operating system's words for ENOSPC and EDQUOT, which DuckDB passes on as text only. */
const DISK_FULL = /No space left on device|Disk quota exceeded/i;

/** DuckDB's CSV reader messages (1.5), each with the problem it names. */
const CSV_PROBLEMS: [RegExp, CsvProblem][] = [
  [/Expected Number of Columns: \d+ Found: \d+/, 'field-count'],
  [/Value with unterminated quote found/, 'unterminated-quote'],
  [/Maximum line size of \d+ bytes exceeded/, 'line-too-long'],
  // A record longer than the reader's buffer (32 MiB), read without a rejects table.
  [/does not support a full read on this file/, 'line-too-long'],
  [/Invalid unicode \(byte sequence mismatch\)/i, 'encoding'],
  [/CSV Parser state machine reached an invalid state/, 'line-ends'],
];

function csvProblem(message: string): CsvProblem | undefined {
  for (const [pattern, problem] of CSV_PROBLEMS) if (pattern.test(message)) return problem;
  return /CSV Error on Line: \d+/.test(message) ? 'unreadable' : undefined;
}

export function wrapStorageError(error: unknown, sql?: string): StorageError {
  if (error instanceof StorageError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const options = { cause: error };
  if (DISK_FULL.test(message)) return new StorageFullError(message, sql, options);
  const raised = message.indexOf(RAISE_MARK);
  if (raised >= 0) {
    const payload = (message.slice(raised + RAISE_MARK.length).split('\n')[0] ?? '').trim();
    return new RaisedError(message, payload, sql, options);
  }
  if (/^INTERRUPT Error/m.test(message)) return new InterruptedError(message, sql, options);
  if (/^Out of Memory Error/m.test(message)) return new OutOfMemoryError(message, sql, options);
  const problem = csvProblem(message);
  if (problem) {
    const line = /CSV Error on Line: (\d+)/.exec(message)?.[1];
    return new CsvReadError(message, problem, line ? Number(line) : undefined, sql, options);
  }
  return new StorageError(message, sql, options);
}

/** An error of opening the database file: another process holding it is said in words. */
export function wrapOpenError(error: unknown, path: string): StorageError {
  const message = error instanceof Error ? error.message : String(error);
  if (/Could not set lock on file/i.test(message)) {
    const holder = /held in (.+)$/m.exec(message)?.[1] ?? 'another process';
    return new DatabaseLockedError(
      `the database file ${path} is already in use by ${holder}; stop that process or use another DATA_DIR`,
    );
  }
  return wrapStorageError(error);
}

/** Whether a failed file-system call (Node's errno error) or database write ran out of disk. */
export function isDiskFull(error: unknown): boolean {
  if (error instanceof StorageFullError) return true;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * DuckDB's own name for the kind of error (`Conversion`, `Out of Range`, `Binder`, `Parser`,
 * `Catalog`, `Invalid Input`, `Not implemented`, …): the words before ` Error:` at the start
 * of its message. The Postgres wire protocol (src/pgwire) turns it into a SQLSTATE.
 */
export function duckdbErrorType(error: StorageError): string | undefined {
  return /^([A-Za-z][A-Za-z ]{0,40}?) Error:/.exec(error.message)?.[1];
}
