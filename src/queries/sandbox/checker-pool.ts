import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ApiError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { embeddedManifest, isSingleExecutable, readEmbedded } from '../../packaging/single-executable.js';
import { CheckedSqlCache } from './checked-sql-cache.js';
import type { FromWorker, ToWorker } from './messages.js';
import { SqlRefusal } from './refusals.js';
import type { NamedTable, QualifiedTable } from './table-names.js';
import type { CheckOptions } from './tree-checker.js';

/**
 * The sandbox's checker: a few worker threads (check-worker.ts), each with its own DuckDB,
 * that parse, walk, rewrite and verify users' SQL, and a bounded queue in front of them. The
 * event loop only passes messages and resolves table names, so a long check no longer stalls
 * every other request, and the check borrows none of the service's reader connections.
 *
 * Measured (docs/library-notes.md, "The sandbox on worker threads"): `@duckdb/node-bindings`
 * loads in worker threads beside the main thread's instance; a worker starts in 0.2–0.5 s; a
 * `SELECT 1` check costs about what it did on the main thread. But a worker stopped while one
 * of its DuckDB calls is in flight (`worker.terminate()`, `process.exit()`, an out-of-memory
 * end) aborts the whole process ("terminate called after throwing an instance of
 * 'Napi::Error'", exit code 134), so this pool never stops a worker that is checking: a worker
 * is asked to close, closes its DuckDB and ends by itself; one stuck on a check is replaced and
 * left to end when it can.
 *
 * Failures are answers, never hangs: a queue full or a wait past `maxWaitMs` is a 503 saying
 * so; a worker that ends (or takes longer than RUN_LIMIT_MS on one check) fails its check with
 * a 503 and is replaced; out of memory is a 400, the SQL's own doing.
 */

export interface SqlCheckerOptions {
  /** Worker threads (SANDBOX_WORKERS). */
  workers: number;
  /** Checks that may wait for a worker (SANDBOX_QUEUE_LIMIT); past it, a 503. */
  maxWaiting: number;
  /** How long a check may wait for a worker (SANDBOX_WAIT_SECONDS); past it, a 503. */
  maxWaitMs: number;
  logger?: Logger;
  /** For tests: another worker script speaking the same messages. */
  workerFile?: string;
  /** For tests: V8's old generation of each worker, in MB (WORKER_HEAP_MB otherwise). */
  workerHeapMb?: number;
  /** For tests: how long one check may run (RUN_LIMIT_MS otherwise). */
  runLimitMs?: number;
}

/** Resolves the tables a check names: what each means, or a throw (e.g. SqlRefusal). */
export type TableResolution = (tables: NamedTable[]) => Promise<QualifiedTable[]>;

/** A worker that has run one check this long is stuck (a bug): it is replaced. */
const RUN_LIMIT_MS = 60_000;
/** V8's old generation of a worker; the largest tree read is about 20 MB of JSON. */
const WORKER_HEAP_MB = 768;

interface Job {
  id: number;
  sql: string;
  options: CheckOptions;
  resolve: TableResolution;
  done: (sql: string) => void;
  fail: (error: unknown) => void;
  waitTimer?: NodeJS.Timeout;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job?: Job;
  runTimer?: NodeJS.Timeout;
  exited: Promise<void>;
}

const unavailable = (message: string) => new ApiError('unavailable', message, { 'Retry-After': '1' });
const SHUTTING_DOWN = 'the service is shutting down';

let embeddedSource: string | undefined;

export class SqlChecker {
  private readonly slots: (Slot | undefined)[];
  /** Workers replaced while stuck on a check, asked to close: they end when it does. */
  private readonly retired = new Set<Slot>();
  private readonly waiting: Job[] = [];
  private nextId = 1;
  private closed = false;
  private readonly checked = new CheckedSqlCache();

  constructor(private readonly options: SqlCheckerOptions) {
    this.slots = new Array(options.workers).fill(undefined);
  }

  /**
   * Checks `sql` on a worker; `resolve` is called (here, on the main thread) with its tables.
   * SQL checked before whose tables resolve as they did then takes that check's answer
   * (checked-sql-cache.ts) without a worker.
   */
  async check(sql: string, resolve: TableResolution, options: CheckOptions = {}): Promise<string> {
    if (this.closed) throw unavailable(SHUTTING_DOWN);
    const key = CheckedSqlCache.key(sql, options);
    const kept = this.checked.get(key);
    if (kept) {
      const answer = kept.answerFor(kept.tables.length === 0 ? [] : await resolve(kept.tables));
      if (answer !== undefined) return answer;
    }
    let named: NamedTable[] = [];
    let resolved: QualifiedTable[] = [];
    const remembering: TableResolution = async (tables) => {
      named = tables;
      resolved = await resolve(tables);
      return resolved;
    };
    const answer = await this.onWorker(sql, remembering, options);
    this.checked.set(key, named, resolved, answer);
    return answer;
  }

  private onWorker(sql: string, resolve: TableResolution, options: CheckOptions): Promise<string> {
    if (this.waiting.length >= this.options.maxWaiting) {
      return Promise.reject(
        unavailable(`too many SQL checks are waiting (${this.waiting.length}); try again in a moment`),
      );
    }
    return new Promise<string>((done, fail) => {
      const job: Job = { id: this.nextId++, sql, options, resolve, done, fail };
      job.waitTimer = setTimeout(() => this.expire(job), this.options.maxWaitMs);
      this.waiting.push(job);
      this.dispatch();
    });
  }

  /** Starts every worker now, so that the first checks do not wait for one to start. */
  warm(): void {
    for (let i = 0; i < this.slots.length; i++) if (!this.slots[i] && !this.closed) this.start(i);
  }

  /**
   * Checks waiting for a worker, checks running, workers started, checks sent to a worker so
   * far and answers kept (checked-sql-cache.ts): for tests and metrics.
   */
  get load(): { waiting: number; running: number; workers: number; sent: number; kept: number } {
    const slots = this.slots.filter((slot): slot is Slot => slot !== undefined);
    return {
      waiting: this.waiting.length,
      running: slots.filter((slot) => slot.job).length,
      workers: slots.length,
      sent: this.nextId - 1,
      kept: this.checked.size,
    };
  }

  /**
   * Fails what waits, and asks every worker to close its DuckDB (which interrupts a check at its
   * next step: a 503) and end, waiting at most `graceMs`; a worker still busy then is left to
   * end by itself (stopping it could abort the process, see above) and no longer keeps the
   * process alive.
   */
  async close(graceMs = 5_000): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) this.settle(job, unavailable(SHUTTING_DOWN));
    const slots = [...this.slots, ...this.retired].filter((slot): slot is Slot => slot !== undefined);
    for (const slot of slots) this.post(slot, { type: 'close' });
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), graceMs);
    });
    const ended = await Promise.race([Promise.all(slots.map((slot) => slot.exited)).then(() => true), grace]);
    clearTimeout(timer);
    if (ended) return;
    for (const slot of slots) slot.worker.unref();
    this.options.logger?.warn({ ms: graceMs }, 'a SQL check worker did not end in time');
  }

  private dispatch(): void {
    for (let i = 0; i < this.slots.length && this.waiting.length > 0; i++) {
      const slot = this.slots[i] ?? this.start(i);
      if (!slot.ready || slot.job) continue;
      const job = this.waiting.shift() as Job;
      clearTimeout(job.waitTimer);
      this.run(slot, job);
    }
  }

  private expire(job: Job): void {
    const index = this.waiting.indexOf(job);
    if (index < 0) return;
    this.waiting.splice(index, 1);
    this.settle(
      job,
      unavailable(
        `the SQL checker is busy: this check waited ${this.options.maxWaitMs / 1000} s for a worker; try again in a moment`,
      ),
    );
  }

  private start(index: number): Slot {
    const worker = this.startWorker();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const slot: Slot = { worker, ready: false, exited };
    this.slots[index] = slot;
    // Idle workers keep no process alive; one with a check to do does.
    if (this.waiting.length === 0) worker.unref();
    worker.on('message', (message: FromWorker) => this.received(slot, message));
    worker.on('error', (error) => this.lost(index, slot, error));
    worker.on('exit', (code) => this.lost(index, slot, new Error(`the worker ended with code ${code}`)));
    return slot;
  }

  private startWorker(): Worker {
    const options = {
      resourceLimits: { maxOldGenerationSizeMb: this.options.workerHeapMb ?? WORKER_HEAP_MB },
    };
    if (this.options.workerFile) return new Worker(this.options.workerFile, options);
    if (isSingleExecutable()) {
      const file = embeddedManifest().sandboxWorker;
      if (!file) throw new Error('this build has no sandbox worker');
      embeddedSource ??= readEmbedded(file).toString('utf8');
      return new Worker(embeddedSource, { ...options, eval: true });
    }
    return new Worker(path.join(import.meta.dirname, 'check-worker.mjs'), options);
  }

  private run(slot: Slot, job: Job): void {
    slot.job = job;
    slot.worker.ref();
    const limit = this.options.runLimitMs ?? RUN_LIMIT_MS;
    slot.runTimer = setTimeout(() => this.retire(slot, job, limit), limit);
    this.post(slot, { type: 'check', id: job.id, sql: job.sql, options: job.options });
  }

  private received(slot: Slot, message: FromWorker): void {
    if (message.type === 'ready') {
      slot.ready = true;
      this.dispatch();
      return;
    }
    const job = slot.job;
    if (!job || job.id !== message.id) return;
    switch (message.type) {
      case 'tables':
        job.resolve(message.tables).then(
          (targets) => {
            if (slot.job === job) this.post(slot, { type: 'resolved', id: job.id, targets });
          },
          (error: unknown) => {
            if (slot.job !== job) return;
            this.post(slot, { type: 'abandon', id: job.id });
            this.finish(slot, job, error);
          },
        );
        return;
      case 'done':
        this.finish(slot, job, undefined, message.sql);
        return;
      case 'refused': {
        const { message: text, location, unit, kind } = message.refusal;
        this.finish(slot, job, new SqlRefusal(text, location, unit, kind));
        return;
      }
      case 'failed':
        // At shutdown the worker's DuckDB interrupts what it was doing: not a failure of the check.
        if (this.closed) {
          this.finish(slot, job, unavailable(SHUTTING_DOWN));
          return;
        }
        this.options.logger?.error({ error: message.message }, 'the SQL check failed');
        this.finish(slot, job, new Error(`the SQL check failed: ${message.message.split('\n')[0]}`));
        return;
    }
  }

  private finish(slot: Slot, job: Job, error: unknown, sql?: string): void {
    clearTimeout(slot.runTimer);
    slot.job = undefined;
    if (this.waiting.length === 0) slot.worker.unref();
    this.settle(job, error, sql);
    this.dispatch();
  }

  private settle(job: Job, error: unknown, sql?: string): void {
    clearTimeout(job.waitTimer);
    if (error === undefined) job.done(sql as string);
    else job.fail(error);
  }

  /**
   * A check ran past its limit: it fails, another worker takes the slot, and this one is asked
   * to close once its check ends (stopping it now could abort the process, see above).
   */
  private retire(slot: Slot, job: Job, limitMs: number): void {
    const index = this.slots.indexOf(slot);
    if (index < 0 || slot.job !== job) return;
    this.slots[index] = undefined;
    this.retired.add(slot);
    slot.job = undefined;
    slot.worker.unref();
    void slot.exited.then(() => this.retired.delete(slot));
    this.post(slot, { type: 'close' });
    this.options.logger?.warn({ ms: limitMs }, 'a SQL check ran too long; its worker is replaced');
    this.settle(job, unavailable(`checking this SQL took more than ${limitMs / 1000} s; try again later`));
    this.dispatch();
  }

  /** A worker ended: its check fails, and the next check starts a new one. */
  private lost(index: number, slot: Slot, error: Error): void {
    if (this.slots[index] !== slot) return;
    this.slots[index] = undefined;
    clearTimeout(slot.runTimer);
    const job = slot.job;
    slot.job = undefined;
    if (job) this.settle(job, this.lostError(error));
    if (this.closed) return;
    if (!slot.ready) {
      // It never started: the same would happen to every check waiting.
      this.options.logger?.error({ err: error }, 'the SQL checker could not start a worker');
      for (const waiting of this.waiting.splice(0)) {
        this.settle(waiting, unavailable(`the SQL checker could not start: ${error.message}`));
      }
      return;
    }
    this.options.logger?.warn({ err: error }, 'a SQL check worker ended');
    this.dispatch();
  }

  private lostError(error: Error): unknown {
    if ((error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return new SqlRefusal('this SQL is too large to check: checking it ran out of memory', undefined);
    }
    if (this.closed) return unavailable(SHUTTING_DOWN);
    return unavailable(`the SQL check stopped (${error.message}); try again`);
  }

  private post(slot: Slot, message: ToWorker): void {
    slot.worker.postMessage(message);
  }
}
