import { monotonicFactory } from 'ulid';
import type { Logger } from '../log.js';
import type { Database, InterruptibleSession } from '../storage/database.js';
import { qualifiedName } from '../storage/sql.js';
import {
  type Execution,
  FAILURE_TYPES,
  hasResult,
  isFinished,
  SNAPSHOT_SCHEMA,
  STATES,
  snapshotTable,
} from './execution.js';
import { ExecutionStore } from './execution-store.js';
import { resultBytesQuery } from './row-rendering.js';
import type { SavedQuery } from './saved-queries.js';
import { createSnapshot, dropSnapshot, SnapshotError } from './snapshot.js';

/**
 * Runs saved queries as executions, one at a time, each on a connection of its own so
 * that serving and uploads go on meanwhile. A run's rows become visible only when its
 * record says COMPLETED: until then every request keeps getting the previous result.
 */

export interface ExecutionsOptions {
  maxResultRows: number;
  retentionHours: number;
  /** Executions that may run at once, so one slow query does not hold up the others. */
  concurrency?: number;
}

interface Running {
  execution: Execution;
  session?: InterruptibleSession;
  cancelled: boolean;
  done: Promise<void>;
}

type Listener = (execution: Execution) => void;

/** Ids sort in submission order, even within one millisecond. */
const nextId = monotonicFactory();

export class Executions {
  readonly store: ExecutionStore;
  private readonly queries: Map<number, SavedQuery>;
  private readonly queue: Execution[] = [];
  private readonly running = new Map<string, Running>();
  private readonly listeners: Listener[] = [];
  private closed = false;
  /** Executions whose snapshot is known to be gone, so purging does not drop them again. */
  private readonly dropped = new Set<string>();
  private readonly latestResults = new Map<number, Execution | undefined>();

  constructor(
    private readonly database: Database,
    savedQueries: readonly SavedQuery[],
    private readonly options: ExecutionsOptions,
    private readonly logger: Logger,
  ) {
    this.store = new ExecutionStore(database);
    this.queries = new Map(savedQueries.map((q) => [q.id, q]));
  }

  /** Loads the records; runs that a crash or shutdown cut short are marked failed. */
  async open(): Promise<void> {
    for (const execution of await this.store.load()) {
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

  query(id: number): SavedQuery | undefined {
    return this.queries.get(id);
  }

  savedQueries(): SavedQuery[] {
    return [...this.queries.values()];
  }

  get(id: string): Execution | undefined {
    return this.store.get(id);
  }

  /**
   * The latest execution of the query that has a result (complete or partial). Asked on
   * every results request, so remembered until an execution changes.
   */
  latestWithResult(queryId: number): Execution | undefined {
    if (!this.latestResults.has(queryId)) this.latestResults.set(queryId, this.latest(queryId, hasResult));
    return this.latestResults.get(queryId);
  }

  /** The latest execution of the query in any state. */
  latest(queryId: number, accept: (e: Execution) => boolean = () => true): Execution | undefined {
    let best: Execution | undefined;
    for (const execution of this.store.all()) {
      if (execution.queryId !== queryId || !accept(execution)) continue;
      if (!best || execution.id > best.id) best = execution;
    }
    return best;
  }

  /** 1-based place of a pending execution in the queue; undefined once it runs. */
  queuePosition(id: string): number | undefined {
    const index = this.queue.findIndex((e) => e.id === id);
    return index < 0 ? undefined : index + 1;
  }

  /** Called with each execution that finished (any state), after its record is saved. */
  onFinished(listener: Listener): void {
    this.listeners.push(listener);
  }

  /** Queues a run of the saved query; resolves once it is recorded as pending. */
  async submit(queryId: number): Promise<Execution> {
    if (this.closed) throw new Error('the executions are closed');
    const query = this.queries.get(queryId);
    if (!query) throw new Error(`no saved query ${queryId}`);
    const execution: Execution = { id: nextId(), queryId, state: STATES.pending, submittedAt: new Date() };
    await this.store.save(execution);
    this.queue.push(execution);
    this.pump();
    return execution;
  }

  /** Whether a run of the query is queued or running. */
  isBusy(queryId: number): boolean {
    return (
      [...this.running.values()].some((r) => r.execution.queryId === queryId) ||
      this.queue.some((e) => e.queryId === queryId)
    );
  }

  /** Cancels a pending or running execution; false when it had already finished. */
  async cancel(id: string): Promise<boolean> {
    const index = this.queue.findIndex((e) => e.id === id);
    if (index >= 0) {
      const [execution] = this.queue.splice(index, 1);
      if (execution)
        await this.finish({
          ...execution,
          state: STATES.cancelled,
          cancelledAt: new Date(),
          endedAt: new Date(),
        });
      return true;
    }
    const running = this.running.get(id);
    if (running) {
      running.cancelled = true;
      running.session?.interrupt();
      return true;
    }
    return false;
  }

  /** Resolves when nothing is queued or running. */
  async whenIdle(): Promise<void> {
    while (this.running.size > 0 || this.queue.length > 0) {
      await Promise.all([...this.running.values()].map((r) => r.done));
    }
  }

  /** Stops taking work and interrupts the running execution (the database then closes). */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
    for (const running of this.running.values()) {
      running.cancelled = true;
      running.session?.interrupt();
    }
  }

  private pump(): void {
    while (!this.closed && this.running.size < (this.options.concurrency ?? 2)) {
      const next = this.queue.shift();
      if (!next) return;
      const running: Running = { execution: next, cancelled: false, done: Promise.resolve() };
      this.running.set(next.id, running);
      running.done = this.run(running)
        .catch((error: unknown) =>
          this.logger.error({ err: error, executionId: next.id }, 'execution bookkeeping failed'),
        )
        .finally(() => {
          this.running.delete(next.id);
          this.pump();
        });
    }
  }

  private expiry(from: Date): Date {
    return new Date(from.getTime() + this.options.retentionHours * 3_600_000);
  }

  private async run(running: Running): Promise<void> {
    const pending = running.execution;
    const query = this.queries.get(pending.queryId) as SavedQuery;
    const started: Execution = { ...pending, state: STATES.executing, startedAt: new Date() };
    await this.store.save(started);
    const log = this.logger.child({ executionId: started.id, queryId: started.queryId });
    log.info('execution started');
    try {
      const summary = await this.database.dedicated(async (session) => {
        running.session = session;
        if (running.cancelled) throw new Error('cancelled before it started');
        const snapshot = await createSnapshot(session, started.id, query.sql, this.options.maxResultRows);
        const table = qualifiedName(SNAPSHOT_SCHEMA, snapshotTable(started.id));
        const [bytes] = await session.all<{ bytes: bigint }>(resultBytesQuery(table, snapshot.columns));
        return { ...snapshot, resultBytes: Number(bytes?.bytes ?? 2) };
      });
      const endedAt = new Date();
      await this.finish({
        ...started,
        state: summary.truncated ? STATES.completedPartial : STATES.completed,
        endedAt,
        expiresAt: this.expiry(endedAt),
        columns: summary.columns,
        rowCount: summary.rowCount,
        resultBytes: summary.resultBytes,
      });
      log.info(
        { rows: summary.rowCount, ms: endedAt.getTime() - (started.startedAt as Date).getTime() },
        'execution completed',
      );
    } catch (error) {
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
      const message = error instanceof SnapshotError ? error.message : firstLine(error);
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

  private async finish(execution: Execution): Promise<void> {
    await this.store.save(execution);
    this.latestResults.clear();
    for (const listener of this.listeners) listener(execution);
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
      this.latestResults.clear();
      if (recordGone) this.dropped.delete(execution.id);
      else this.dropped.add(execution.id);
      purged++;
    }
    return purged;
  }
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}
