import { ApiError } from '../errors.js';
import type { Database, Session } from '../storage/database.js';
import { StatementTimeoutError } from '../storage/reader-pool.js';
import { LaneFullError } from '../workload/fair-lane.js';

/**
 * Results work (pages, sorts, filters, Parquet files) on the readers shared fairly between
 * keys (Database.readResults, DESIGN §12), its refusals in the client's terms: too many of
 * this key's requests waiting (429), or a statement past the time limit (503).
 */
export async function readResults<T>(
  database: Database,
  reader: string,
  work: (session: Session) => Promise<T>,
): Promise<T> {
  try {
    return await database.readResults(reader, work);
  } catch (error) {
    if (error instanceof LaneFullError)
      throw new ApiError(
        'rate_limited',
        `this key has ${error.limit} results requests waiting for the database already; wait for them to finish before asking for more`,
        { 'Retry-After': '1' },
      );
    if (error instanceof StatementTimeoutError)
      throw new ApiError(
        'unavailable',
        `reading these rows took longer than the limit of ${error.limitMs / 1000} seconds (RESULTS_TIMEOUT_SECONDS) and was stopped; ask for fewer rows or columns, or without sort_by or filters`,
      );
    throw error;
  }
}
