import type { Logger } from '../log.js';
import type { MaterializedViews } from './materialized-views.js';

/**
 * Refreshes materialized views on their cron schedules: every `tickMs` it asks the views
 * which are due by the clock's time. A view whose time passed while the service was stopped
 * is refreshed once at the first tick, not once per missed time. The clock is the system's;
 * tests give one of their own (startService's `clock`) to move time by hand, which nothing
 * else reads.
 */

export interface Clock {
  now(): number;
}

export const SYSTEM_CLOCK: Clock = { now: () => Date.now() };

/** Cron's resolution is a minute: a tick a second starts a run within a second of its time. */
const TICK_MS = 1_000;

export class ViewScheduler {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly views: MaterializedViews,
    private readonly logger: Logger,
    private readonly clock: Clock = SYSTEM_CLOCK,
    private readonly tickMs = TICK_MS,
  ) {}

  start(): void {
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Resolves when the tick in progress, if any, is over. */
  idle(): Promise<void> {
    return this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.views
        .runDue(new Date(this.clock.now()))
        .catch((error: unknown) => this.logger.error({ err: error }, 'scheduled view refreshes failed'))
        .finally(() => this.schedule(this.tickMs));
    }, delayMs);
    this.timer.unref();
  }
}
