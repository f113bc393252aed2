import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { isFinished } from '../../src/executions/execution.js';
import { type RunningService, startService } from '../../src/service.js';
import { RUNAWAY_SQL } from '../queries/support/queries.js';
import { TEST_API_KEYS, tempDir } from '../support/service.js';

/**
 * Issue 22, item 7: a run that ends while the database closes is not an error of the service.
 * It ends in memory (the next start marks its record failed), and nothing is logged at error
 * level.
 */

let service: RunningService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

describe('a run cut short by the database closing', () => {
  it('ends without an error-level log line', async () => {
    const lines: { level: number; msg: string }[] = [];
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
    });
    service = await startService(config, pino({ level: 'debug' }, sink));
    const submitted = await Promise.all(
      [RUNAWAY_SQL, RUNAWAY_SQL, 'SELECT 1 AS n'].map((sql, i) =>
        service?.executions.submit({ queryId: 0, sql, owner: i === 2 ? 'bob' : 'alice', lane: 'users' }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await service.database.close();
    for (let i = 0; i < 500; i++) {
      if (submitted.every((e) => e && isFinished(service?.executions.get(e.id) ?? e))) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(
      submitted.map((e) => (e && isFinished(service?.executions.get(e.id) ?? e) ? 'ended' : 'running')),
    ).toEqual(['ended', 'ended', 'ended']);
    await service.close();
    service = undefined;
    const errors = lines.filter((line) => line.level >= 50);
    expect(errors).toEqual([]);
    // The runs' ends were seen, at debug level.
    expect(lines.some((line) => line.msg === 'could not record the end of an execution')).toBe(true);
  });
});
