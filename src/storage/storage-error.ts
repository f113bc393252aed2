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

export function wrapStorageError(error: unknown, sql?: string): StorageError {
  if (error instanceof StorageError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StorageError(message, sql, { cause: error });
}
