import fs from 'node:fs';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { CatalogChanges } from './catalog-changes.js';
import { ReaderPool } from './reader-pool.js';
import {
  ConnectionSession,
  DatabaseClosingError,
  type InterruptibleSession,
  type Session,
  workerThreads,
} from './session.js';
import { quoteLiteral } from './sql.js';
import { wrapOpenError, wrapStorageError } from './storage-error.js';

export type {
  InterruptibleSession,
  PreparedQuery,
  QueryColumn,
  QueryResult,
  ResultColumnType,
  ResultStream,
  Session,
  SqlValue,
} from './session.js';
export { DatabaseClosingError, onStatementsIdle, reusable } from './session.js';
export { DatabaseLockedError } from './storage-error.js';

/**
 * The embedded DuckDB database: one instance, one writer connection used one
 * transaction at a time, two pools of reader connections (the catalog's reads, and results
 * work shared fairly between keys: reader-pool.ts), and dedicated connections for
 * long-running work that must be interruptible (executions).
 *
 * Transactions belong to a connection in DuckDB, so concurrent requests never share one
 * while a transaction is open: writes queue for the writer, reads borrow a reader.
 */

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
  /** Connections for the catalog's reads (default 2). */
  catalogReaders?: number;
  /** Connections for results work (default 4), of which one key holds at most half. */
  resultReaders?: number;
  /** A results borrowing still running after this long is interrupted (default: never). */
  resultsTimeoutMs?: number;
  /** Results borrowings of one key waiting at once (default 64); beyond, LaneFullError. */
  resultsQueuedPerKey?: number;
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

/**
 * A WAL up to this size is checkpointed at close; a larger one is left for the next open to
 * replay. A checkpoint's time follows what the WAL holds (most of all the columns of the
 * tables written: a wide upload's is tens of seconds), and shutdown has a deadline.
 */
const SMALL_WAL_BYTES = 1024 * 1024;

/**
 * A write of this many rows or more (DuckDB's row group) has its row groups written straight
 * into the database file, and only pointers to them into the WAL (checkpointAfter).
 */
const OPTIMISTIC_WRITE_ROWS = 122_880;
/** checkpointAfter tries again this often while other writes keep DuckDB from checkpointing… */
const CHECKPOINT_RETRY_MS = 1_000;
/** …this many times at most (DuckDB's own checkpoint, at a 16 MB WAL, comes later). */
const CHECKPOINT_ATTEMPTS = 60;

/** The size of the WAL beside a database file (0 when there is none, or in memory). */
function walBytes(file: string): number {
  try {
    return fs.statSync(`${file}.wal`).size;
  } catch {
    return 0;
  }
}

export class Database {
  private readonly writes = new SerialQueue();
  private readonly idleDedicated: ConnectionSession[] = [];
  private readonly dedicatedSessions = new Set<ConnectionSession>();
  private readonly catalog: ReaderPool;
  private readonly results: ReaderPool;
  /** The database file (or `:memory:`). */
  private readonly path: string;
  private closed = false;
  /** checkpointAfter's checkpoint: planned or running; asked for again meanwhile; its next attempt. */
  private checkpointPlanned = false;
  private checkpointAgain = false;
  private checkpointTimer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly writer: ConnectionSession,
    readers: { catalog: ConnectionSession[]; results: ConnectionSession[] },
    private readonly workers: number,
    private readonly changes: CatalogChanges,
    options: DatabaseOptions,
  ) {
    this.path = options.path;
    const connect = async () => new ConnectionSession(await instance.connect(), workers);
    // The catalog's reads are short and internal: in order, with no limit of their own.
    this.catalog = new ReaderPool(readers.catalog, connect, {
      size: readers.catalog.length,
      perKey: readers.catalog.length,
      queuedPerKey: Number.POSITIVE_INFINITY,
    });
    this.results = new ReaderPool(readers.results, connect, {
      size: readers.results.length,
      perKey: Math.max(1, Math.ceil(readers.results.length / 2)),
      queuedPerKey: options.resultsQueuedPerKey ?? 64,
      ...(options.resultsTimeoutMs !== undefined ? { timeoutMs: options.resultsTimeoutMs } : {}),
    });
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
      const changes = new CatalogChanges();
      const writer = new ConnectionSession(first, workers, undefined, changes);
      // Timestamps are stored and shown in UTC; the setting needs ICU, loaded after start.
      // Before the lock below, which refuses every later SET.
      await writer.run("SET GLOBAL TimeZone = 'UTC'");
      // DuckDB's own checkpoint when the instance closes runs on the closing thread, the
      // event loop's, for as long as it takes: close() runs one of its own, with a limit.
      await writer.run('PRAGMA disable_checkpoint_on_shutdown');
      if (options.allowedDirectories) await closeExternalAccess(writer, options.allowedDirectories);
      const pool = async (size: number) => {
        const sessions: ConnectionSession[] = [];
        for (let i = 0; i < size; i++) sessions.push(new ConnectionSession(await connect(), workers));
        return sessions;
      };
      const readers = {
        catalog: await pool(options.catalogReaders ?? 2),
        results: await pool(options.resultReaders ?? 4),
      };
      return new Database(instance, writer, readers, workers, changes, options);
    } catch (error) {
      for (const connection of connections) connection.closeSync();
      instance.closeSync();
      throw wrapStorageError(error);
    }
  }

  /**
   * Runs `work` on a reader of the catalog's pool (table lists, records, the sandbox's
   * lookups); it sees the last committed state. Results work never takes these readers.
   */
  async read<T>(work: (session: Session) => Promise<T>): Promise<T> {
    this.assertOpen();
    return this.catalog.run('catalog', work);
  }

  /**
   * Runs `work` on a reader of the results pool for `key` (the key asking): one key holds at
   * most half of these readers and keys take turns for the rest; past the pool's time limit
   * the statement is interrupted (StatementTimeoutError), and a key with too many borrowings
   * waiting is refused (LaneFullError).
   */
  async readResults<T>(key: string, work: (session: Session) => Promise<T>): Promise<T> {
    this.assertOpen();
    return this.results.run(key, work);
  }

  /**
   * Runs `work` inside one transaction on the writer connection, after every write queued
   * before it. Other connections see all of it at commit, or nothing if `work` throws.
   */
  async write<T>(work: (session: Session) => Promise<T>): Promise<T> {
    // A refusal is a rejected promise like any failure: callers that `.catch` see it.
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

  /**
   * Runs `work` on the writer connection, after every write queued before it, outside any
   * transaction of ours: for statements DuckDB runs in transactions of their own
   * (CHECKPOINT, COPY FROM DATABASE).
   */
  async outsideTransaction<T>(work: (session: Session) => Promise<T>): Promise<T> {
    this.assertOpen();
    return this.writes.run(() => work(this.writer));
  }

  /**
   * Writes what the WAL holds into the database file, and lets DuckDB reuse the blocks of
   * dropped tables. Skipped (false) when another transaction writes meanwhile: DuckDB refuses
   * to checkpoint then, and its own automatic checkpoint comes later.
   */
  async checkpoint(): Promise<boolean> {
    return this.outsideTransaction((session) => session.run('CHECKPOINT')).then(
      () => true,
      () => false,
    );
  }

  /**
   * A checkpoint soon, in the background, after a committed write of `rows` rows into a table.
   * DuckDB writes a large write's row groups straight into the database file and only their
   * pointers into the WAL; a database reopened from such a WAL has lost those tables' distinct
   * value counts ("Approx Unique" in `stats()`) for good, and the join planner guesses without
   * them: after a restart, a join of a 250,000-row upload with a 5-million-row one took 113 ms
   * instead of 70 (bench/analytics.ts q15; DuckDB 1.5.6, docs/library-notes.md). A checkpoint
   * writes them with the table: 17 ms after a 5-million-row load. Tried again while other
   * writes keep DuckDB from checkpointing; several calls meanwhile make one checkpoint.
   */
  checkpointAfter(rows: number): void {
    if (rows < OPTIMISTIC_WRITE_ROWS || this.closed) return;
    // One planned or running already: it runs (again) after this write.
    if (this.checkpointPlanned) {
      this.checkpointAgain = true;
      return;
    }
    this.checkpointPlanned = true;
    let attempts = 0;
    const attempt = () => {
      this.checkpointAgain = false;
      void this.checkpoint().then((done) => {
        if (this.closed || ((done || ++attempts >= CHECKPOINT_ATTEMPTS) && !this.checkpointAgain)) {
          this.checkpointPlanned = false;
          return;
        }
        this.checkpointTimer = setTimeout(attempt, done ? 0 : CHECKPOINT_RETRY_MS);
        this.checkpointTimer.unref();
      });
    };
    this.checkpointTimer = setTimeout(attempt, 0);
    this.checkpointTimer.unref();
  }

  /**
   * Moves with every change of the table records (`_service.tables`); undefined while one may
   * not be committed yet (catalog-changes.ts). What keeps their answers checks it.
   */
  get tableRecordsEpoch(): number | undefined {
    return this.changes.epoch;
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
      this.idleDedicated.pop() ??
      new ConnectionSession(await this.instance.connect(), this.workers, undefined, this.changes);
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
      else session.closeSync();
    }
  }

  /**
   * Interrupts every read and every dedicated statement at once (their callers get an
   * error, or have gone), lets queued writes finish, checkpoints, and closes. Committed data
   * is durable before this (DuckDB's WAL); the checkpoint only makes the next open faster, so
   * it runs only while the WAL is small (SMALL_WAL_BYTES), is interrupted after
   * `checkpointMs`, and is skipped with 0: the next open replays the WAL instead. An interrupt
   * alone does not bound it: DuckDB looks at it between steps, and the checkpoint of a
   * 10,000-column table ran 22.8 s past an interrupt sent at 500 ms (docs/library-notes.md).
   * Nothing here blocks the event loop on a running statement: connections are closed once
   * no statement runs on any of them, so the caller's deadline can always fire.
   */
  async close(writeGraceMs = 5_000, checkpointMs = 1_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.checkpointTimer);
    const interruptReads = () => {
      this.catalog.interruptToClose();
      this.results.interruptToClose();
      for (const session of this.dedicatedSessions) {
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
      while (this.catalog.busy || this.results.busy || this.dedicatedSessions.size > 0) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      clearTimeout(grace);
      clearInterval(interruptingWrites);
      clearInterval(interruptingReads);
    }
    if (checkpointMs > 0 && walBytes(this.path) <= SMALL_WAL_BYTES) {
      const stopCheckpoint = setTimeout(() => this.writer.interruptToClose(), checkpointMs);
      await this.writer.run('CHECKPOINT').catch(() => undefined);
      clearTimeout(stopCheckpoint);
    }
    this.writer.refuse();
    this.catalog.closeAll();
    this.results.closeAll();
    for (const session of [this.writer, ...this.idleDedicated]) session.connection.closeSync();
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
    this.catalog.interruptToClose();
    this.results.interruptToClose();
    for (const session of [this.writer, ...this.dedicatedSessions]) {
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
