import { monotonicFactory } from 'ulid';
import { ApiError } from '../errors.js';
import type { Logger } from '../log.js';
import { failureWithColumnHint } from '../storage/binder-hints.js';
import { type Database, DatabaseClosingError } from '../storage/database.js';
import { qualifiedName } from '../storage/sql.js';
import { isDiskFull } from '../storage/storage-error.js';
import { FairLane, type LaneOptions } from '../workload/fair-lane.js';
import {
  type Execution,
  FAILURE_TYPES,
  hasResult,
  isFinished,
  NO_PARAMETERS,
  OPERATOR,
  SNAPSHOT_SCHEMA,
  STATES,
  snapshotTable,
  visibleState,
} from './execution.js';
import { ExecutionStore } from './execution-store.js';
import { KeyQuotas } from './key-quotas.js';
import type { Lane, RunRequest, StorageLimits } from './run-request.js';
import { type Running, RunResults, stop } from './run-results.js';
import { dropSnapshot, SnapshotError } from './snapshot.js';
import { type StatusWaitOptions, StatusWaits } from './status-wait.js';
import { StoringWatch } from './storing-watch.js';

/**
 * Runs queries as executions, each on a connection of its own so that serving and uploads
 * go on meanwhile. A run's rows become visible only when its record says COMPLETED: until
 * then every request keeps getting the previous result.
 *
 * Two lanes, each a FairLane (src/workload/fair-lane.ts) with its own slots and queue: the
 * operator's query files refreshed by the scheduler (trusted SQL), and users' runs (their SQL,
 * and their runs of the operator's files), shared fairly between keys: one key runs at most
 * `perKey` at once and keys take turns, so nobody's work waits behind one key's queue, and
 * the scheduler's refreshes never wait behind users. Many runs at once are fine: DuckDB's
 * scheduler interleaves their tasks, so a short query next to long ones takes a few times its
 * time alone instead of waiting for them (measured: a 10–25 ms aggregate took 30–130 ms while
 * two or four minute-long joins ran, 2026-11-27, docs/library-notes.md). Users' runs are
 * interrupted past a time limit, and their results are held to the storage limits of
 * DESIGN §12 (storing-watch.ts while stored, key-quotas.ts once kept).
 */

export type { Lane, RunRequest, StorageLimits } from './run-request.js';

export interface ExecutionsOptions {
  maxResultRows: number;
  retentionHours: number;
  /** Each lane's slots and queue bounds (default: 2 slots, no bound on queues). */
  lanes?: Partial<Record<Lane, LaneOptions>>;
  /** Users' executions are interrupted after this many seconds (default: never). */
  usersTimeoutSeconds?: number;
  /** Users' results held to these limits (default: none; the `refresh` command runs without). */
  storage?: StorageLimits;
  /** When a status request waits for the execution's end (default: status-wait.ts). */
  statusWait?: StatusWaitOptions;
}

/**
 * Told of each finished execution. `rows`, for a small result (RENDERED_ROWS_MAX), are its
 * rows as JSON object texts, all columns in row order, rendered by the run.
 */
type Listener = (execution: Execution, rows?: readonly string[]) => void;

/** Ids sort in submission order, even within one millisecond. */
const nextId = monotonicFactory();

/**
 * A new execution's PENDING record is written only if it has not finished this soon: most
 * users' queries finish first and are then recorded once, as they are announced
 * (ExecutionStore.saveAfter; each commit is an fsync; a small write transaction cost 2.6 ms
 * of CPU here, and 3–7 ms of the writer in the middle of a 60 ms query's run on 2 cores).
 * A crash within this time forgets the execution; after it, the record is there and a
 * restart marks the execution failed.
 */
const PENDING_RECORD_DELAY_MS = 100;

const LANES: readonly Lane[] = ['operator', 'users'];

/** The operator's lane has one key: its refreshes go in order. */
const OPERATOR_KEY = OPERATOR;

const DEFAULT_LANE: LaneOptions = { slots: 2, perKey: 2, queuedPerKey: Number.POSITIVE_INFINITY };

export class Executions {
  readonly store: ExecutionStore;
  private readonly lanes: Record<Lane, FairLane>;
  /** Executions waiting in a lane, by id. */
  private readonly waiting = new Map<string, Pick<Running, 'execution' | 'request'>>();
  private readonly running = new Map<string, Running>();
  private readonly listeners: Listener[] = [];
  private readonly hooks: ((execution: Execution) => Promise<void>)[] = [];
  private closed = false;
  private readonly latestResults = new Map<number, Execution | undefined>();
  /** Executions whose PENDING record is not written yet, with the timer that will write it. */
  private readonly unrecorded = new Map<string, NodeJS.Timeout>();
  private readonly watch: StoringWatch | undefined;
  private readonly results: RunResults;
  private readonly quotas: KeyQuotas;
  /** Statements of other doors (the Postgres wire) holding users' slots, by a counter. */
  private borrowings = 0;
  /** Other doors' statements waiting for a slot, refused at shutdown. */
  private readonly doors = new Map<string, (error: Error) => void>();
  private readonly waits: StatusWaits;

  constructor(
    private readonly database: Database,
    private readonly options: ExecutionsOptions,
    private readonly logger: Logger,
  ) {
    this.store = new ExecutionStore(database, logger);
    this.waits = new StatusWaits(options.statusWait);
    this.lanes = {
      operator: new FairLane(options.lanes?.operator ?? DEFAULT_LANE),
      users: new FairLane(options.lanes?.users ?? DEFAULT_LANE),
    };
    const storage = options.storage;
    if (storage) {
      this.watch = new StoringWatch(
        database,
        {
          maxResultBytes: storage.maxResultBytes,
          reserveBytes: storage.reserveBytes,
          dataDir: storage.dataDir,
          slots: this.lanes.operator.limits.slots + this.lanes.users.limits.slots,
        },
        logger,
      );
    }
    this.results = new RunResults(database, this.watch, {
      maxResultRows: options.maxResultRows,
      maxResultBytes: storage?.maxResultBytes ?? Number.POSITIVE_INFINITY,
      expiry: (from) => this.expiry(from),
    });
    this.quotas = new KeyQuotas(database, this.store, storage, logger);
  }

  /**
   * Loads the records; runs that a crash or shutdown cut short are marked failed, and result
   * tables that no finished record names (a large result's rows are committed before its
   * record) are dropped.
   */
  async open(): Promise<void> {
    await this.watch?.open();
    const executions = await this.store.load();
    // Failed and cancelled runs keep no rows: their tables, if a drop failed, go too.
    const kept = new Set(executions.filter(hasResult).map((execution) => snapshotTable(execution.id)));
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
    this.quotas.loaded();
  }

  get(id: string): Execution | undefined {
    return this.store.get(id);
  }

  /** The query's executions, oldest first. */
  ofQuery(queryId: number): readonly Execution[] {
    return this.store.ofQuery(queryId);
  }

  /** The executions `owner` ran, oldest first. */
  ofOwner(owner: string): readonly Execution[] {
    return this.store.ofOwner(owner);
  }

  /** Bytes of `owner`'s kept results, as RESULT_STORAGE_PER_KEY counts them (key-quotas.ts). */
  resultBytesOf(owner: string): number {
    return this.quotas.usedBy(owner);
  }

  /**
   * Settles once the execution's result table is written: a small result is seen before its
   * table is (small-result.ts), so whoever reads the table by SQL waits for this first.
   */
  resultStored(id: string): Promise<void> {
    return this.store.landed([id]);
  }

  /** The user's SQL of these finished ad-hoc executions (RunRequest.text), where it was kept. */
  sqlTexts(ids: readonly string[]): Promise<Map<string, string>> {
    return this.store.sqlTexts(ids);
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

  /**
   * 1-based place of a pending execution among those that start before it in its lane, as
   * the lane's turns go (FairLane.position); undefined once it runs.
   */
  queuePosition(id: string): number | undefined {
    for (const lane of LANES) {
      const position = this.lanes[lane].position(id);
      if (position !== undefined) return position;
    }
    return undefined;
  }

  /**
   * The execution as a status request answers it: a request that follows closely the previous
   * look at an unfinished execution waits for its end, a short while at most (status-wait.ts).
   */
  async statusLook(execution: Execution): Promise<Execution> {
    if (isFinished(execution)) return execution;
    await this.waits.look(execution.id);
    return this.store.get(execution.id) ?? execution;
  }

  /** Called with each execution that finished (any state), after its record is saved (see Listener). */
  onFinished(listener: Listener): void {
    this.listeners.push(listener);
  }

  /**
   * Awaited with each execution that completed, after its record is saved and before anyone
   * sees it completed: work that must be done by then (a materialized view's table takes the
   * rows of its refresh, so that a client who sees the refresh completed reads the new rows).
   * A failure is the hook's own to record: the execution completed all the same.
   */
  beforeSeen(hook: (execution: Execution) => Promise<void>): void {
    this.hooks.push(hook);
  }

  /**
   * Queues a run; resolves once it is recorded as pending. A key whose waiting runs are at
   * its lane's bound is refused with a 429, and nothing is recorded.
   */
  async submit(request: RunRequest): Promise<Execution> {
    if (this.closed) throw new DatabaseClosingError();
    const lane = this.lanes[request.lane];
    const key = laneKey(request);
    if (lane.isFull(key)) throw queueFull(lane.limits.queuedPerKey);
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
    this.waits.submitted(execution.id);
    if (request.text !== undefined) this.store.holdText(execution.id, request.text);
    const timer = setTimeout(() => this.recordPending(execution.id), PENDING_RECORD_DELAY_MS);
    timer.unref();
    this.unrecorded.set(execution.id, timer);
    const queued = { execution, request };
    this.waiting.set(execution.id, queued);
    lane.enqueue(key, execution.id, () => this.start(queued));
    return execution;
  }

  /**
   * A run of the query with these parameter values that is waiting to start, if any: a new
   * request for the same run of an operator's file takes that one instead of queueing another
   * (it will read the data as it is when it starts, after the request).
   */
  waitingRun(queryId: number, parameterSet: string = NO_PARAMETERS): Execution | undefined {
    for (const { execution } of this.waiting.values())
      if (execution.queryId === queryId && execution.parameterSet === parameterSet) return execution;
    return undefined;
  }

  /**
   * Runs `work` in one of the users' lane's slots of `owner`, once its turn comes: for
   * statements of the other doors to users' SQL (the Postgres wire protocol), which count
   * against the same limits as executions. A key whose waiting work is at the lane's bound is
   * refused with a 429.
   */
  async inUsersLane<T>(owner: string, work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new DatabaseClosingError();
    const lane = this.lanes.users;
    if (lane.isFull(owner)) throw queueFull(lane.limits.queuedPerKey);
    const id = `door-${++this.borrowings}`;
    await new Promise<void>((resolve, reject) => {
      this.doors.set(id, reject);
      lane.enqueue(owner, id, () => {
        this.doors.delete(id);
        resolve();
      });
    });
    try {
      return await work();
    } finally {
      lane.finished(owner);
    }
  }

  /** Whether a run of the query is queued or running. */
  isBusy(queryId: number): boolean {
    return (
      [...this.running.values()].some((r) => r.execution.queryId === queryId) ||
      [...this.waiting.values()].some((q) => q.execution.queryId === queryId)
    );
  }

  /** Cancels a pending or running execution; false when it had already finished. */
  async cancel(id: string): Promise<boolean> {
    const queued = this.waiting.get(id);
    if (queued && this.lanes[queued.request.lane].withdraw(id)) {
      this.waiting.delete(id);
      const now = new Date();
      await this.finish({
        ...queued.execution,
        state: STATES.cancelled,
        cancelledAt: now,
        endedAt: now,
        expiresAt: this.expiry(now),
      });
      return true;
    }
    const running = this.running.get(id);
    // A run that was seen completed holds its slot while its record is written: it is over.
    const seen = this.store.get(id);
    if (running && !(seen && isFinished(seen))) {
      running.cancelled = true;
      stop(running);
      return true;
    }
    return false;
  }

  /**
   * Drops an execution's result now, before its expiry (DESIGN §12): its rows are gone, and
   * it answers QUERY_STATE_EXPIRED from then on. False when it has no result to drop.
   */
  async deleteResult(id: string): Promise<boolean> {
    const execution = this.store.get(id);
    if (!execution || !hasResult(execution) || visibleState(execution) === STATES.expired) return false;
    await this.quotas.expire([execution]);
    this.latestResults.delete(execution.queryId);
    return true;
  }

  /** Resolves when nothing is queued or running. */
  async whenIdle(): Promise<void> {
    while (this.running.size > 0 || this.waiting.size > 0) {
      await Promise.all([...this.running.values()].map((r) => r.done));
    }
  }

  /** Stops taking work and interrupts the running executions (the database then closes). */
  close(): void {
    this.closed = true;
    // Queued before the database closes, so that the next start finds them and marks them failed.
    for (const id of [...this.unrecorded.keys()]) this.recordPending(id);
    for (const lane of LANES) this.lanes[lane].clearWaiting();
    this.waiting.clear();
    for (const refuse of this.doors.values()) refuse(new DatabaseClosingError());
    this.doors.clear();
    for (const running of this.running.values()) {
      running.cancelled = true;
      stop(running);
    }
    this.watch?.close();
    this.waits.close();
    this.quotas.close();
  }

  /**
   * Drops the snapshots of executions past their expiry and, a day later, their records.
   * Until then an expired execution still answers, as QUERY_STATE_EXPIRED without rows.
   */
  purgeExpired(now = Date.now()): Promise<number> {
    return this.quotas.purgeExpired(now, (execution) => this.latestResults.delete(execution.queryId));
  }

  /** Writes the PENDING record of an execution that has not finished (see PENDING_RECORD_DELAY_MS). */
  private recordPending(id: string): void {
    clearTimeout(this.unrecorded.get(id));
    this.unrecorded.delete(id);
    const execution = this.store.get(id);
    if (!execution || isFinished(execution)) return;
    // As first recorded: EXECUTING lives in memory only.
    this.store.savePending({ ...execution, state: STATES.pending }).catch((error: unknown) => {
      const level = this.closed || error instanceof DatabaseClosingError ? 'debug' : 'error';
      this.logger[level]({ err: error, executionId: id }, 'could not record a new execution');
    });
  }

  /** Its lane says it may run now. */
  private start(queued: Pick<Running, 'execution' | 'request'>): void {
    const id = queued.execution.id;
    this.waiting.delete(id);
    const running: Running = {
      ...queued,
      cancelled: false,
      timedOut: false,
      overReserve: false,
      done: Promise.resolve(),
    };
    this.running.set(id, running);
    running.done = this.run(running)
      .catch((error: unknown) => {
        // A run that ends while the service stops is not a failure of the service.
        const level = this.closed || error instanceof DatabaseClosingError ? 'debug' : 'error';
        this.logger[level]({ err: error, executionId: id }, 'execution bookkeeping failed');
      })
      .finally(() => {
        clearInterval(running.stopping);
        this.running.delete(id);
        this.lanes[queued.request.lane].finished(laneKey(queued.request));
      });
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
    const users = running.request.lane === 'users';
    const timer =
      users && timeout !== undefined
        ? setTimeout(() => {
            running.timedOut = true;
            stop(running);
          }, timeout * 1000)
        : undefined;
    try {
      if (users && (await this.watch?.belowReserve())) {
        running.overReserve = true;
        throw new Error('the disk is under its reserve');
      }
      const { execution: completed, rows, write } = await this.results.store(running, started);
      // The record first, awaited in the run's slot (a key's runs pay for their own records):
      // a quota's removal of this very execution waits for it. A small result's table is
      // written with it (`write`): whoever reads the table waits for it (resultStored).
      const recorded = this.store.saveAfter(completed, write);
      // The key's oldest results make room before the new one is seen; this one, when it is
      // the oldest, may go at once, or its result expire.
      const seen = users ? this.quotas.enforce(completed, this.latestResults) : completed;
      for (const hook of this.hooks)
        await hook(completed).catch((error: unknown) =>
          log.error({ err: error }, 'a hook of a completed execution failed'),
        );
      if (seen) this.store.remember(seen);
      this.announce(seen ?? completed, seen ? rows : undefined);
      if (!(await recorded) && write) this.unstored(completed, log);
      log.info(
        {
          rows: completed.rowCount,
          ms: (completed.endedAt as Date).getTime() - (started.startedAt as Date).getTime(),
          // Held in memory first, its table written as it was seen (small-result.ts).
          ...(write ? { heldInMemory: true } : {}),
        },
        'execution completed',
      );
    } catch (error) {
      await this.ended(running, started, error, log);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A small result was seen completed but its table could not be written (a full disk): it
   * is failed from now on, in memory; the next start forgets it (it has no record).
   */
  private unstored(completed: Execution, log: Logger): void {
    const current = this.store.get(completed.id);
    if (!current || current.state !== STATES.completed) return;
    this.store.remember({
      ...current,
      state: STATES.failed,
      error: { type: FAILURE_TYPES.executionFailed, message: 'the result could not be stored' },
    });
    this.latestResults.delete(completed.queryId);
    log.error('a small result was seen completed, but its table could not be written');
  }

  /** A run that did not complete: cancelled, stopped, or failed, with the reason. */
  private async ended(running: Running, started: Execution, error: unknown, log: Logger): Promise<void> {
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
    const message = failureMessage(running, error, this.options);
    await this.finish({
      ...started,
      state: STATES.failed,
      endedAt,
      expiresAt: this.expiry(endedAt),
      error: { type: FAILURE_TYPES.executionFailed, message },
    });
    log.warn({ error: message }, 'execution failed');
  }

  /**
   * Records a finished execution. One whose record cannot be written (a full disk, the
   * database closing) is finished in memory all the same, so that status and cancel tell the
   * truth; the next start finds its last record unfinished and marks it failed.
   */
  private async finish(execution: Execution): Promise<void> {
    try {
      await this.store.save(execution);
    } catch (error) {
      const level = this.closed || error instanceof DatabaseClosingError ? 'debug' : 'error';
      this.logger[level](
        { err: error, executionId: execution.id },
        'could not record the end of an execution',
      );
      this.store.remember(execution);
    }
    this.announce(execution);
  }

  /** A finished execution is in memory: forget the cached latest result and tell listeners. */
  private announce(execution: Execution, rows?: readonly string[]): void {
    clearTimeout(this.unrecorded.get(execution.id));
    this.unrecorded.delete(execution.id);
    this.latestResults.delete(execution.queryId);
    for (const listener of this.listeners) listener(execution, rows);
    this.waits.ended(execution.id);
  }
}

/** The key a run is scheduled under in its lane: its owner in the users' lane. */
function laneKey(request: RunRequest): string {
  return request.lane === 'users' ? request.owner : OPERATOR_KEY;
}

function queueFull(limit: number): ApiError {
  return new ApiError(
    'rate_limited',
    `this key has ${limit} executions waiting to run already (MAX_QUEUED_QUERIES_PER_KEY); wait for some to finish, or cancel them, before submitting more`,
    { 'Retry-After': '5' },
  );
}

/** Why a run failed, in words for its owner. */
function failureMessage(running: Running, error: unknown, options: ExecutionsOptions): string {
  if (running.timedOut)
    return `the query ran longer than the time limit of ${options.usersTimeoutSeconds} seconds (QUERY_TIMEOUT_SECONDS) and was stopped`;
  if (running.overReserve)
    return `DATA_DIR's disk has less free space than the reserve kept for uploads (DISK_RESERVE_BYTES, ${options.storage?.reserveBytes} bytes): the result was not stored; delete results you no longer need, or ask the operator for space`;
  if (isDiskFull(error)) return "DATA_DIR's disk is full: the result could not be stored";
  if (error instanceof SnapshotError) return error.message;
  // DuckDB's first line; for a column the binder did not find, its candidates too (binder-hints.ts).
  return failureWithColumnHint(error);
}
