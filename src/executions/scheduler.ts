import type { Logger } from '../log.js';
import { OPERATOR } from './execution.js';
import type { Executions } from './executions.js';

/** A query the scheduler refreshes (the operator's query files). */
export interface ScheduledQuery {
  id: number;
  sql: string;
  /** How often it runs. */
  refreshSeconds: number;
}

/**
 * Runs each scheduled query every `refreshSeconds`, counted from its last submission (or at
 * once when it never completed or its result is older than that), as the operator, and
 * purges expired executions. Timers are unref'd: they never keep the process alive on their
 * own.
 */
export class Scheduler {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private readonly queries: Map<number, ScheduledQuery>;

  constructor(
    private readonly executions: Executions,
    queries: readonly ScheduledQuery[],
    private readonly logger: Logger,
    private readonly purgeEverySeconds = 600,
  ) {
    this.queries = new Map(queries.map((q) => [q.id, q]));
  }

  start(): void {
    for (const query of this.queries.values()) {
      const latest = this.executions.latestWithResult(query.id);
      const age = latest ? Date.now() - latest.submittedAt.getTime() : Number.POSITIVE_INFINITY;
      this.schedule(query.id, Math.max(0, query.refreshSeconds * 1000 - age));
    }
    this.every(this.purgeEverySeconds * 1000, async () => {
      const purged = await this.executions.purgeExpired();
      if (purged > 0) this.logger.info({ purged }, 'purged expired executions');
    });
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private schedule(queryId: number, delayMs: number): void {
    const query = this.queries.get(queryId);
    if (!query || this.stopped) return;
    const timer = setTimeout(async () => {
      this.timers.delete(timer);
      try {
        if (!this.executions.isBusy(queryId))
          await this.executions.submit({ queryId, sql: query.sql, owner: OPERATOR, lane: 'operator' });
      } catch (error) {
        this.logger.error({ err: error, queryId }, 'scheduled refresh could not start');
      }
      this.schedule(queryId, query.refreshSeconds * 1000);
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  private every(intervalMs: number, task: () => Promise<void>): void {
    const timer = setTimeout(async () => {
      this.timers.delete(timer);
      try {
        await task();
      } catch (error) {
        this.logger.error({ err: error }, 'scheduled task failed');
      }
      if (!this.stopped) this.every(intervalMs, task);
    }, intervalMs);
    timer.unref();
    this.timers.add(timer);
  }
}
