import type { Api } from '../shared/api.js';
import { type ExecutionStatus, STATES } from '../shared/api-types.js';
import { formatDuration } from '../shared/format.js';

/**
 * Follows one execution from submission to its end: polls its status (often at first, then
 * less: a quick query answers within a few polls, a long one costs a request a second) and
 * reports state, elapsed time and queue position to the status line as they change.
 */

export interface Progress {
  executionId: string;
  state: string;
  elapsedMs: number;
  queuePosition?: number;
}

export function describeProgress(progress: Progress): string {
  const elapsed = formatDuration(progress.elapsedMs);
  if (progress.state === STATES.pending) {
    return progress.queuePosition !== undefined
      ? `Queued, position ${progress.queuePosition} · ${elapsed}`
      : `Queued · ${elapsed}`;
  }
  return `Running · ${elapsed}`;
}

export class ExecutionWatch {
  private stopped = false;
  private ticker: number | undefined;

  constructor(
    private readonly api: Api,
    readonly executionId: string,
    private readonly startedAt: number,
    private readonly report: (progress: Progress) => void,
  ) {}

  /** Resolves with the final status; undefined when stop() was called first. */
  async finished(): Promise<ExecutionStatus | undefined> {
    let last: Progress = { executionId: this.executionId, state: STATES.pending, elapsedMs: 0 };
    this.ticker = window.setInterval(() => {
      last = { ...last, elapsedMs: performance.now() - this.startedAt };
      this.report(last);
    }, 100);
    try {
      let wait = 100;
      for (;;) {
        if (this.stopped) return undefined;
        const status = await this.api.get<ExecutionStatus>(
          `/v1/execution/${encodeURIComponent(this.executionId)}/status`,
        );
        if (this.stopped) return undefined;
        if (status.is_execution_finished) return status;
        last = {
          executionId: this.executionId,
          state: status.state,
          elapsedMs: performance.now() - this.startedAt,
          ...(status.queue_position !== undefined ? { queuePosition: status.queue_position } : {}),
        };
        this.report(last);
        await new Promise((resolve) => setTimeout(resolve, wait));
        wait = Math.min(1000, Math.round(wait * 1.5));
      }
    } finally {
      window.clearInterval(this.ticker);
    }
  }

  stop(): void {
    this.stopped = true;
    window.clearInterval(this.ticker);
  }

  /** Asks the service to cancel; the watch then sees the execution end as cancelled. */
  async cancel(): Promise<boolean> {
    const answer = await this.api.post<{ success: boolean }>(
      `/v1/execution/${encodeURIComponent(this.executionId)}/cancel`,
    );
    return answer.success;
  }
}
