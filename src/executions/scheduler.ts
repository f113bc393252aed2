import type { Logger } from '../log.js';
import type { Executions } from './executions.js';

/**
 * Runs each saved query every `refreshSeconds`, counted from its last submission (or at
 * once when it never completed or its result is older than that), and purges expired
 * executions. Timers are unref'd: they never keep the process alive on their own.
 */
export class Scheduler {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly executions: Executions,
    private readonly logger: Logger,
    private readonly purgeEverySeconds = 600,
  ) {}

  start(): void {
    for (const query of this.executions.savedQueries()) {
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
    const query = this.executions.query(queryId);
    if (!query || this.stopped) return;
    const timer = setTimeout(async () => {
      this.timers.delete(timer);
      try {
        if (!this.executions.isBusy(queryId)) await this.executions.submit(queryId);
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
