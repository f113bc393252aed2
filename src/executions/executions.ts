import { monotonicFactory } from 'ulid';
import type { Logger } from '../log.js';
import type { Database, InterruptibleSession } from '../storage/database.js';
import { qualifiedName } from '../storage/sql.js';
import {
  type Execution,
  FAILURE_TYPES,
  hasResult,
  isFinished,
  NO_PARAMETERS,
  SNAPSHOT_SCHEMA,
  STATES,
  snapshotTable,
} from './execution.js';
import { ExecutionStore } from './execution-store.js';
import { jsonArrayBytes, jsonRowsQuery, resultBytesQuery } from './row-rendering.js';
import { createSnapshot, dropSnapshot, ResultOverCapError, SnapshotError, snapshotName } from './snapshot.js';

/**
 * Runs queries as executions, each on a connection of its own so that serving and uploads
 * go on meanwhile. A run's rows become visible only when its record says COMPLETED: until
 * then every request keeps getting the previous result.
 *
 * Two lanes, each with its own limit of executions running at once and its own queue: the
 * operator's query files (trusted SQL, refreshed by the scheduler) and users' SQL, which is
 * also interrupted past a time limit. A burst of users' queries thus never delays the
 * metrics refresh, and the other way round.
 */

export type Lane = 'operator' | 'users';

/** What to run: SQL that is ready (a user's has passed the sandbox), and whose run it is. */
export interface RunRequest {
  /** The query it runs (AD_HOC_QUERY_ID for ad-hoc SQL). */
  queryId: number;
  sql: string;
  /** The executor's handle, or OPERATOR. */
  owner: string;
  lane: Lane;
  /** Canonical parameter values (NO_PARAMETERS by default). */
  parameterSet?: string;
  /** Whether the SQL reads a private table. */
  readsPrivate?: boolean;
}

export interface ExecutionsOptions {
  maxResultRows: number;
  retentionHours: number;
  /** Executions that may run at once, per lane (default 2 each). */
  running?: Partial<Record<Lane, number>>;
  /** Users' executions are interrupted after this many seconds (default: never). */
  usersTimeoutSeconds?: number;
}

interface Queued {
  execution: Execution;
  request: RunRequest;
}

interface Running extends Queued {
  session?: InterruptibleSession;
  cancelled: boolean;
  timedOut: boolean;
  /** Interrupts again and again once the run is to stop, until it has. */
  stopping?: NodeJS.Timeout;
  done: Promise<void>;
}

/**
 * Stops a running execution's statement. DuckDB's interrupt stops the statement running at
 * that moment; one that reaches the connection between two statements (a cancel just after
 * the run began) stops nothing, and the next statement would run on. So it is repeated until
 * the run has ended (`run` clears it).
 */
function stop(running: Running): void {
  running.session?.interrupt();
  running.stopping ??= setInterval(() => running.session?.interrupt(), 50);
  running.stopping.unref();
}

/**
 * Told of each finished execution. `rows`, for a small result (RENDERED_ROWS_MAX), are its
 * rows as JSON object texts, all columns in row order, rendered in the run's transaction.
 */
type Listener = (execution: Execution, rows?: readonly string[]) => void;

/**
 * A result of at most this many rows is rendered in the run's transaction, and its bytes
 * (total_result_set_bytes) counted from the rendering: one statement instead of the per-column
 * count, and the rows are at hand for the first page (`onFinished`). Larger results are
 * counted per column without being rendered (resultBytesQuery). Measured for `SELECT 1`: the
 * count cost 1.1 ms of a run's 6 ms, and the first page's own read 1.4 ms.
 */
const RENDERED_ROWS_MAX = 1_000;

/** Ids sort in submission order, even within one millisecond. */
const nextId = monotonicFactory();

/**
 * A new execution's PENDING record is written only if it has not finished this soon: most
 * users' queries finish first and are then recorded once, in the transaction that stores
 * their rows (each commit is an fsync; a small write transaction cost 2.6 ms of CPU here).
 * A crash within this time forgets the execution; after it, the record is there and a
 * restart marks the execution failed.
 */
const PENDING_RECORD_DELAY_MS = 50;

const LANES: readonly Lane[] = ['operator', 'users'];

export class Executions {
  readonly store: ExecutionStore;
  private readonly queues: Record<Lane, Queued[]> = { operator: [], users: [] };
  private readonly running = new Map<string, Running>();
  private readonly listeners: Listener[] = [];
  private closed = false;
  /** Executions whose snapshot is known to be gone, so purging does not drop them again. */
  private readonly dropped = new Set<string>();
  private readonly latestResults = new Map<number, Execution | undefined>();
  /** Executions whose PENDING record is not written yet, with the timer that will write it. */
  private readonly unrecorded = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly database: Database,
    private readonly options: ExecutionsOptions,
    private readonly logger: Logger,
  ) {
    this.store = new ExecutionStore(database);
  }

  /**
   * Loads the records; runs that a crash or shutdown cut short are marked failed, and result
   * tables that no finished record names (a large result's rows are committed before its
   * record) are dropped.
   */
  async open(): Promise<void> {
    const executions = await this.store.load();
    const kept = new Set(executions.filter(isFinished).map((execution) => snapshotTable(execution.id)));
    const tables = await this.database.read((s) =>
      s.all<{ name: string }>('SELECT table_name AS name FROM duckdb_tables() WHERE schema_name = ?', [
        SNAPSHOT_SCHEMA,
      ]),
    );
    for (const { name } of tables) {
      if (!kept.has(name))
        await this.database.write((s) => s.run(`DROP TABLE ${qualifiedName(SNAPSHOT_SCHEMA, name)}`));
    }
    for (const execution of executions) {
      if (isFinished(execution)) continue;
      await this.database.write((s) => dropSnapshot(s, execution.id));
      await this.store.save({
        ...execution,
        state: STATES.failed,
        endedAt: new Date(),
        expiresAt: this.expiry(new Date()),
        error: {
          type: FAILURE_TYPES.restarted,
          message: 'the service stopped before this execution finished',
        },
      });
    }
  }

  get(id: string): Execution | undefined {
    return this.store.get(id);
  }

  /** The query's executions, oldest first. */
  ofQuery(queryId: number): readonly Execution[] {
    return this.store.ofQuery(queryId);
  }

  /**
   * The latest execution of the query that has a result (complete or partial). Asked on
   * every request for the metrics, so remembered until one of the query's executions changes.
   */
  latestWithResult(queryId: number): Execution | undefined {
    if (!this.latestResults.has(queryId)) this.latestResults.set(queryId, this.latest(queryId, hasResult));
    return this.latestResults.get(queryId);
  }

  /** The latest execution of the query that `accept` takes (any state by default). */
  latest(queryId: number, accept: (e: Execution) => boolean = () => true): Execution | undefined {
    const executions = this.store.ofQuery(queryId);
    for (let i = executions.length - 1; i >= 0; i--) {
      const execution = executions[i] as Execution;
      if (accept(execution)) return execution;
    }
    return undefined;
  }

  /** 1-based place of a pending execution in its lane's queue; undefined once it runs. */
  queuePosition(id: string): number | undefined {
    for (const lane of LANES) {
      const index = this.queues[lane].findIndex((q) => q.execution.id === id);
      if (index >= 0) return index + 1;
    }
    return undefined;
  }

  /** Called with each execution that finished (any state), after its record is saved (see Listener). */
  onFinished(listener: Listener): void {
    this.listeners.push(listener);
  }

  /** Queues a run; resolves once it is recorded as pending. */
  async submit(request: RunRequest): Promise<Execution> {
    if (this.closed) throw new Error('the executions are closed');
    const execution: Execution = {
      id: nextId(),
      queryId: request.queryId,
      owner: request.owner,
      parameterSet: request.parameterSet ?? NO_PARAMETERS,
      readsPrivate: request.readsPrivate ?? false,
      state: STATES.pending,
      submittedAt: new Date(),
    };
    this.store.remember(execution);
    const timer = setTimeout(() => this.recordPending(execution.id), PENDING_RECORD_DELAY_MS);
    timer.unref();
    this.unrecorded.set(execution.id, timer);
    this.queues[request.lane].push({ execution, request });
    this.pump();
    return execution;
  }

  /** Whether a run of the query is queued or running. */
  isBusy(queryId: number): boolean {
    return (
      [...this.running.values()].some((r) => r.execution.queryId === queryId) ||
      LANES.some((lane) => this.queues[lane].some((q) => q.execution.queryId === queryId))
    );
  }

  /** Cancels a pending or running execution; false when it had already finished. */
  async cancel(id: string): Promise<boolean> {
    for (const lane of LANES) {
      const index = this.queues[lane].findIndex((q) => q.execution.id === id);
      if (index < 0) continue;
      const [queued] = this.queues[lane].splice(index, 1);
      if (queued) {
        const now = new Date();
        await this.finish({
          ...queued.execution,
          state: STATES.cancelled,
          cancelledAt: now,
          endedAt: now,
          expiresAt: this.expiry(now),
        });
      }
      return true;
    }
    const running = this.running.get(id);
    if (running) {
      running.cancelled = true;
      stop(running);
      return true;
    }
    return false;
  }

  /** Resolves when nothing is queued or running. */
  async whenIdle(): Promise<void> {
    while (this.running.size > 0 || LANES.some((lane) => this.queues[lane].length > 0)) {
      await Promise.all([...this.running.values()].map((r) => r.done));
    }
  }

  /** Stops taking work and interrupts the running executions (the database then closes). */
  close(): void {
    this.closed = true;
    // Queued before the database closes, so that the next start finds them and marks them failed.
    for (const id of [...this.unrecorded.keys()]) this.recordPending(id);
    for (const lane of LANES) this.queues[lane].length = 0;
    for (const running of this.running.values()) {
      running.cancelled = true;
      stop(running);
    }
  }

  /** Writes the PENDING record of an execution that has not finished (see PENDING_RECORD_DELAY_MS). */
  private recordPending(id: string): void {
    clearTimeout(this.unrecorded.get(id));
    this.unrecorded.delete(id);
    const execution = this.store.get(id);
    if (!execution || isFinished(execution)) return;
    // As first recorded: EXECUTING lives in memory only.
    this.store
      .savePending({ ...execution, state: STATES.pending })
      .catch((error: unknown) =>
        this.logger.error({ err: error, executionId: id }, 'could not record a new execution'),
      );
  }

  private runningIn(lane: Lane): number {
    let count = 0;
    for (const running of this.running.values()) if (running.request.lane === lane) count++;
    return count;
  }

  private pump(): void {
    for (const lane of LANES) {
      const limit = this.options.running?.[lane] ?? 2;
      while (!this.closed && this.runningIn(lane) < limit) {
        const next = this.queues[lane].shift();
        if (!next) break;
        const running: Running = { ...next, cancelled: false, timedOut: false, done: Promise.resolve() };
        const id = next.execution.id;
        this.running.set(id, running);
        running.done = this.run(running)
          .catch((error: unknown) =>
            this.logger.error({ err: error, executionId: id }, 'execution bookkeeping failed'),
          )
          .finally(() => {
            clearInterval(running.stopping);
            this.running.delete(id);
            this.pump();
          });
      }
    }
  }

  private expiry(from: Date): Date {
    return new Date(from.getTime() + this.options.retentionHours * 3_600_000);
  }

  private async run(running: Running): Promise<void> {
    // EXECUTING lives in memory only: a restart finds the record PENDING and marks it failed,
    // as it would an EXECUTING one, and the run saves a database round trip.
    const started: Execution = { ...running.execution, state: STATES.executing, startedAt: new Date() };
    this.store.remember(started);
    const log = this.logger.child({ executionId: started.id, queryId: started.queryId });
    log.info('execution started');
    const timeout = this.options.usersTimeoutSeconds;
    let timer: NodeJS.Timeout | undefined;
    try {
      // The rows and the COMPLETED record are stored by storeResult (one commit, or two for a large result).
      const { execution: completed, rows } = await this.database.dedicated(async (session) => {
        running.session = session;
        try {
          if (running.cancelled) throw new Error('cancelled before it started');
          if (running.request.lane === 'users' && timeout !== undefined) {
            timer = setTimeout(() => {
              running.timedOut = true;
              stop(running);
            }, timeout * 1000);
          }
          return await this.storeResult(running, started, session);
        } finally {
          // The connection closes or serves another run when this returns: nothing may interrupt it after.
          running.session = undefined;
        }
      });
      clearTimeout(timer);
      this.store.remember(completed);
      this.announce(completed, rows);
      log.info(
        {
          rows: completed.rowCount,
          ms: (completed.endedAt as Date).getTime() - (started.startedAt as Date).getTime(),
        },
        'execution completed',
      );
    } catch (error) {
      clearTimeout(timer);
      // Rolled back with its transaction; dropped again in case the failure came after COMMIT.
      await this.database.write((s) => dropSnapshot(s, started.id)).catch(() => undefined);
      const endedAt = new Date();
      if (running.cancelled) {
        if (this.closed) return; // Shutting down: the next start records it as cut short.
        await this.finish({
          ...started,
          state: STATES.cancelled,
          cancelledAt: endedAt,
          endedAt,
          expiresAt: this.expiry(endedAt),
        });
        log.info('execution cancelled');
        return;
      }
      const message = running.timedOut
        ? `the query ran longer than the time limit of ${timeout} seconds (QUERY_TIMEOUT_SECONDS) and was stopped`
        : error instanceof SnapshotError
          ? error.message
          : firstLine(error);
      await this.finish({
        ...started,
        state: STATES.failed,
        endedAt,
        expiresAt: this.expiry(endedAt),
        error: { type: FAILURE_TYPES.executionFailed, message },
      });
      log.warn({ error: message }, 'execution failed');
    }
  }

  /**
   * Stores the run's rows and its COMPLETED record, and returns the record, with the rows
   * rendered when they are few; on any failure nothing of it stays. A small result commits
   * with its record in one transaction. A large one commits its rows first and then its
   * record: its JSON bytes, which the record holds, are counted over the committed table in
   * 41–66 ms against 77–85 inside the transaction that made it (a million rows of five
   * columns, a scratch script, 2026-11-23: DuckDB scans a transaction's own new rows more
   * slowly). A crash between the two commits leaves a table without a finished record, which
   * the next start drops (`open`).
   */
  private async storeResult(
    running: Running,
    started: Execution,
    session: InterruptibleSession,
    cut = false,
  ): Promise<{ execution: Execution; rows?: string[] }> {
    await session.run('BEGIN TRANSACTION');
    try {
      const snapshot = await createSnapshot(
        session,
        started.id,
        running.request.sql,
        this.options.maxResultRows,
        cut,
      );
      // An interrupt that came between two statements stopped nothing: check.
      if (running.cancelled || running.timedOut) throw new Error('interrupted');
      const table = snapshotName(started.id);
      let rows: string[] | undefined;
      let bytes: number;
      if (snapshot.rowCount <= RENDERED_ROWS_MAX) {
        rows = (await session.query(jsonRowsQuery(table, snapshot.columns))).rows.map(
          (row) => row[0] as string,
        );
        bytes = jsonArrayBytes(rows);
      } else {
        await session.run('COMMIT');
        const [counted] = await session.all<{ bytes: bigint }>(resultBytesQuery(table, snapshot.columns));
        bytes = Number(counted?.bytes ?? 2);
        if (running.cancelled || running.timedOut) throw new Error('interrupted');
        await session.run('BEGIN TRANSACTION');
      }
      const endedAt = new Date();
      const execution: Execution = {
        ...started,
        state: snapshot.truncated ? STATES.completedPartial : STATES.completed,
        endedAt,
        expiresAt: this.expiry(endedAt),
        columns: snapshot.columns,
        rowCount: snapshot.rowCount,
        resultBytes: bytes,
      };
      await this.store.append(session, execution);
      await session.run('COMMIT');
      return { execution, rows };
    } catch (error) {
      // Nothing to roll back when the rows were committed: the run's caller drops them.
      await session.run('ROLLBACK').catch(() => undefined);
      // Over the cap: stored again, cut to it (snapshot.ts says why in two tries).
      if (error instanceof ResultOverCapError && !cut && !running.cancelled && !running.timedOut)
        return this.storeResult(running, started, session, true);
      throw error;
    }
  }

  private async finish(execution: Execution): Promise<void> {
    await this.store.save(execution);
    this.announce(execution);
  }

  /** A finished execution is in memory: forget the cached latest result and tell listeners. */
  private announce(execution: Execution, rows?: readonly string[]): void {
    clearTimeout(this.unrecorded.get(execution.id));
    this.unrecorded.delete(execution.id);
    this.latestResults.delete(execution.queryId);
    for (const listener of this.listeners) listener(execution, rows);
  }

  /**
   * Drops the snapshots of executions past their expiry and, a day later, their records.
   * Until then an expired execution still answers, as QUERY_STATE_EXPIRED without rows.
   */
  async purgeExpired(now = Date.now()): Promise<number> {
    let purged = 0;
    for (const execution of this.store.all()) {
      if (!isFinished(execution) || !execution.expiresAt || execution.expiresAt.getTime() > now) continue;
      const recordGone = execution.expiresAt.getTime() + 86_400_000 <= now;
      if (this.dropped.has(execution.id) && !recordGone) continue;
      await this.database.write(async (session) => {
        await dropSnapshot(session, execution.id);
        if (recordGone) await this.store.remove(execution.id, session);
      });
      this.latestResults.delete(execution.queryId);
      if (recordGone) this.dropped.delete(execution.id);
      else this.dropped.add(execution.id);
      purged++;
    }
    return purged;
  }
}

/** DuckDB's message without the lines after the first (a caret, or hints naming other tables). */
function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}
