import { afterEach, describe, expect, it } from 'vitest';
import { capturedLog } from '../support/log-lines.js';
import { startTestService, type TestService, tempDir } from '../support/service.js';

/**
 * Holding a key to its quotas is written behind its runs (key-quotas.ts), one write per key in
 * the writer's queue at a time: a key that floods the service at its quota must not fill the
 * queue every key's uploads and inserts wait in.
 */

let service: TestService | undefined;
afterEach(async () => {
  await service?.stop();
  service = undefined;
});

async function runToEnd(s: TestService, sql: string): Promise<string> {
  const { body } = await s.json<{ execution_id: string }>('/v1/sql/execute', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sql }),
  });
  const id = body.execution_id;
  for (;;) {
    const status = await s.json<{ is_execution_finished: boolean }>(`/v1/execution/${id}/status`);
    if (status.body.is_execution_finished) return id;
  }
}

/**
 * A key at MAX_EXECUTIONS_PER_KEY 1 runs once, then five times while the writer is held: each
 * run removes the one before, and every removal waits for the writer. The writer is let go
 * with `release`; `held` settles once it has been.
 */
async function fiveRunsWhileWriterHeld(s: TestService) {
  await runToEnd(s, 'SELECT 0 AS n');
  let release: () => void = () => undefined;
  const held = s.database.write(() => new Promise<void>((resolve) => (release = resolve)));
  const ids: string[] = [];
  for (let i = 1; i <= 5; i++) ids.push(await runToEnd(s, `SELECT ${i} AS n`));
  return { ids, release, held };
}

const AT_QUOTA = { MAX_EXECUTIONS_PER_KEY: '1' };

describe('holding a key to MAX_EXECUTIONS_PER_KEY', () => {
  it('queues one write for the key while the writer is busy, taking every removal meanwhile', async () => {
    const log = capturedLog<{ msg: string; removed?: number }>('info');
    const s = await startTestService(AT_QUOTA, tempDir(), {}, log.logger);
    service = s;
    const { ids, release, held } = await fiveRunsWhileWriterHeld(s);
    expect(s.executions.store.ofOwner('alice').map((e) => e.id)).toEqual([ids[4]]);
    release();
    await held;
    const writes = () =>
      log.lines.filter((line) => line.msg === 'held a key to its quotas of kept executions and results');
    const removed = () => writes().reduce((sum, line) => sum + (line.removed ?? 0), 0);
    for (let i = 0; i < 250 && removed() < 5; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    // The first run's write waited for the writer; the four that came meanwhile went in one more.
    expect(writes().map((line) => line.removed)).toEqual([1, 4]);
  });

  it('writes what waits for the writer before the database closes', async () => {
    const dataDir = tempDir();
    const s = await startTestService(AT_QUOTA, dataDir);
    const { ids, release, held } = await fiveRunsWhileWriterHeld(s);
    // Closed while the first removal still waits for the writer and four more wait for it; the
    // writer is let go only once the database is closing and takes no new write.
    const closed = s.close();
    await new Promise((resolve) => setTimeout(resolve, 500));
    release();
    await held;
    await closed;
    service = await startTestService(AT_QUOTA, dataDir);
    expect(service.executions.store.ofOwner('alice').map((e) => e.id)).toEqual([ids[4]]);
  });
});
