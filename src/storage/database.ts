import {
  type DuckDBConnection,
  type DuckDBDataChunk,
  DuckDBInstance,
  type DuckDBMaterializedResult,
  type DuckDBPreparedStatement,
  type DuckDBType,
  type DuckDBValue,
  JSDuckDBValueConverter,
} from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import { quoteLiteral } from './sql.js';
import { StorageError, wrapOpenError, wrapStorageError } from './storage-error.js';

export { DatabaseLockedError } from './storage-error.js';

/**
 * The embedded DuckDB database: one instance, one writer connection used one
 * transaction at a time, a small pool of reader connections, and dedicated connections
 * for long-running work that must be interruptible (saved-query runs).
 *
 * Transactions belong to a connection in DuckDB, so concurrent requests never share one
 * while a transaction is open: writes queue for the writer, reads borrow a reader.
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

class ConnectionSession implements InterruptibleSession {
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

  constructor(
    readonly connection: DuckDBConnection,
    /** DuckDB's own worker threads (its `threads` less the one external thread). */
    private readonly workers: number,
    /** Reusable statements prepared on this connection, by SQL text. */
    private readonly prepared = new Map<string, DuckDBPreparedStatement>(),
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
    return new ConnectionSession(this.connection, this.workers, this.prepared);
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
    try {
      return await run();
    } catch (error) {
      // Interrupted by shutdown, not failed: the caller answers "unavailable", not a bug.
      if (this.closing) throw new DatabaseClosingError(sql, { cause: error });
      throw wrapStorageError(error, sql);
    } finally {
      this.statements--;
    }
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
async function workerThreads(connection: DuckDBConnection): Promise<number> {
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

/** Runs tasks one at a time, in order. */
class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;

  run<T>(task: () => Promise<T>): Promise<T> {
    this.pending++;
    const result = this.tail.then(task, task);
    this.tail = result.then(
      () => this.pending--,
      () => this.pending--,
    );
    return result;
  }

  get size(): number {
    return this.pending;
  }

  /** Resolves when everything queued so far has finished. */
  async drain(): Promise<void> {
    while (this.pending > 0) await this.tail;
  }
}

export interface DatabaseOptions {
  /** A file path, or `:memory:`. */
  path: string;
  readers?: number;
  /** DuckDB settings applied at open, e.g. `{ threads: '2' }`. */
  settings?: Record<string, string>;
  /**
   * The database's second wall around users' SQL (DESIGN §10): when given, SQL may read
   * and write files only under these folders (DuckDB's own database, WAL and spill files
   * excepted), no extension can be installed or loaded, and the configuration is locked so
   * that no later `SET` undoes it. `[]` allows no folder at all. Omitted, access is
   * unrestricted: for tests and tools that read files from anywhere.
   */
  allowedDirectories?: readonly string[];
}

/**
 * Measured on DuckDB 1.5.6 (docs/library-notes.md): `allowed_directories` can only be
 * changed while external access is still on, so it comes first; `lock_configuration` comes
 * last and makes every later SET fail ("the configuration has been locked"), so a gap in
 * the sandbox's checks cannot turn access back on. Paths are compared after resolving
 * `..` and symbolic links: `tmp/../x` and a link in `tmp` to `/etc/passwd` are refused.
 */
async function closeExternalAccess(session: Session, directories: readonly string[]): Promise<void> {
  await session.run(`SET allowed_directories = [${directories.map(quoteLiteral).join(', ')}]`);
  await session.run('SET enable_external_access = false');
  await session.run('SET lock_configuration = true');
}

/**
 * Dedicated connections kept for the next caller once their work is done: two lanes of two
 * runs each. Connecting costs little (0.1 ms); what a kept connection saves is its prepared
 * statements (the record an execution appends: 1.1 ms bound on a kept statement against
 * 1.8 ms prepared anew, docs/library-notes.md).
 */
const IDLE_DEDICATED_KEPT = 4;

export class Database {
  private readonly writes = new SerialQueue();
  private readonly idleDedicated: ConnectionSession[] = [];
  private readonly idleReaders: ConnectionSession[];
  private readonly readerWaiters: ((session: ConnectionSession) => void)[] = [];
  private readonly dedicatedSessions = new Set<ConnectionSession>();
  private closed = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly writer: ConnectionSession,
    private readonly readers: ConnectionSession[],
    private readonly workers: number,
  ) {
    this.idleReaders = [...readers];
  }

  static async open(options: DatabaseOptions): Promise<Database> {
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(options.path, options.settings);
    } catch (error) {
      throw wrapOpenError(error, options.path);
    }
    const connections: DuckDBConnection[] = [];
    const connect = async () => {
      const connection = await instance.connect();
      connections.push(connection);
      return connection;
    };
    try {
      const first = await connect();
      const workers = await workerThreads(first);
      const writer = new ConnectionSession(first, workers);
      // Timestamps are stored and shown in UTC; the setting needs ICU, loaded after start.
      // Before the lock below, which refuses every later SET.
      await writer.run("SET GLOBAL TimeZone = 'UTC'");
      if (options.allowedDirectories) await closeExternalAccess(writer, options.allowedDirectories);
      const readers: ConnectionSession[] = [];
      for (let i = 0; i < (options.readers ?? 4); i++) {
        readers.push(new ConnectionSession(await connect(), workers));
      }
      return new Database(instance, writer, readers, workers);
    } catch (error) {
      for (const connection of connections) connection.closeSync();
      instance.closeSync();
      throw wrapStorageError(error);
    }
  }

  /** Runs `work` on a reader connection; it sees the last committed state. */
  async read<T>(work: (session: Session) => Promise<T>): Promise<T> {
    this.assertOpen();
    const session =
      this.idleReaders.pop() ?? (await new Promise<ConnectionSession>((r) => this.readerWaiters.push(r)));
    try {
      // Shutdown began while this waited for a reader.
      this.assertOpen();
      return await work(session);
    } finally {
      const waiter = this.readerWaiters.shift();
      if (waiter) waiter(session);
      else this.idleReaders.push(session);
    }
  }

  /**
   * Runs `work` inside one transaction on the writer connection, after every write queued
   * before it. Other connections see all of it at commit, or nothing if `work` throws.
   */
  write<T>(work: (session: Session) => Promise<T>): Promise<T> {
    this.assertOpen();
    return this.writes.run(async () => {
      await this.writer.run('BEGIN TRANSACTION');
      try {
        const result = await work(this.writer);
        await this.writer.run('COMMIT');
        return result;
      } catch (error) {
        await this.writer.run('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  /** Writes waiting or running, for progress reports. */
  get queuedWrites(): number {
    return this.writes.size;
  }

  /**
   * Runs `work` on a connection of its own, for long statements that must not hold up
   * other work and may be interrupted (a cancel, or shutdown). `work` that returns has ended
   * any transaction it began (every caller commits, or rolls back and throws): the
   * connection then serves the next caller, unless it was interrupted.
   */
  async dedicated<T>(work: (session: InterruptibleSession) => Promise<T>): Promise<T> {
    this.assertOpen();
    const session =
      this.idleDedicated.pop() ?? new ConnectionSession(await this.instance.connect(), this.workers);
    this.dedicatedSessions.add(session);
    let returned = false;
    try {
      // Shutdown began while this connected: it interrupts only what it can see.
      this.assertOpen();
      const result = await work(session);
      returned = true;
      return result;
    } finally {
      this.dedicatedSessions.delete(session);
      if (returned && session.reusable && !this.closed && this.idleDedicated.length < IDLE_DEDICATED_KEPT)
        this.idleDedicated.push(session.handOver());
      else session.connection.closeSync();
    }
  }

  /**
   * Interrupts every read and every dedicated statement at once (their callers get an
   * error, or have gone), lets queued writes finish, checkpoints, and closes. Committed data
   * is durable before this (DuckDB's WAL); the checkpoint only makes the next open faster.
   * Nothing here blocks the event loop on a running statement: connections are closed once
   * no statement runs on any of them, so the caller's deadline can always fire.
   */
  async close(writeGraceMs = 5_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const interruptReads = () => {
      for (const session of [...this.readers, ...this.dedicatedSessions]) {
        session.refuse();
        if (session.busy) session.interruptToClose();
      }
    };
    // Again every 100 ms: an interrupt that reaches a connection before DuckDB begins its
    // statement may be lost.
    interruptReads();
    const interruptingReads = setInterval(interruptReads, 100);
    // A long write (a large load on a busy machine) gets a grace period, then is interrupted:
    // its transaction rolls back whole, and the caller has long answered or gone.
    let interruptingWrites: NodeJS.Timeout | undefined;
    const grace = setTimeout(() => {
      this.writer.interruptToClose();
      // Writes queued behind it are interrupted as they start.
      interruptingWrites = setInterval(() => this.writer.interruptToClose(), 100);
    }, writeGraceMs);
    try {
      await this.writes.drain();
      clearTimeout(grace);
      clearInterval(interruptingWrites);
      while (this.readers.some((r) => r.busy) || this.dedicatedSessions.size > 0) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      clearTimeout(grace);
      clearInterval(interruptingWrites);
      clearInterval(interruptingReads);
    }
    await this.writer.run('CHECKPOINT').catch(() => undefined);
    this.writer.refuse();
    for (const session of [this.writer, ...this.readers, ...this.idleDedicated])
      session.connection.closeSync();
    this.idleDedicated.length = 0;
    this.instance.closeSync();
  }

  /** Bytes DuckDB's own memory holds now (its buffers, tables in memory, …: duckdb_memory()). */
  async memoryBytes(): Promise<number> {
    const [row] = await this.read((session) =>
      session.all<{ bytes: bigint | null }>(
        'SELECT sum(memory_usage_bytes)::BIGINT AS bytes FROM duckdb_memory()',
      ),
    );
    return Number(row?.bytes ?? 0);
  }

  /**
   * Interrupts every statement on every connection, writes and the checkpoint included, for
   * a process that exits now: process.exit waits for the threads that run statements.
   */
  interruptAll(): void {
    for (const session of [this.writer, ...this.readers, ...this.dedicatedSessions]) {
      session.refuse();
      if (session.busy) session.interruptToClose();
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private assertOpen(): void {
    if (this.closed) throw new DatabaseClosingError();
  }
}
