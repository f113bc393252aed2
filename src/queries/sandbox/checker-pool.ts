import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ApiError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { embeddedManifest, isSingleExecutable, readEmbedded } from '../../packaging/single-executable.js';
import { SqlRefusal, type WrittenName } from '../tree-checker.js';
import type { FromWorker, ToWorker } from './messages.js';
import type { NamedTable } from './sql-check.js';

/**
 * The sandbox's checker: a few worker threads (check-worker.ts), each with its own DuckDB,
 * that parse, walk, rewrite and verify users' SQL, and a bounded queue in front of them. The
 * event loop only passes messages and resolves table names, so a long check no longer stalls
 * every other request, and the check borrows none of the service's reader connections.
 *
 * Measured (docs/library-notes.md, "The sandbox in worker threads"): `@duckdb/node-bindings`
 * loads in worker threads beside the main thread's instance; a worker starts in 0.2–0.5 s; a
 * `SELECT 1` check costs about what it did on the main thread (a message each way, 0.1 ms).
 *
 * Failures are answers, never hangs: a queue full or a wait past `maxWaitMs` is a 503 saying
 * so; a worker that dies (or runs one check past RUN_LIMIT_MS) fails its check with a 503 and
 * is replaced; out of memory is a 400, the SQL's own doing.
 */

export interface SqlCheckerOptions {
  /** Worker threads (SANDBOX_WORKERS). */
  workers: number;
  /** Checks that may wait for a worker (SANDBOX_QUEUE_LIMIT); past it, a 503. */
  maxWaiting: number;
  /** How long a check may wait for a worker (SANDBOX_WAIT_SECONDS); past it, a 503. */
  maxWaitMs: number;
  logger?: Logger;
}

/** Resolves the tables a check names: what each means, or a throw (e.g. SqlRefusal). */
export type TableResolution = (tables: NamedTable[]) => Promise<WrittenName[]>;

/** A worker that has run one check this long is stuck (a bug): it is replaced. */
const RUN_LIMIT_MS = 60_000;
/** V8's old generation of a worker; the largest tree read is about 20 MB of JSON. */
const WORKER_HEAP_MB = 768;
/** How long a worker gets to close its DuckDB at shutdown before it is terminated. */
const CLOSE_GRACE_MS = 2_000;

interface Job {
  id: number;
  sql: string;
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
  /** Why it was terminated, when it was. */
  stopped?: string;
}

const unavailable = (message: string) => new ApiError('unavailable', message, { 'Retry-After': '1' });

let embeddedSource: string | undefined;

function startWorker(): Worker {
  const options = { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } };
  if (isSingleExecutable()) {
    const file = embeddedManifest().sandboxWorker;
    if (!file) throw new Error('this build has no sandbox worker');
    embeddedSource ??= readEmbedded(file).toString('utf8');
    return new Worker(embeddedSource, { ...options, eval: true });
  }
  return new Worker(path.join(import.meta.dirname, 'check-worker.mjs'), options);
}

export class SqlChecker {
  private readonly slots: (Slot | undefined)[];
  private readonly waiting: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: SqlCheckerOptions) {
    this.slots = new Array(options.workers).fill(undefined);
  }

  /** Checks `sql` on a worker; `resolve` is called (here, on the main thread) with its tables. */
  check(sql: string, resolve: TableResolution): Promise<string> {
    if (this.closed) return Promise.reject(unavailable('the service is shutting down'));
    if (this.waiting.length >= this.options.maxWaiting) {
      return Promise.reject(
        unavailable(`too many SQL checks are waiting (${this.waiting.length}); try again in a moment`),
      );
    }
    return new Promise<string>((done, fail) => {
      const job: Job = { id: this.nextId++, sql, resolve, done, fail };
      job.waitTimer = setTimeout(() => this.expire(job), this.options.maxWaitMs);
      this.waiting.push(job);
      this.dispatch();
    });
  }

  /** Starts every worker now, so that the first checks do not wait for one to start. */
  warm(): void {
    for (let i = 0; i < this.slots.length; i++) if (!this.slots[i] && !this.closed) this.start(i);
  }

  /** Checks waiting for a worker, and workers busy, for tests and metrics. */
  get load(): { waiting: number; running: number; workers: number } {
    const slots = this.slots.filter((slot): slot is Slot => slot !== undefined);
    return {
      waiting: this.waiting.length,
      running: slots.filter((slot) => slot.job).length,
      workers: slots.length,
    };
  }

  /** Fails what waits, lets each worker close its DuckDB, then terminates what remains. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) this.settle(job, unavailable('the service is shutting down'));
    await Promise.all(
      this.slots.map(async (slot) => {
        if (!slot) return;
        const exited = new Promise((resolve) => slot.worker.once('exit', resolve));
        this.post(slot, { type: 'close' });
        const timer = setTimeout(() => this.terminate(slot, 'the service is shutting down'), CLOSE_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }),
    );
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
    const worker = startWorker();
    const slot: Slot = { worker, ready: false };
    this.slots[index] = slot;
    worker.unref();
    if (this.waiting.length > 0) worker.ref();
    worker.on('message', (message: FromWorker) => this.received(slot, message));
    worker.on('error', (error) => this.lost(index, slot, error));
    worker.on('exit', (code) => this.lost(index, slot, new Error(`the worker exited with code ${code}`)));
    return slot;
  }

  private run(slot: Slot, job: Job): void {
    slot.job = job;
    slot.worker.ref();
    slot.runTimer = setTimeout(
      () => this.terminate(slot, `checking this SQL took more than ${RUN_LIMIT_MS / 1000} s`),
      RUN_LIMIT_MS,
    );
    this.post(slot, { type: 'check', id: job.id, sql: job.sql });
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
        const { message: text, location, unit } = message.refusal;
        this.finish(slot, job, new SqlRefusal(text, location, unit));
        return;
      }
      case 'failed':
        // At shutdown the worker's DuckDB interrupts what it was doing: not a failure of the check.
        if (this.closed) {
          this.finish(slot, job, unavailable('the service is shutting down'));
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

  /** A worker ended: its check fails, and the next check starts a new one. */
  private lost(index: number, slot: Slot, error: Error): void {
    if (this.slots[index] !== slot) return;
    this.slots[index] = undefined;
    clearTimeout(slot.runTimer);
    const job = slot.job;
    if (job) this.settle(job, this.lostError(slot, error));
    if (!slot.ready && !this.closed) {
      // It never started: the same would happen to every check waiting.
      this.options.logger?.error({ err: error }, 'the SQL checker could not start a worker');
      for (const waiting of this.waiting.splice(0)) {
        this.settle(waiting, unavailable(`the SQL checker could not start: ${error.message}`));
      }
      return;
    }
    if (!this.closed) {
      this.options.logger?.warn({ err: error, reason: slot.stopped }, 'a SQL check worker ended');
      this.dispatch();
    }
  }

  private lostError(slot: Slot, error: Error): unknown {
    if ((error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return new SqlRefusal('this SQL is too large to check: checking it ran out of memory', undefined);
    }
    if (this.closed) return unavailable('the service is shutting down');
    return unavailable(slot.stopped ?? `the SQL check stopped: ${error.message}; try again`);
  }

  private terminate(slot: Slot, reason: string): void {
    slot.stopped = reason;
    void slot.worker.terminate();
  }

  private post(slot: Slot, message: ToWorker): void {
    slot.worker.postMessage(message);
  }
}
