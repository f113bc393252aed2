import { type DuckDBConnection, DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
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
  /** Rows as objects keyed by column name, values as JS values (bigint for BIGINT). */
  all<T = Record<string, unknown>>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  query(sql: string, params?: readonly SqlValue[]): Promise<QueryResult>;
}

export interface InterruptibleSession extends Session {
  /** Stops the statement running on this session; it then fails with a StorageError. */
  interrupt(): void;
}

class ConnectionSession implements InterruptibleSession {
  constructor(readonly connection: DuckDBConnection) {}

  async run(sql: string, params: readonly SqlValue[] = []): Promise<void> {
    try {
      await this.connection.run(sql, params.length > 0 ? [...params] : undefined);
    } catch (error) {
      throw wrapStorageError(error, sql);
    }
  }

  async all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    try {
      const reader = await this.connection.runAndReadAll(sql, params.length > 0 ? [...params] : undefined);
      return reader.getRowObjectsJS() as T[];
    } catch (error) {
      throw wrapStorageError(error, sql);
    }
  }

  async query(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    try {
      const reader = await this.connection.runAndReadAll(sql, params.length > 0 ? [...params] : undefined);
      const names = reader.columnNames();
      const types = reader.columnTypes();
      return {
        columns: names.map((name, i) => ({ name, type: String(types[i]) })),
        rows: reader.getRowsJS() as unknown[][],
      };
    } catch (error) {
      throw wrapStorageError(error, sql);
    }
  }

  interrupt(): void {
    this.connection.interrupt();
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
}

export class Database {
  private readonly writes = new SerialQueue();
  private readonly idleReaders: ConnectionSession[];
  private readonly readerWaiters: ((session: ConnectionSession) => void)[] = [];
  private readonly dedicatedSessions = new Set<ConnectionSession>();
  private closed = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly writer: ConnectionSession,
    private readonly readers: ConnectionSession[],
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
    const writer = new ConnectionSession(await instance.connect());
    // Timestamps are stored and shown in UTC; the setting needs ICU, loaded after start.
    await writer.run("SET GLOBAL TimeZone = 'UTC'");
    const readers: ConnectionSession[] = [];
    for (let i = 0; i < (options.readers ?? 4); i++)
      readers.push(new ConnectionSession(await instance.connect()));
    return new Database(instance, writer, readers);
  }

  /** Runs `work` on a reader connection; it sees the last committed state. */
  async read<T>(work: (session: Session) => Promise<T>): Promise<T> {
    this.assertOpen();
    const session =
      this.idleReaders.pop() ?? (await new Promise<ConnectionSession>((r) => this.readerWaiters.push(r)));
    try {
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
   * other work and may be interrupted (a cancel, or shutdown).
   */
  async dedicated<T>(work: (session: InterruptibleSession) => Promise<T>): Promise<T> {
    this.assertOpen();
    const session = new ConnectionSession(await this.instance.connect());
    this.dedicatedSessions.add(session);
    try {
      return await work(session);
    } finally {
      this.dedicatedSessions.delete(session);
      session.connection.closeSync();
    }
  }

  /**
   * Interrupts long-running dedicated work, lets queued writes finish, checkpoints, and
   * closes. Committed data is durable before this (DuckDB's WAL); the checkpoint only makes
   * the next open faster.
   */
  async close(writeGraceMs = 5_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const session of this.dedicatedSessions) session.interrupt();
    // A long write (a large load on a busy machine) gets a grace period, then is interrupted:
    // its transaction rolls back whole, and the caller has long answered or gone.
    let interrupting: NodeJS.Timeout | undefined;
    const grace = setTimeout(() => {
      this.writer.interrupt();
      // Writes queued behind it are interrupted as they start.
      interrupting = setInterval(() => this.writer.interrupt(), 100);
    }, writeGraceMs);
    await this.writes.drain();
    clearTimeout(grace);
    clearInterval(interrupting);
    await this.writer.run('CHECKPOINT').catch(() => undefined);
    for (const session of [this.writer, ...this.readers]) session.connection.closeSync();
    this.instance.closeSync();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageError('the database is closed');
  }
}
