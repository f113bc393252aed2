import {
  type DuckDBConnection,
  type DuckDBDataChunk,
  type DuckDBMaterializedResult,
  type DuckDBPreparedStatement,
  type DuckDBType,
  type DuckDBValue,
  JSDuckDBValueConverter,
} from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import { type CatalogChanges, changesTableRecords } from './catalog-changes.js';
import { StorageError, wrapStorageError } from './storage-error.js';

/**
 * One DuckDB connection as the layers above use it (Session), with what the database needs
 * to share it safely: statements kept prepared, interrupts that reach only the statement they
 * were meant for, and refusal at shutdown.
 */

export type SqlValue = DuckDBValue;

export interface QueryColumn {
  name: string;
  /** DuckDB's type name, as `typeof` would print it, e.g. `BIGINT`, `DECIMAL(18,3)`. */
  type: string;
}

export interface QueryResult {
  columns: QueryColumn[];
  /** Rows as arrays of JS values: BIGINT and HUGEINT as bigint, DECIMAL as number etc. */
  rows: unknown[][];
}

/** What the layers above see of a connection. */
export interface Session {
  run(sql: string, params?: readonly SqlValue[]): Promise<void>;
  /**
   * Runs a statement on DuckDB's worker threads only (`runOnWorkers` below): for a
   * statement of one task that runs while another such statement runs on its own thread.
   */
  runOnWorkers(sql: string, params?: readonly SqlValue[]): Promise<void>;
  /** Rows as objects keyed by column name, values as JS values (bigint for BIGINT). */
  all<T = Record<string, unknown>>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  query(sql: string, params?: readonly SqlValue[]): Promise<QueryResult>;
  /** The result as DuckDB materialized it: its columns and its chunks of DuckDB's own values. */
  chunks(sql: string): Promise<MaterializedRows>;
  /** Appends chunks of rows to a table through DuckDB's appender, in the connection's transaction if one is open. */
  append(schema: string, table: string, chunks: readonly DuckDBDataChunk[]): Promise<void>;
}

/** A materialized result's columns and chunks (`Session.chunks`). */
export interface MaterializedRows {
  columns: ResultColumnType[];
  chunks: DuckDBDataChunk[];
  rowCount: number;
}

export interface InterruptibleSession extends Session {
  /** Stops the statement running on this session; it then fails with a StorageError. */
  interrupt(): void;
  /** Prepares a query whose result is then read a chunk at a time (the Postgres wire protocol). */
  prepare(sql: string): Promise<PreparedQuery>;
}

export interface ResultColumnType {
  name: string;
  type: DuckDBType;
}

/** A prepared query: what it takes and what it gives, known before it runs. */
export interface PreparedQuery {
  /** Each `$n`'s type as DuckDB inferred it; undefined where it could not (`SELECT $1`). */
  readonly parameterTypes: readonly (DuckDBType | undefined)[];
  /** Result columns; a type undefined until the values are bound (`SELECT $1`). */
  readonly columns: readonly { name: string; type: DuckDBType | undefined }[];
  /** Binds the values (a type undefined: the value's own) and starts the query once. */
  stream(values: readonly SqlValue[], types: readonly (DuckDBType | undefined)[]): Promise<ResultStream>;
  /** Frees the statement; a result already started goes on. */
  close(): void;
}

/** A result read as DuckDB produces it, in chunks of up to 2,048 rows: memory stays bounded. */
export interface ResultStream {
  readonly columns: readonly ResultColumnType[];
  /** The next chunk, or null once the result is over. */
  next(): Promise<DuckDBDataChunk | null>;
}

/** Shutdown began: the statement was refused or interrupted; nothing of it was committed. */
export class DatabaseClosingError extends StorageError {
  override name = 'DatabaseClosingError';
  constructor(sql?: string, options?: { cause?: unknown }) {
    super('the database is closing: the service is shutting down', sql, options);
  }
}

/** Statements running now on every connection of the process, and who hears when none is left. */
let statementsRunning = 0;
const idleListeners = new Set<() => void>();

/**
 * Calls `listener` each time the last statement running in the process ends (the thread
 * keeper gives demoted threads their priority back then: src/workload/thread-priority.ts).
 * Returns the function that stops it.
 */
export function onStatementsIdle(listener: () => void): () => void {
  idleListeners.add(listener);
  return () => idleListeners.delete(listener);
}

function statementEnded(): void {
  if (--statementsRunning > 0) return;
  for (const listener of idleListeners) listener();
}

/** SQL texts that each connection keeps prepared once it has run them (see `reusable`). */
const REUSABLE = new Set<string>();

/**
 * Marks a constant statement with parameters as one to keep prepared on every connection
 * that runs it: each later run binds and executes, one task on libuv's pool instead of three
 * (DuckDB's node API extracts, prepares and executes a statement given values, each a pool
 * round trip). For statements run on every request or run (the sandbox's, an execution's
 * record); only for SQL that names no table whose columns may change while the service runs:
 * a kept statement outlives such a change. Measured on DuckDB 1.5.6 (docs/library-notes.md): the sandbox's parse,
 * 0.46 ms with `run(sql, values)`, 0.12 ms bound on a kept statement.
 */
export function reusable(sql: string): string {
  REUSABLE.add(sql);
  return sql;
}

/**
 * The chunks of a materialized result, taken synchronously: DuckDBResultReader fetches each
 * chunk, and the empty one that ends it, as a task on libuv's pool (2 round trips for a
 * one-row answer, 0.07 to 0.2 ms each on this machine), though the rows are in memory already.
 */
function chunksOf(result: DuckDBMaterializedResult) {
  const chunks = [];
  const count = result.chunkCount;
  for (let i = 0; i < count; i++) chunks.push(result.getChunk(i));
  return chunks;
}

/** The result's rows as arrays of JS values, as DuckDBResultReader's getRowsJS gives them. */
function rowsOf(result: DuckDBMaterializedResult): unknown[][] {
  const rows: unknown[][] = [];
  for (const chunk of chunksOf(result)) {
    for (const row of chunk.convertRows(JSDuckDBValueConverter)) rows.push(row);
  }
  return rows;
}

export class ConnectionSession implements InterruptibleSession {
  /** Reusable statements bound or running now: a second caller meanwhile prepares its own. */
  private readonly preparedBusy = new Set<string>();
  /** Statements started on this connection and not yet settled. */
  private statements = 0;
  /** Shutdown interrupts this connection: a statement that fails now failed for that. */
  private closing = false;
  private refusing = false;
  /** An interrupt was asked. DuckDB may keep one that came between statements for the next. */
  private interrupted = false;
  /** Given back (`handOver`): this object no longer touches the connection. */
  private released = false;
  /** A transaction of ours is open (BEGIN until COMMIT or ROLLBACK). */
  private inTransaction = false;
  /** A change of the table records is under way on this connection (`changes`). */
  private changing = false;

  constructor(
    readonly connection: DuckDBConnection,
    /** DuckDB's own worker threads (its `threads` less the one external thread). */
    private readonly workers: number,
    /** Reusable statements prepared on this connection, by SQL text. */
    private readonly prepared = new Map<string, DuckDBPreparedStatement>(),
    /** Told of changes of the table records, on connections that write (catalog-changes.ts). */
    private readonly changes?: CatalogChanges,
  ) {}

  /**
   * Whether the connection may serve another caller: no statement runs, and no interrupt
   * was asked that could stop the next caller's first statement.
   */
  get reusable(): boolean {
    return !this.busy && !this.interrupted && !this.refusing && !this.released;
  }

  /**
   * The connection, with its prepared statements, as a new session for the next caller. This
   * one is released: an interrupt or statement through it afterwards (a caller that kept a
   * reference) does nothing to the next caller's work.
   */
  handOver(): ConnectionSession {
    this.released = true;
    this.changeEnded();
    return new ConnectionSession(this.connection, this.workers, this.prepared, this.changes);
  }

  /** Closes the connection (DuckDB rolls back a transaction left open). */
  closeSync(): void {
    this.changeEnded();
    this.connection.closeSync();
  }

  /**
   * A statement runs on a thread of libuv's pool, and closing its connection waits for it:
   * on the main thread (closeSync) that blocks the event loop; in process.exit, which joins
   * the pool's threads, it keeps the process alive. So shutdown waits until this is false.
   */
  get busy(): boolean {
    return this.statements > 0;
  }

  /** From now on every statement fails at once (shutdown): a connection that is idle stays idle. */
  refuse(): void {
    this.refusing = true;
    this.closing = true;
  }

  /** Shutdown's interrupt: the statement fails with DatabaseClosingError. */
  interruptToClose(): void {
    if (this.released) return;
    this.closing = true;
    this.interrupted = true;
    this.connection.interrupt();
  }

  private async statement<T>(sql: string, run: () => Promise<T>): Promise<T> {
    if (this.released) throw new StorageError('the session was used after its work ended', sql);
    if (this.refusing) throw new DatabaseClosingError(sql);
    this.statements++;
    statementsRunning++;
    if (this.changes && !this.changing && changesTableRecords(sql)) {
      this.changing = true;
      this.changes.began();
    }
    try {
      const result = await run();
      if (/^\s*BEGIN\b/i.test(sql)) this.inTransaction = true;
      return result;
    } catch (error) {
      // Interrupted by shutdown, not failed: the caller answers "unavailable", not a bug.
      if (this.closing) throw new DatabaseClosingError(sql, { cause: error });
      throw wrapStorageError(error, sql);
    } finally {
      this.statements--;
      if (/^\s*(COMMIT|ROLLBACK|ABORT|END)\b/i.test(sql)) this.inTransaction = false;
      if (!this.inTransaction) this.changeEnded();
      statementEnded();
    }
  }

  private changeEnded(): void {
    if (!this.changing) return;
    this.changing = false;
    this.changes?.ended();
  }

  /** Runs one statement; its whole result is in memory (DuckDB materializes it). */
  private async execute(sql: string, params: readonly SqlValue[]): Promise<DuckDBMaterializedResult> {
    if (params.length === 0) return this.connection.run(sql);
    if (!REUSABLE.has(sql) || this.preparedBusy.has(sql)) return this.connection.run(sql, [...params]);
    this.preparedBusy.add(sql);
    try {
      let statement = this.prepared.get(sql);
      if (!statement) {
        statement = await this.connection.prepare(sql);
        this.prepared.set(sql, statement);
      }
      statement.bind([...params]);
      return await statement.run();
    } finally {
      this.preparedBusy.delete(sql);
    }
  }

  run(sql: string, params: readonly SqlValue[] = []): Promise<void> {
    return this.statement(sql, async () => {
      await this.execute(sql, params);
    });
  }

  /**
   * A statement normally runs on the connection's thread (one of libuv's pool), which takes
   * the statement's tasks from DuckDB's scheduler along with DuckDB's worker threads. For a
   * statement of one task (a scan of one row group: a page of a result) a worker often takes
   * that task first, and the connection's thread then waits for it by spinning (DuckDB's
   * PendingQueryResult::ExecuteInternal loops while "no tasks are available"). Here the
   * statement is only started; the workers run it, and this side looks at its state every
   * millisecond or two (duckdb_pending_execute_check_state, which runs no task). Two such
   * statements at once, one run here and one normally, then each have a thread and neither
   * spins: a walk through 25 pages of 41,666 rows × 6 columns cost DuckDB 550 ms of CPU
   * instead of 710, and took 518 ms instead of 594 (medians of 16 walks each, interleaved,
   * 2026-11-23; docs/library-notes.md). Without a worker thread (`threads` 1) the statement
   * runs normally.
   */
  runOnWorkers(sql: string, params: readonly SqlValue[] = []): Promise<void> {
    if (this.workers < 1) return this.run(sql, params);
    return this.statement(sql, async () => {
      const pending = await this.connection.start(sql, params.length > 0 ? [...params] : undefined);
      // Not in node-api's types: the C API's handle of the pending result, which node-api keeps.
      const handle = (pending as unknown as { pending_result?: duckdb.PendingResult }).pending_result;
      if (handle) await untilReady(handle);
      // Returns the result at once (or, without a handle, runs the statement as `run` would).
      await pending.getResult();
    });
  }

  all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return this.statement(sql, async () => {
      const result = await this.execute(sql, params);
      const names = result.deduplicatedColumnNames();
      return rowsOf(result).map((row) => {
        const object: Record<string, unknown> = {};
        for (let i = 0; i < names.length; i++) object[names[i] as string] = row[i];
        return object as T;
      });
    });
  }

  query(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    return this.statement(sql, async () => {
      const result = await this.execute(sql, params);
      const names = result.columnNames();
      const types = result.columnTypes();
      return {
        columns: names.map((name, i) => ({ name, type: String(types[i]) })),
        rows: rowsOf(result),
      };
    });
  }

  chunks(sql: string): Promise<MaterializedRows> {
    return this.statement(sql, async () => {
      const result = await this.connection.run(sql);
      const names = result.columnNames();
      const types = result.columnTypes();
      return {
        columns: names.map((name, i) => ({ name, type: types[i] as DuckDBType })),
        chunks: chunksOf(result),
        rowCount: result.rowCount,
      };
    });
  }

  append(schema: string, table: string, chunks: readonly DuckDBDataChunk[]): Promise<void> {
    return this.statement(`APPEND INTO ${schema}.${table}`, async () => {
      const appender = await this.connection.createAppender(table, schema);
      try {
        for (const chunk of chunks) appender.appendDataChunk(chunk);
      } finally {
        appender.closeSync();
      }
    });
  }

  interrupt(): void {
    if (this.released) return;
    this.interrupted = true;
    this.connection.interrupt();
  }

  async prepare(sql: string): Promise<PreparedQuery> {
    const statement = await this.statement(sql, () => this.connection.prepare(sql));
    const parameterTypes: (DuckDBType | undefined)[] = [];
    for (let i = 1; i <= statement.parameterCount; i++) {
      try {
        parameterTypes.push(statement.parameterType(i));
      } catch {
        parameterTypes.push(undefined); // node-api: "Failed to get param logical type"
      }
    }
    const columns: { name: string; type: DuckDBType | undefined }[] = [];
    for (let i = 0; i < statement.columnCount; i++) {
      let type: DuckDBType | undefined;
      try {
        type = statement.columnType(i);
      } catch {
        type = undefined; // node-api: "Unexpected type id: 0", a type that depends on a parameter
      }
      columns.push({ name: statement.columnName(i), type });
    }
    let closed = false;
    const close = () => {
      if (!closed) statement.destroySync();
      closed = true;
    };
    return {
      parameterTypes,
      columns,
      stream: (values, types) =>
        this.statement(sql, async () => {
          statement.bind(
            [...values],
            types.map((type) => type as DuckDBType),
          );
          const result = await statement.stream();
          close();
          const names = result.columnNames();
          const resultTypes = result.columnTypes();
          return {
            columns: names.map((name, i) => ({ name, type: resultTypes[i] as DuckDBType })),
            next: () =>
              this.statement(sql, async () => {
                const chunk = await result.fetchChunk();
                return chunk && chunk.rowCount > 0 ? chunk : null;
              }),
          };
        }),
      close,
    };
  }
}

/** DuckDB's worker threads: its `threads` setting counts the one external thread too. */
export async function workerThreads(connection: DuckDBConnection): Promise<number> {
  const reader = await connection.runAndReadAll(
    `SELECT current_setting('threads') - current_setting('external_threads') AS workers`,
  );
  return Number(reader.getRows()[0]?.[0] ?? 0);
}

/** How long runOnWorkers waits between two looks at its statement, at most. */
const PENDING_POLL_MS = 2;

/** Settles once DuckDB's workers have finished a pending statement, or it failed. */
async function untilReady(handle: duckdb.PendingResult): Promise<void> {
  for (let wait = 1; ; wait = Math.min(2 * wait, PENDING_POLL_MS)) {
    const state = duckdb.pending_execute_check_state(handle);
    if (state === duckdb.PendingState.ERROR) {
      // Also what the C API says for "finished" and "blocked", without a message: then
      // getResult finishes. A failed statement's pending result cannot give its error again.
      const message = duckdb.pending_error(handle);
      if (message) throw new Error(message);
      return;
    }
    if (state !== duckdb.PendingState.RESULT_NOT_READY && state !== duckdb.PendingState.NO_TASKS_AVAILABLE)
      return;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
