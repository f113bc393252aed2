import type { Logger } from '../log.js';
import { type Database, DatabaseClosingError } from '../storage/database.js';
import { type Execution, hasResult, isFinished, OPERATOR, STATES, visibleState } from './execution.js';
import type { ExecutionStore } from './execution-store.js';
import type { StorageLimits } from './run-request.js';
import { dropSnapshot, dropSnapshots } from './snapshot.js';

/**
 * What one key's finished executions may keep (DESIGN §12): their results' bytes up to a
 * quota, the oldest expiring first when a new one passes it, and a number of executions, the
 * oldest removed whole past it; and the retention every execution has (`expires_at`). An
 * expired execution keeps its record, answering QUERY_STATE_EXPIRED without rows, for a day.
 * The scheduler's runs (the operator's) are held to the retention only.
 */

/**
 * What a kept result costs besides its rows' bytes: its table in DuckDB's catalog and its
 * record. Small results are counted at least this, so that thousands of one-row results
 * count for something.
 */
export const RESULT_OVERHEAD_BYTES = 16 * 1024;

/** A result's bytes as the quota counts them. */
export const keptBytes = (execution: Execution): number =>
  (execution.resultBytes ?? 0) + RESULT_OVERHEAD_BYTES;

const DAY_MS = 86_400_000;

/**
 * Dropped results' bytes (as keptBytes counts them) after which holding keys to their quotas
 * checkpoints, so that DuckDB reuses the dropped tables' blocks. A checkpoint after every
 * drop cost each run past a key's MAX_EXECUTIONS_PER_KEY about 35 ms before it was seen
 * (`SELECT 1` end to end went from 15 to 50 ms after the 1,000th execution of a key, a
 * scratch script, 2026-11-27): the checkpoint rewrites every table changed since the last
 * one and looks at every table's row groups. Below this, DuckDB's own checkpoint (at a 16 MB
 * WAL) or the next large drop frees the blocks.
 */
const CHECKPOINT_AFTER_DROPPED_BYTES = 64 * 1024 * 1024;

/** A change of holding a key to its quotas, made in memory and to be written: removed whole, or expired. */
interface QuotaChange {
  removed: boolean;
  execution: Execution;
}

export class KeyQuotas {
  /** Executions whose snapshot is known to be gone, so purging does not drop them again. */
  private readonly dropped = new Set<string>();
  /** Bytes of the results dropped since the last checkpoint (CHECKPOINT_AFTER_DROPPED_BYTES). */
  private droppedBytes = 0;
  /** Per owner, the changes a write queued or running will not take, for the next (writeBehind). */
  private readonly unwritten = new Map<string, QuotaChange[]>();

  constructor(
    private readonly database: Database,
    private readonly store: ExecutionStore,
    private readonly limits: StorageLimits | undefined,
    private readonly logger: Logger,
  ) {}

  /** The records are loaded: results already expired have no snapshot (or will be purged). */
  loaded(): void {
    for (const execution of this.store.all())
      if (hasResult(execution) && visibleState(execution) === STATES.expired) this.dropped.add(execution.id);
  }

  /** Bytes of `owner`'s results kept now. */
  usedBy(owner: string): number {
    let bytes = 0;
    for (const execution of this.store.ofOwner(owner))
      if (this.isKept(execution)) bytes += keptBytes(execution);
    return bytes;
  }

  /**
   * Holds the owner of `ended` (an execution that just finished, not yet in memory as such)
   * to its quotas: removes its oldest finished executions past the count, then expires its
   * oldest results past the bytes, before the new one is seen. `latest` is the cache of latest
   * results, forgotten for each query whose execution changed.
   *
   * Memory first: the executions removed and the results expired are so for every request at
   * once, and the database follows on the writer (writeBehind), while the new one is answered.
   * Every run of a key at its quota waited for that write transaction: `SELECT 1` end to end
   * took 17.8 ms against 13.9 for a key below it (`npm run bench -- queries`, 2026-11-27).
   * Should the write fail, the records come back at the next start, and the key is held to its
   * quotas again at its next run. Returns `ended` as it is to be seen: undefined when it went
   * at once (the key's oldest, a run that took longer than later ones), expired when its
   * result did. Its record's write must have begun (ExecutionStore.saveAfter): the removal
   * waits for it.
   */
  enforce(ended: Execution, latest: Map<number, unknown>): Execution | undefined {
    const limits = this.limits;
    const owner = ended.owner;
    if (!limits || owner === OPERATOR) return ended;
    const mine = this.store.ofOwner(owner).map((e) => (e.id === ended.id ? ended : e));
    const finished = mine.filter(isFinished);
    const removed = finished.slice(0, Math.max(0, finished.length - limits.keyExecutions));
    const gone = new Set(removed.map((e) => e.id));
    const expiring: Execution[] = [];
    let bytes = 0;
    for (let i = mine.length - 1; i >= 0; i--) {
      const execution = mine[i] as Execution;
      if (gone.has(execution.id) || !this.isKept(execution)) continue;
      bytes += keptBytes(execution);
      if (bytes > limits.keyResultBytes) expiring.push(execution);
    }
    if (removed.length === 0 && expiring.length === 0) return ended;
    const now = new Date();
    const expired = expiring.map((execution) => ({ ...execution, expiresAt: now }));
    for (const execution of removed) this.store.forget(execution.id);
    for (const execution of expired) {
      this.store.remember(execution);
      this.dropped.add(execution.id);
    }
    for (const execution of [...removed, ...expiring]) latest.delete(execution.queryId);
    this.writeBehind(owner, [
      ...removed.map((execution) => ({ removed: true, execution })),
      ...expired.map((execution) => ({ removed: false, execution })),
    ]);
    return gone.has(ended.id) ? undefined : (expired.find((e) => e.id === ended.id) ?? ended);
  }

  /**
   * Queues the owner's changes for the database. One write per owner is in the writer's queue
   * at a time, and it takes every change that came meanwhile: a write per run, each queued at
   * once, let a key flooding the service at its quota fill the writer's queue that every key's
   * uploads and inserts wait in. Another key's one-row inserts while a key at its quota ran
   * `SELECT 1` on eight connections took 416 ms at the median with a write per run, and 53–61
   * ms with this, against 46–54 ms with no quota to hold (a scratch script, 2026-11-27; 28 ms
   * with nobody else). Shutdown queues what waits at once (`close`).
   */
  private writeBehind(owner: string, changes: readonly QuotaChange[]): void {
    const waiting = this.unwritten.get(owner);
    if (waiting) {
      waiting.push(...changes);
      return;
    }
    this.unwritten.set(owner, [...changes]);
    void this.writeChanges(owner);
  }

  private async writeChanges(owner: string): Promise<void> {
    for (;;) {
      const changes = this.unwritten.get(owner) ?? [];
      if (changes.length === 0) {
        this.unwritten.delete(owner);
        return;
      }
      // What comes while this is written waits for the next write.
      this.unwritten.set(owner, []);
      await this.write(owner, changes);
    }
  }

  /** Queues the changes not yet queued now: the database writes what is queued before it closes. */
  close(): void {
    for (const [owner, changes] of this.unwritten) {
      if (changes.length === 0) continue;
      this.unwritten.set(owner, []);
      void this.write(owner, changes);
    }
  }

  private async write(owner: string, changes: readonly QuotaChange[]): Promise<void> {
    try {
      // A removal after the record it removes, which its run writes after it is seen (saveAfter).
      await this.store.landed(changes.map((change) => change.execution.id));
      await this.database.write(async (session) => {
        // A few statements for any number of changes: a key flooding the service at its quota
        // makes many, and every key's writes wait behind them.
        await dropSnapshots(
          session,
          changes.map((change) => change.execution.id),
        );
        await this.store.removeAll(
          changes.filter((change) => change.removed).map((change) => change.execution.id),
          session,
        );
        for (const { removed, execution } of changes)
          if (!removed) await this.store.append(session, execution);
      });
      await this.checkpointAfterDrops(changes.map((change) => change.execution));
      const removed = changes.filter((change) => change.removed).length;
      this.logger.info(
        { owner, removed, expired: changes.length - removed },
        'held a key to its quotas of kept executions and results',
      );
    } catch (error) {
      const level = error instanceof DatabaseClosingError ? 'debug' : 'warn';
      this.logger[level]({ err: error, owner }, 'could not hold a key to its quotas');
    }
  }

  /** Expires results now: their rows are dropped, their records say they expired. */
  async expire(executions: readonly Execution[]): Promise<void> {
    if (executions.length === 0) return;
    // After the records and tables being written (a small result's table: small-result.ts).
    await this.store.landed(executions.map((execution) => execution.id));
    const now = new Date();
    const expired = executions.map((execution) => ({ ...execution, expiresAt: now }));
    await this.database.write(async (session) => {
      for (const execution of expired) {
        await dropSnapshot(session, execution.id);
        await this.store.append(session, execution);
      }
    });
    for (const execution of expired) {
      this.store.remember(execution);
      this.dropped.add(execution.id);
    }
  }

  /**
   * Drops the snapshots of executions past their expiry and, a day later, their records.
   * Until then an expired execution still answers, as QUERY_STATE_EXPIRED without rows.
   */
  async purgeExpired(now: number, forget: (execution: Execution) => void): Promise<number> {
    let purged = 0;
    for (const execution of this.store.all()) {
      if (!isFinished(execution) || !execution.expiresAt || execution.expiresAt.getTime() > now) continue;
      const recordGone = execution.expiresAt.getTime() + DAY_MS <= now;
      if (this.dropped.has(execution.id) && !recordGone) continue;
      // A table still being written would come after its drop (small-result.ts).
      await this.store.landed([execution.id]);
      await this.database.write(async (session) => {
        await dropSnapshot(session, execution.id);
        if (recordGone) await this.store.remove(execution.id, session);
      });
      forget(execution);
      if (recordGone) this.dropped.delete(execution.id);
      else this.dropped.add(execution.id);
      purged++;
    }
    if (purged > 0) await this.database.checkpoint();
    return purged;
  }

  /** The dropped tables' blocks are free for new data once checkpointed: after enough of them. */
  private async checkpointAfterDrops(executions: readonly Execution[]): Promise<void> {
    for (const execution of executions) this.droppedBytes += keptBytes(execution);
    if (this.droppedBytes < CHECKPOINT_AFTER_DROPPED_BYTES) return;
    if (await this.database.checkpoint()) this.droppedBytes = 0;
  }

  private isKept(execution: Execution): boolean {
    return (
      hasResult(execution) && !this.dropped.has(execution.id) && visibleState(execution) !== STATES.expired
    );
  }
}
