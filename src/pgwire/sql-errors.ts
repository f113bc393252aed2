import { ApiError } from '../errors.js';
import { SqlRefused } from '../queries/sandbox/refusals.js';
import { binderCandidates, notFoundIn } from '../storage/binder-hints.js';
import { DatabaseClosingError } from '../storage/database.js';
import {
  duckdbErrorType,
  InterruptedError,
  OutOfMemoryError,
  StorageError,
  StorageFullError,
} from '../storage/storage-error.js';
import type { ErrorFields } from './backend-messages.js';
import { SettingError } from './session-settings.js';

/**
 * Every failure a client can cause, as an ErrorResponse with PostgreSQL's SQLSTATE
 * (https://www.postgresql.org/docs/15/errcodes-appendix.html), chosen by the error's type.
 */

/** An error this layer raises itself, already in the protocol's terms. */
export class WireError extends Error {
  override name = 'WireError';
  constructor(
    readonly code: string,
    message: string,
    readonly extra: { detail?: string; hint?: string; position?: number; fatal?: boolean } = {},
  ) {
    super(message);
  }
}

export const SQLSTATE = {
  syntax: '42601',
  undefinedTable: '42P01',
  insufficientPrivilege: '42501',
  programLimit: '54000',
  featureNotSupported: '0A000',
  queryCanceled: '57014',
  adminShutdown: '57P01',
  outOfMemory: '53200',
  tooManyConnections: '53300',
  diskFull: '53100',
  protocolViolation: '08P01',
  invalidPassword: '28P01',
  inFailedTransaction: '25P02',
  noActiveTransaction: '25P01',
  invalidCursorName: '34000',
  duplicateCursor: '42P03',
  undefinedPreparedStatement: '26000',
  duplicatePreparedStatement: '42P05',
  invalidParameterValue: '22023',
  invalidTextRepresentation: '22P02',
  invalidBinaryRepresentation: '22P03',
  internal: 'XX000',
} as const;

const REFUSAL_CODES: Record<SqlRefused['kind'], string> = {
  syntax: SQLSTATE.syntax,
  'unknown-table': SQLSTATE.undefinedTable,
  'too-long': SQLSTATE.programLimit,
  refused: SQLSTATE.insufficientPrivilege,
};

/** DuckDB's error types (its own names, storage-error.ts) and the SQLSTATE each becomes. */
const DUCKDB_CODES: Record<string, string> = {
  Conversion: SQLSTATE.invalidTextRepresentation,
  'Out of Range': '22003',
  'Invalid Input': SQLSTATE.invalidParameterValue,
  Binder: '42000',
  Parser: SQLSTATE.syntax,
  Catalog: '42704',
  'Not implemented': SQLSTATE.featureNotSupported,
  Constraint: '23000',
  Permission: SQLSTATE.insufficientPrivilege,
  'Invalid type': '42804',
  Transaction: '25000',
  TransactionContext: '25000',
};

/**
 * What DuckDB did not find, and the SQLSTATE PostgreSQL gives the same mistake: by its type
 * alone a Binder error would be 42000 and a Catalog error 42704, and drivers pick their
 * exception by the code (psycopg2's `errors.UndefinedColumn`). A table of the query's own that
 * is not in its FROM is PostgreSQL's "missing FROM-clause entry", 42P01.
 */
const NOT_FOUND_CODES = { column: '42703', table: SQLSTATE.undefinedTable, function: '42883' } as const;

const firstLine = (message: string) => message.split('\n')[0] ?? message;

/** The ErrorResponse of a failure; `offset` is where the statement starts in the query string. */
export function errorFields(error: unknown, offset = 0): ErrorFields {
  if (error instanceof WireError) {
    return {
      severity: error.extra.fatal ? 'FATAL' : 'ERROR',
      code: error.code,
      message: error.message,
      ...(error.extra.detail !== undefined ? { detail: error.extra.detail } : {}),
      ...(error.extra.hint !== undefined ? { hint: error.extra.hint } : {}),
      ...(error.extra.position !== undefined ? { position: error.extra.position } : {}),
    };
  }
  if (error instanceof SqlRefused) {
    const suffix = ` at position ${error.position}`;
    const message =
      error.position !== undefined && error.message.endsWith(suffix)
        ? error.message.slice(0, -suffix.length)
        : error.message;
    return {
      severity: 'ERROR',
      code: REFUSAL_CODES[error.kind],
      message,
      ...(error.position !== undefined ? { position: offset + error.position + 1 } : {}),
    };
  }
  if (error instanceof SettingError)
    return { severity: 'ERROR', code: error.sqlState, message: error.message };
  if (error instanceof ApiError) {
    // The key's queue in the users' lane is full (MAX_QUEUED_QUERIES_PER_KEY): a limit, not a bad value.
    const code = error.code === 'rate_limited' ? '53400' : SQLSTATE.invalidParameterValue;
    return { severity: 'ERROR', code, message: error.message };
  }
  if (error instanceof DatabaseClosingError)
    return {
      severity: 'FATAL',
      code: SQLSTATE.adminShutdown,
      message: 'terminating connection: the service is shutting down',
    };
  if (error instanceof InterruptedError)
    return {
      severity: 'ERROR',
      code: SQLSTATE.queryCanceled,
      message: 'canceling statement due to user request',
    };
  if (error instanceof OutOfMemoryError)
    return { severity: 'ERROR', code: SQLSTATE.outOfMemory, message: firstLine(error.message) };
  if (error instanceof StorageFullError)
    return { severity: 'ERROR', code: SQLSTATE.diskFull, message: 'the disk under the database is full' };
  if (error instanceof StorageError) {
    const type = duckdbErrorType(error);
    const notFound = notFoundIn(error.message);
    // Only the binder's candidates from the statement's own tables: DuckDB's other suggestions
    // search the whole catalog and could name another account's private table (binder-hints.ts).
    const candidates = binderCandidates(error.message);
    const hint = candidates !== undefined ? `Did you mean ${candidates}?` : undefined;
    return {
      severity: 'ERROR',
      code:
        (notFound ? NOT_FOUND_CODES[notFound] : undefined) ??
        (type !== undefined ? DUCKDB_CODES[type] : undefined) ??
        SQLSTATE.internal,
      message: firstLine(error.message),
      ...(hint !== undefined ? { hint } : {}),
    };
  }
  return { severity: 'ERROR', code: SQLSTATE.internal, message: 'internal error' };
}
