import { afterEach, describe, expect, it } from 'vitest';
import { isFinished } from '../../src/executions/execution.js';
import { RUNAWAY_SQL } from '../queries/support/queries.js';
import { capturedLog } from '../support/log-lines.js';
import { startTestService, type TestService, tempDir } from '../support/service.js';

/**
 * Issue 22, item 7: a run that ends while the database closes is not an error of the service.
 * It ends in memory (the next start marks its record failed), and nothing is logged at error
 * level.
 */

let service: TestService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

describe('a run cut short by the database closing', () => {
  it('ends without an error-level log line', async () => {
    const log = capturedLog('debug');
    const lines = log.lines;
    service = await startTestService({}, tempDir(), {}, log.logger);
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
