import { afterEach, describe, expect, it, vi } from 'vitest';
import { StatusWaits } from '../../src/executions/status-wait.js';
import { executeSql, post, RUNAWAY_SQL } from '../queries/support/queries.js';
import type { Envelope } from '../support/results.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * Issue 27: a client that polls an execution's status closely (within FOLLOW_MS of its previous
 * look, or of the submission) waits for the execution's end, HOLD_MS at most, and is answered
 * the moment it ends; a client that polls less often is answered at once.
 */

describe('StatusWaits', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers a look that does not follow closely at once, and a close one when the execution ends', async () => {
    vi.useFakeTimers();
    const waits = new StatusWaits({ followMs: 50, holdMs: 100 });
    waits.submitted('a', 0);
    let answered = false;
    // 40 ms after the submission: close.
    void waits.look('a', 40).then(() => {
      answered = true;
    });
    await vi.advanceTimersByTimeAsync(60);
    expect(answered).toBe(false);
    waits.ended('a');
    await vi.advanceTimersByTimeAsync(0);
    expect(answered).toBe(true);
    // An execution never looked at, or looked at long ago, is answered at once.
    await waits.look('b', 1_000);
    waits.submitted('c', 0);
    await waits.look('c', 51);
  });

  it('answers a close look after the hold at most, and looks after the answer count from it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const waits = new StatusWaits({ followMs: 50, holdMs: 100 });
    waits.submitted('a', performance.now());
    let answered = 0;
    const look = () =>
      waits.look('a', performance.now()).then(() => {
        answered++;
      });
    void look();
    await vi.advanceTimersByTimeAsync(99);
    expect(answered).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(answered).toBe(1);
    // The client's next poll, 10 ms after the answer, is close again.
    await vi.advanceTimersByTimeAsync(10);
    void look();
    await vi.advanceTimersByTimeAsync(50);
    expect(answered).toBe(1);
    waits.close();
    await vi.advanceTimersByTimeAsync(0);
    expect(answered).toBe(2);
  });
});

describe('status requests through HTTP', () => {
  let service: TestService | undefined;
  afterEach(async () => {
    await service?.stop();
    service = undefined;
  });

  it('answers a close poll of a quick query with its end, not with the state it had', async () => {
    // Every poll is close, and waits up to a minute: the answer comes at the end.
    service = await startTestService({}, undefined, { statusWait: { followMs: 60_000, holdMs: 60_000 } });
    const id = await executeSql(service, 'SELECT 42 AS answer');
    const { body } = await service.json<Envelope>(`/v1/execution/${id}/status`);
    expect(body.state).toBe('QUERY_STATE_COMPLETED');
    expect(body.is_execution_finished).toBe(true);
  });

  it('answers a waiting poll as soon as the execution is cancelled', async () => {
    service = await startTestService({}, undefined, { statusWait: { followMs: 60_000, holdMs: 60_000 } });
    const s = service;
    const id = await executeSql(s, RUNAWAY_SQL);
    const waiting = s.json<Envelope>(`/v1/execution/${id}/status`);
    const cancelled = await s.json<{ success: boolean }>(`/v1/execution/${id}/cancel`, post({}));
    expect(cancelled.body.success).toBe(true);
    const { body } = await waiting;
    expect(body.state).toBe('QUERY_STATE_CANCELLED');
  });

  it('answers at once when polls do not follow closely', async () => {
    service = await startTestService({}, undefined, { statusWait: { followMs: 0, holdMs: 60_000 } });
    const s = service;
    const id = await executeSql(s, RUNAWAY_SQL);
    const { body } = await s.json<Envelope>(`/v1/execution/${id}/status`);
    expect(body.is_execution_finished).toBe(false);
    await s.json(`/v1/execution/${id}/cancel`, post({}));
  });
});
