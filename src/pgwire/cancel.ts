import { randomInt, timingSafeEqual } from 'node:crypto';
import { InterruptedError } from '../storage/storage-error.js';
import { SQLSTATE, WireError } from './sql-errors.js';

/**
 * Stopping a running statement: a CancelRequest (sent on a second connection with the
 * BackendKeyData the session got at start) or the statement timeout. DuckDB may lose an
 * interrupt that reaches a connection before its statement starts (docs/library-notes.md),
 * so the interrupt is repeated until the statement has settled.
 */

/** How often an interrupt is repeated while the statement still runs. */
const REPEAT_MS = 50;

type Reason = 'cancel' | 'timeout';

/** What runs the statement: a DuckDB connection of the database or of the catalog. */
interface Interruptible {
  interrupt(): void;
}

/** The statement of one session: what may interrupt it, and whether it was. */
export class StatementInterrupts {
  private session: Interruptible | undefined;
  private reason: Reason | undefined;
  private inStatement = false;
  private calls = 0;
  private timer: NodeJS.Timeout | undefined;
  private repeating: NodeJS.Timeout | undefined;
  private timeoutMs = 0;

  /** A statement begins (a query of a simple Query, an Execute); `timeoutMs` 0 is none. */
  begin(timeoutMs: number): void {
    this.end();
    this.inStatement = true;
    this.timeoutMs = timeoutMs;
    if (timeoutMs > 0) this.timer = setTimeout(() => this.interrupt('timeout'), timeoutMs);
  }

  end(): void {
    clearTimeout(this.timer);
    clearInterval(this.repeating);
    this.timer = undefined;
    this.repeating = undefined;
    this.reason = undefined;
    this.inStatement = false;
  }

  attach(session: Interruptible): void {
    this.session = session;
  }

  detach(session: Interruptible): void {
    if (this.session === session) this.session = undefined;
  }

  /** A CancelRequest: stops the statement running now; nothing when none runs (as in PostgreSQL). */
  cancel(): void {
    if (this.inStatement) this.interrupt('cancel');
  }

  /** Runs one DuckDB call of the statement, so that an interrupt reaches it; its interruption becomes 57014. */
  async guard<T>(call: () => Promise<T>): Promise<T> {
    this.throwIfInterrupted();
    this.calls++;
    try {
      return await call();
    } catch (error) {
      if (this.reason !== undefined && error instanceof InterruptedError) this.throwIfInterrupted();
      throw error;
    } finally {
      this.calls--;
      if (this.calls === 0) {
        clearInterval(this.repeating);
        this.repeating = undefined;
      }
    }
  }

  /** Throws the statement's 57014 once it was cancelled or timed out. */
  throwIfInterrupted(): void {
    if (this.reason === 'cancel')
      throw new WireError(SQLSTATE.queryCanceled, 'canceling statement due to user request');
    if (this.reason === 'timeout')
      throw new WireError(SQLSTATE.queryCanceled, 'canceling statement due to statement timeout', {
        detail: `the statement ran longer than ${this.timeoutMs} ms (statement_timeout, at most QUERY_TIMEOUT_SECONDS)`,
      });
  }

  private interrupt(reason: Reason): void {
    this.reason ??= reason;
    if (this.calls === 0 || this.repeating) return;
    this.session?.interrupt();
    this.repeating = setInterval(() => this.session?.interrupt(), REPEAT_MS);
  }
}

/** The sessions a CancelRequest may name: process id and secret, as BackendKeyData gave them. */
export class CancelKeys {
  private readonly sessions = new Map<number, { secret: Buffer; interrupts: StatementInterrupts }>();
  private nextId = randomInt(1_000, 1_000_000);

  /** A key for a new session; `release` when it ends. */
  register(interrupts: StatementInterrupts): { processId: number; secret: number; release: () => void } {
    const processId = this.nextId;
    this.nextId = this.nextId >= 2_000_000_000 ? 1_000 : this.nextId + 1;
    const secret = randomInt(0, 2 ** 31);
    const bytes = Buffer.alloc(4);
    bytes.writeInt32BE(secret);
    this.sessions.set(processId, { secret: bytes, interrupts });
    return { processId, secret, release: () => this.sessions.delete(processId) };
  }

  /** Cancels the statement of the session with this key; a wrong key does nothing, visibly or not. */
  cancel(processId: number, secret: Buffer): void {
    const session = this.sessions.get(processId);
    if (session && secret.length === 4 && timingSafeEqual(session.secret, secret))
      session.interrupts.cancel();
  }
}
