import { ApiError } from '../../errors.js';

/** Why users' SQL was refused, for callers that answer in another protocol (src/pgwire). */
export type RefusalKind = 'syntax' | 'unknown-table' | 'too-long' | 'refused';

/**
 * A refusal inside the sandbox, with where in the SQL it applies: a byte offset into its UTF-8
 * (the tree's `query_location`), a count of code points (the position of DuckDB's parser
 * errors), or a JavaScript string index (the estimate of the parse's cost, parse-cost.ts).
 */
export class SqlRefusal extends Error {
  override name = 'SqlRefusal';

  constructor(
    message: string,
    readonly location: number | undefined,
    readonly unit: 'byte' | 'code point' | 'index' = 'byte',
    readonly kind: RefusalKind = 'refused',
  ) {
    super(message);
  }
}

/** A refusal as the service answers it (a 400 for the HTTP API): why, and where in the SQL (0-based, as JavaScript indexes it). */
export class SqlRefused extends ApiError {
  constructor(
    message: string,
    readonly kind: RefusalKind,
    readonly position: number | undefined,
  ) {
    super('bad_request', message);
  }
}

/** `refusal` as the service answers it for `sql`: its message ends with `at position N` when it has one. */
export function refusedIn(refusal: SqlRefusal, sql: string): SqlRefused {
  const position = positionIn(refusal, sql);
  const message = position === undefined ? refusal.message : `${refusal.message} at position ${position}`;
  return new SqlRefused(message, refusal.kind, position);
}

/**
 * Where the refusal is, counting the user's SQL from 0 the way JavaScript indexes a string (as
 * the filter language's positions do): `sql.indexOf(...)` of what is refused.
 */
function positionIn(refusal: SqlRefusal, sql: string): number | undefined {
  if (refusal.location === undefined) return undefined;
  const before =
    refusal.unit === 'index'
      ? sql.slice(0, refusal.location)
      : refusal.unit === 'byte'
        ? Buffer.from(sql, 'utf8').subarray(0, refusal.location).toString('utf8')
        : Array.from(sql).slice(0, refusal.location).join('');
  return before.length;
}
