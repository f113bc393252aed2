/**
 * Exit codes scripts can rely on. Everything the command line ends with maps to one of them
 * in main.ts, by the type of what was thrown.
 */
export const EXIT = {
  /** Done: the server stopped cleanly on a signal, or the command did all it was asked. */
  ok: 0,
  /** A failure while running: a saved query failed, the data directory is not writable, … */
  failure: 1,
  /** A usage or configuration error: unknown command or flag, a bad value. Nothing was changed. */
  usage: 2,
  /** The database file is held by another process (a running server); try again later. */
  databaseInUse: 3,
  /** `serve` cannot listen on its address: the port is taken, or needs privileges. */
  portUnavailable: 4,
} as const;

/** A failure the command reports in one line, with its exit code. */
export class CliError extends Error {
  override name = 'CliError';

  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}
