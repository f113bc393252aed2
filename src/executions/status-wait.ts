/**
 * Status requests of a client that polls closely (issue 27). A client that asks for a running
 * execution's status again and again, every few milliseconds, to learn of its end at once, costs
 * the machine a request each time (its own CPU and the service's: 0.5–1 ms a poll on this
 * machine), which the statement then lacks: with status every 5 ms, the analytics benchmark's
 * statements ran 20–25% longer than with status every 100 ms (bench/analytics.ts, 2026-11-27).
 * So a status request that follows the previous look at the same execution (its submission, or
 * the last status request) within FOLLOW_MS waits, up to HOLD_MS, for the execution to finish,
 * and is answered the moment it does: such a client learns of the end as soon as it would have,
 * sooner on average, and polls at most a few times a second. A client that polls less often (the
 * official clients: every second) is answered at once, as before.
 */

/** A look at an execution this soon after the previous one is "close" polling. */
export const FOLLOW_MS = 50;
/** How long a close poll waits for the execution to finish, at most. */
export const HOLD_MS = 100;

export interface StatusWaitOptions {
  followMs: number;
  holdMs: number;
}

export class StatusWaits {
  /** When each unfinished execution was last looked at (submitted, or its status asked). */
  private readonly lastLook = new Map<string, number>();
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(private readonly options: StatusWaitOptions = { followMs: FOLLOW_MS, holdMs: HOLD_MS }) {}

  /** The execution was submitted now: its first status request is a close poll when it follows soon. */
  submitted(id: string, now = performance.now()): void {
    this.lastLook.set(id, now);
  }

  /**
   * A status request for the unfinished execution `id`: resolves at once, unless it follows the
   * previous look within FOLLOW_MS; then when the execution finishes, or after HOLD_MS.
   */
  look(id: string, now = performance.now()): Promise<void> {
    const previous = this.lastLook.get(id);
    this.lastLook.set(id, now);
    if (previous === undefined || now - previous > this.options.followMs) return Promise.resolve();
    return new Promise((resolve) => {
      let waiting = this.waiters.get(id);
      if (!waiting) {
        waiting = new Set();
        this.waiters.set(id, waiting);
      }
      const set = waiting;
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        // Looked at when answered: the client's next poll follows this answer.
        if (this.lastLook.has(id)) this.lastLook.set(id, performance.now());
        resolve();
      };
      const timer = setTimeout(done, this.options.holdMs);
      set.add(done);
    });
  }

  /** The execution finished (or will never be asked about again): its waiting requests are answered. */
  ended(id: string): void {
    this.lastLook.delete(id);
    const waiting = this.waiters.get(id);
    this.waiters.delete(id);
    for (const done of waiting ?? []) done();
  }

  /** Answers every waiting request (shutdown). */
  close(): void {
    for (const id of [...this.waiters.keys()]) this.ended(id);
  }
}
