/**
 * A failure inside DuckDB, wrapped at the storage boundary so the layers above never
 * handle the driver's own error type. `message` keeps DuckDB's text for the logs; it is
 * never sent to clients as is.
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

/** The operating system's words for ENOSPC and EDQUOT, which DuckDB passes on as text only. */
const DISK_FULL = /No space left on device|Disk quota exceeded/i;

export function wrapStorageError(error: unknown, sql?: string): StorageError {
  if (error instanceof StorageError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (DISK_FULL.test(message)) return new StorageFullError(message, sql, { cause: error });
  return new StorageError(message, sql, { cause: error });
}

/** Whether a failed file-system call (Node's errno error) or database write ran out of disk. */
export function isDiskFull(error: unknown): boolean {
  if (error instanceof StorageFullError) return true;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}
