import { DuckDBDataChunk as Chunk, type DuckDBDataChunk, type DuckDBType, VARCHAR } from '@duckdb/node-api';
import type { Account } from '../auth/account.js';
import type { Logger } from '../log.js';
import type { Queries } from '../queries/queries.js';
import type { Database } from '../storage/database.js';
import {
  type BackendWriter,
  commandComplete,
  errorResponse,
  MESSAGE,
  parameterStatus,
  type TransactionStatus,
} from './backend-messages.js';
import type { StatementInterrupts } from './cancel.js';
import type { CatalogQueries } from './catalog-queries.js';
import { Portal } from './portal.js';
import { describeStatement, type Lane, type StatementShape, type WireParameter } from './run-statement.js';
import type { SessionCommand } from './session-commands.js';
import type { SessionSettings } from './session-settings.js';
import { errorFields, SQLSTATE, WireError } from './sql-errors.js';
import { type Statement, tokens } from './sql-text.js';
import { MAX_CACHED_SQL, type SqlShape, type StatementCache } from './statement-cache.js';

/**
 * One authenticated session: its settings, its transaction state (as PostgreSQL keeps it,
 * though every statement only reads), its portals and prepared statements, and the two ways
 * a statement runs: a query goes to the catalog (catalog-queries.ts) or through the sandbox
 * to DuckDB (run-statement.ts); a session command is answered here.
 */

export interface SessionDeps {
  database: Database;
  /** A users' slot of the key for each statement's run (Executions.inUsersLane). */
  lane: Lane;
  queries: Queries;
  catalog: CatalogQueries;
  cache: StatementCache;
  logger: Logger;
  /** QUERY_TIMEOUT_SECONDS, in ms: the statement timeout's ceiling. */
  queryTimeoutMs: number;
}

/** A query ready to run: where it runs, and its SQL there. */
export type PlannedQuery =
  /** `constant`: reads no table and calls only deterministic functions (statement-cache.ts). */
  | { kind: 'data'; sql: string; constant?: boolean }
  | { kind: 'catalog'; sql: string }
  | { kind: 'rows'; columns: string[]; rows: (string | null)[][] };

type TransactionState = 'idle' | 'block' | 'failed';

export class WireSession {
  transaction: TransactionState = 'idle';
  /** Portals by name ('' the unnamed one); DECLARE's cursors are portals too, as in PostgreSQL. */
  readonly portals = new Map<string, Portal>();
  /** Portals opened inside the transaction block, closed at its end. */
  private readonly transactionPortals = new Set<string>();
  /** DISCARD ALL also forgets the extended protocol's statements and portals. */
  onDiscard: () => void = () => undefined;

  constructor(
    readonly account: Account,
    readonly settings: SessionSettings,
    readonly writer: BackendWriter,
    readonly interrupts: StatementInterrupts,
    readonly deps: SessionDeps,
    readonly processId: number,
  ) {}

  get status(): TransactionStatus {
    return this.transaction === 'idle' ? 'I' : this.transaction === 'block' ? 'T' : 'E';
  }

  /** The statement timeout now: the session's statement_timeout, at most QUERY_TIMEOUT_SECONDS. */
  get timeoutMs(): number {
    const own = this.settings.statementTimeoutMs;
    return own > 0 ? Math.min(own, this.deps.queryTimeoutMs) : this.deps.queryTimeoutMs;
  }

  /** Decides where a query runs; a refusal throws (SqlRefused, WireError). */
  async plan(statement: Statement, parameters: boolean): Promise<PlannedQuery> {
    const catalog = await this.deps.catalog.plan(this, statement.text);
    if (catalog) return catalog;
    const shape = await this.shape(statement.text);
    const key = `${parameters ? 1 : 0}\u0000${statement.text}`;
    const kept = shape.tableFree ? this.deps.cache.sandboxedSql(key) : undefined;
    const sandboxed =
      kept ?? (await this.deps.queries.sandboxedSql(this.account, statement.text, { parameters }));
    if (shape.tableFree && !kept) this.deps.cache.keepSandboxed(key, sandboxed);
    return { kind: 'data', sql: sandboxed.sql, constant: shape.constant && !parameters };
  }

  /** Whether SQL reads no table (only such SQL can: a FROM is a table or a table function). */
  private async shape(text: string): Promise<SqlShape> {
    const none = { tableFree: false, constant: false };
    if (text.length > MAX_CACHED_SQL) return none;
    const known = this.deps.cache.shapes.get(text);
    if (known) return known;
    const readsSomething = tokens(text).some((t) => t.kind === 'word' && t.text === 'from');
    const shape = readsSomething ? none : await this.deps.catalog.shape(text);
    this.deps.cache.shapes.set(text, shape);
    return shape;
  }

  /** Opens a planned query's result with these parameters and result formats. */
  async open(
    planned: PlannedQuery,
    parameters: readonly WireParameter[],
    formats: readonly number[],
  ): Promise<Portal> {
    if (planned.kind === 'catalog')
      return this.deps.catalog.open(planned.sql, parameters, formats, this.interrupts);
    if (planned.kind === 'rows') return rowsPortal(planned.columns, planned.rows, formats);
    const { cache } = this.deps;
    return Portal.open(
      this.deps.database,
      this.deps.lane,
      {
        account: this.account,
        sql: planned.sql,
        parameters,
        interrupts: this.interrupts,
        renderInSql: !cache.resultWasSmall(planned.sql),
      },
      formats,
      (values) => cache.keepResultSize(planned.sql, values),
    );
  }

  /** A planned query's parameters and columns, without running it. */
  describe(
    planned: PlannedQuery & { kind: 'data' | 'catalog' },
    parameterOids: readonly number[],
  ): Promise<StatementShape> {
    if (planned.kind === 'catalog') return this.deps.catalog.describe(planned.sql, this.interrupts);
    return describeStatement(this.deps.database, planned.sql, parameterOids, this.interrupts);
  }

  /** Keeps a portal by name, closing the one it replaces. */
  keepPortal(name: string, portal: Portal): void {
    this.portals.get(name)?.close();
    this.portals.set(name, portal);
    if (this.transaction !== 'idle') this.transactionPortals.add(name);
  }

  closePortal(name: string): void {
    this.portals.get(name)?.close();
    this.portals.delete(name);
    this.transactionPortals.delete(name);
  }

  closeAllPortals(): void {
    for (const portal of this.portals.values()) portal.close();
    this.portals.clear();
    this.transactionPortals.clear();
  }

  /** A transaction block ends: its portals close (cursors declared outside one stay, as WITH HOLD). */
  endTransaction(): void {
    for (const name of this.transactionPortals) this.closePortal(name);
    this.transaction = 'idle';
  }

  /** ErrorResponse for a failed statement; inside a block the transaction is now failed. */
  fail(error: unknown, offset = 0): void {
    const fields = errorFields(error, offset);
    if (fields.code === SQLSTATE.internal)
      this.deps.logger.error({ err: error }, 'postgres wire: statement failed');
    errorResponse(this.writer, fields);
    if (this.transaction === 'block') this.transaction = 'failed';
    if (fields.severity === 'FATAL') throw new SessionEnded();
  }

  /** ParameterStatus for reported settings a SET changed. */
  reportChanges(): void {
    for (const [name, value] of this.settings.takeChanges()) parameterStatus(this.writer, name, value);
  }

  /** Runs a session command; writes its rows (SHOW, FETCH) and its CommandComplete. */
  async command(command: SessionCommand): Promise<void> {
    const w = this.writer;
    switch (command.kind) {
      case 'begin':
        if (this.transaction !== 'idle') notice(w, '25001', 'there is already a transaction in progress');
        else this.transaction = 'block';
        return commandComplete(w, command.tag);
      case 'commit': {
        if (this.transaction === 'idle') notice(w, '25P01', 'there is no transaction in progress');
        const failed = this.transaction === 'failed';
        this.endTransaction();
        return commandComplete(w, failed ? 'ROLLBACK' : 'COMMIT');
      }
      case 'rollback':
        if (this.transaction === 'idle') notice(w, '25P01', 'there is no transaction in progress');
        this.endTransaction();
        return commandComplete(w, 'ROLLBACK');
      case 'savepoint':
        if (this.transaction === 'idle')
          throw new WireError(
            SQLSTATE.noActiveTransaction,
            `${command.tag} can only be used in transaction blocks`,
          );
        if (command.tag === 'ROLLBACK') this.transaction = 'block';
        return commandComplete(w, command.tag);
      case 'set':
        this.settings.set(command.name, command.value);
        this.reportChanges();
        return commandComplete(w, command.value === undefined ? 'RESET' : 'SET');
      case 'ignored-set':
        return commandComplete(w, 'SET');
      case 'reset-all':
        for (const { name } of this.settings.all()) {
          try {
            this.settings.set(name, undefined);
          } catch {
            // Read-only parameters keep their value.
          }
        }
        this.reportChanges();
        return commandComplete(w, 'RESET');
      case 'discard-all':
        if (this.transaction !== 'idle')
          throw new WireError('25001', 'DISCARD ALL cannot run inside a transaction block');
        this.closeAllPortals();
        this.onDiscard();
        return commandComplete(w, 'DISCARD ALL');
      case 'show':
      case 'show-all':
        return this.show(command);
      case 'declare':
        return this.declare(command.name, command.query);
      case 'fetch':
        return this.fetchCursor(command.name, command.count, command.move);
      case 'close':
        if (command.name === undefined) this.closeAllPortals();
        else if (!this.portals.has(command.name)) throw cursorMissing(command.name);
        else this.closePortal(command.name);
        return commandComplete(w, 'CLOSE CURSOR');
      case 'deallocate':
        return commandComplete(w, command.name === undefined ? 'DEALLOCATE ALL' : 'DEALLOCATE');
      case 'unsupported':
        throw new WireError(SQLSTATE.featureNotSupported, command.message);
    }
  }

  private async show(command: { kind: 'show'; name: string } | { kind: 'show-all' }): Promise<void> {
    const planned: PlannedQuery =
      command.kind === 'show-all'
        ? {
            kind: 'rows',
            columns: ['name', 'setting'],
            rows: this.settings.all().map((s) => [s.name, s.setting]),
          }
        : (() => {
            const { column, value } = this.settings.show(command.name);
            return { kind: 'rows', columns: [column], rows: [[value]] };
          })();
    const portal = await this.open(planned, [], []);
    portal.writeDescription(this.writer);
    await portal.fetch(this.writer, 0);
    commandComplete(this.writer, 'SHOW');
  }

  private async declare(name: string, query: Statement): Promise<void> {
    if (this.portals.has(name))
      throw new WireError(SQLSTATE.duplicateCursor, `cursor "${name}" already exists`);
    const planned = await this.plan(query, false);
    this.keepPortal(name, await this.open(planned, [], []));
    commandComplete(this.writer, 'DECLARE CURSOR');
  }

  private async fetchCursor(name: string, count: number, move: boolean): Promise<void> {
    const portal = this.portals.get(name);
    if (!portal) throw cursorMissing(name);
    if (move) {
      // Rows skipped are still read: a cursor reads forward only.
      const { rows } = await portal.fetch(undefined, count);
      return commandComplete(this.writer, `MOVE ${rows}`);
    }
    portal.writeDescription(this.writer);
    const { rows } = await portal.fetch(this.writer, count);
    commandComplete(this.writer, `FETCH ${rows}`);
  }
}

/** The session is over (a FATAL error was sent): the connection closes. */
export class SessionEnded extends Error {
  override name = 'SessionEnded';
}

const cursorMissing = (name: string) =>
  new WireError(SQLSTATE.invalidCursorName, `cursor "${name}" does not exist`);

function notice(w: BackendWriter, code: string, message: string): void {
  errorResponse(w, { severity: 'WARNING', code, message }, MESSAGE.notice);
}

/** Rows made here (SHOW's), as a portal: text columns in one chunk. */
function rowsPortal(columns: string[], rows: (string | null)[][], formats: readonly number[]): Portal {
  const types: DuckDBType[] = columns.map(() => VARCHAR);
  let sent = false;
  return Portal.over(
    {
      columns: columns.map((name, i) => ({ name, type: types[i] as DuckDBType })),
      next: async (): Promise<DuckDBDataChunk | null> => {
        if (sent || rows.length === 0) return null;
        sent = true;
        const chunk = Chunk.create(types, rows.length);
        columns.forEach((_, i) => {
          chunk.setColumnValues(
            i,
            rows.map((row) => row[i] ?? null),
          );
        });
        return chunk;
      },
    },
    formats,
  );
}
