import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { type RunningService, startService } from '../../src/service.js';
import { KEYS, TEST_API_KEYS, tempDir } from '../support/service.js';

/**
 * Holding a key to its quotas is written behind its runs (key-quotas.ts), one write per key in
 * the writer's queue at a time: a key that floods the service at its quota must not fill the
 * queue every key's uploads and inserts wait in.
 */

let service: RunningService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

async function runToEnd(s: RunningService, sql: string): Promise<string> {
  const headers = { 'content-type': 'application/json', 'x-service-api-key': KEYS.alice };
  const submitted = await fetch(`${s.url}/v1/sql/execute`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ sql }),
  });
  const { execution_id: id } = (await submitted.json()) as { execution_id: string };
  for (;;) {
    const status = await fetch(`${s.url}/v1/execution/${id}/status`, { headers });
    if (((await status.json()) as { is_execution_finished: boolean }).is_execution_finished) return id;
  }
}

describe('holding a key to MAX_EXECUTIONS_PER_KEY', () => {
  it('queues one write for the key while the writer is busy, taking every removal meanwhile', async () => {
    const lines: { msg: string; removed?: number }[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const config = loadConfig({
      PORT: '0',
      PG_PORT: 'off',
      DATA_DIR: tempDir(),
      API_KEYS: TEST_API_KEYS,
      DEMO_DATA: 'off',
      RATE_LIMITS: 'off',
      MAX_EXECUTIONS_PER_KEY: '1',
    });
    const s = await startService(config, pino({ level: 'info' }, sink));
    service = s;
    await runToEnd(s, 'SELECT 0 AS n');
    // The writer is held: every removal below waits for it.
    let release: () => void = () => undefined;
    const held = s.database.write(() => new Promise<void>((resolve) => (release = resolve)));
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) ids.push(await runToEnd(s, `SELECT ${i} AS n`));
    expect(s.executions.store.ofOwner('alice').map((e) => e.id)).toEqual([ids[4]]);
    release();
    await held;
    const writes = () =>
      lines.filter((line) => line.msg === 'held a key to its quotas of kept executions and results');
    const removed = () => writes().reduce((sum, line) => sum + (line.removed ?? 0), 0);
    for (let i = 0; i < 250 && removed() < 5; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    // The first run's write waited for the writer; the four that came meanwhile went in one more.
    expect(writes().map((line) => line.removed)).toEqual([1, 4]);
  });

  it('writes what waits for the writer before the database closes', async () => {
    const dataDir = tempDir();
    const env = {
      PORT: '0',
      PG_PORT: 'off',
      DATA_DIR: dataDir,
      API_KEYS: TEST_API_KEYS,
      DEMO_DATA: 'off',
      RATE_LIMITS: 'off',
      MAX_EXECUTIONS_PER_KEY: '1',
    };
    const s = await startService(loadConfig(env), pino({ level: 'silent' }));
    service = s;
    await runToEnd(s, 'SELECT 0 AS n');
    let release: () => void = () => undefined;
    const held = s.database.write(() => new Promise<void>((resolve) => (release = resolve)));
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) ids.push(await runToEnd(s, `SELECT ${i} AS n`));
    // Closed while the first removal still waits for the writer and four more wait for it; the
    // writer is let go only once the database is closing and takes no new write.
    const closed = s.close();
    await new Promise((resolve) => setTimeout(resolve, 500));
    release();
    await held;
    await closed;
    service = await startService(loadConfig(env), pino({ level: 'silent' }));
    expect(service.executions.store.ofOwner('alice').map((e) => e.id)).toEqual([ids[4]]);
  });
});
