import { FairLane } from '../workload/fair-lane.js';
import { type ConnectionSession, DatabaseClosingError, type Session } from './session.js';
import { StorageError } from './storage-error.js';

/**
 * Reader connections kept for one purpose (DESIGN §12): the catalog's reads (table lists,
 * query and execution records, the sandbox's lookups) and results work (pages, sorts, filters,
 * Parquet files) each have pools of their own, so that a key sorting a ten-million-row result
 * never makes another key's `GET /v1/tables` wait. Who gets a free connection is a FairLane's
 * decision: in the results pool one key holds at most half of the connections, and keys take
 * turns for the rest; the catalog pool serves in order. A borrowing may have a time limit:
 * past it, its statement is interrupted and it fails with StatementTimeoutError.
 */

export interface ReaderPoolOptions {
  /** Connections, all borrowed at once at most. */
  size: number;
  /** Connections one key may hold at once. */
  perKey: number;
  /** Borrowings of one key waiting at once; beyond it the borrowing fails with LaneFullError. */
  queuedPerKey: number;
  /** A borrowing still running after this long is interrupted. */
  timeoutMs?: number;
}

/** A borrowing of a reader ran past its pool's time limit; its statement was interrupted. */
export class StatementTimeoutError extends StorageError {
  override name = 'StatementTimeoutError';
  constructor(readonly limitMs: number) {
    super(`the statement ran longer than ${limitMs} ms and was interrupted`);
  }
}

export class ReaderPool {
  private readonly lane: FairLane;
  private readonly idle: ConnectionSession[];
  /** Every connection of the pool, idle or borrowed, for shutdown. */
  private readonly sessions: Set<ConnectionSession>;
  private borrowings = 0;
  private closed = false;

  constructor(
    sessions: readonly ConnectionSession[],
    private readonly connect: () => Promise<ConnectionSession>,
    private readonly options: ReaderPoolOptions,
  ) {
    this.idle = [...sessions];
    this.sessions = new Set(sessions);
    this.lane = new FairLane({
      slots: sessions.length,
      perKey: Math.min(options.perKey, sessions.length),
      queuedPerKey: options.queuedPerKey,
    });
  }

  /** Runs `work` on a connection of the pool once `key`'s turn comes; it sees the last committed state. */
  async run<T>(key: string, work: (session: Session) => Promise<T>): Promise<T> {
    if (this.closed) throw new DatabaseClosingError();
    const id = String(++this.borrowings);
    await new Promise<void>((resolve) => this.lane.enqueue(key, id, resolve));
    // The lane's slots are the pool's connections: one is idle for each borrowing it starts.
    let session = this.idle.pop() as ConnectionSession;
    try {
      // Shutdown began while this waited.
      if (this.closed) throw new DatabaseClosingError();
      return await this.withTimeLimit(session, work);
    } finally {
      // Without a new connection (the database is closing), the old one serves on.
      if (!session.reusable && !this.closed) session = await this.renew(session).catch(() => session);
      this.idle.push(session);
      this.lane.finished(key);
    }
  }

  /** Interrupts and refuses every statement of the pool (shutdown). */
  interruptToClose(): void {
    this.closed = true;
    for (const session of this.sessions) {
      session.refuse();
      if (session.busy) session.interruptToClose();
    }
  }

  get busy(): boolean {
    for (const session of this.sessions) if (session.busy) return true;
    return false;
  }

  /** Closes the pool's connections (no statement may run on them). */
  closeAll(): void {
    this.closed = true;
    for (const session of this.sessions) session.connection.closeSync();
    this.sessions.clear();
  }

  private async withTimeLimit<T>(session: ConnectionSession, work: (s: Session) => Promise<T>): Promise<T> {
    const limit = this.options.timeoutMs;
    if (limit === undefined) return work(session);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      session.interrupt();
    }, limit);
    try {
      return await work(session);
    } catch (error) {
      if (timedOut) throw new StatementTimeoutError(limit);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A connection that was interrupted may keep the interrupt for its next statement (DuckDB
   * keeps one that came between statements): it is closed and a new one takes its place.
   */
  private async renew(session: ConnectionSession): Promise<ConnectionSession> {
    this.sessions.delete(session);
    // A statement may still run on it if `work` returned early: closing would wait for it.
    if (!session.busy) session.connection.closeSync();
    const fresh = await this.connect();
    this.sessions.add(fresh);
    return fresh;
  }
}
