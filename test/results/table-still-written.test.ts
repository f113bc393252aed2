import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Execution } from '../../src/executions/execution.js';
import { parseResultRequest } from '../../src/results/result-request.js';
import { ResultRows } from '../../src/results/result-rows.js';
import { executeSql, finished } from '../queries/support/queries.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * A small result is seen before its table is written (src/executions/small-result.ts): its
 * first page comes from the rows the run rendered, and anything read by SQL waits until the
 * table is there (`ResultRows`' `stored`). Here the table's landing is a gate the test opens.
 */

const settled = async (promise: Promise<unknown>, ms = 150) =>
  Promise.race([promise.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), ms))]);

describe('pages of a result whose table is still being written', () => {
  let service: TestService;
  let execution: Execution;

  beforeAll(async () => {
    service = await startTestService();
    const id = await executeSql(service, 'SELECT i AS n FROM range(5) r(i)');
    expect((await finished(service, id)).state).toBe('QUERY_STATE_COMPLETED');
    execution = service.executions.get(id) as Execution;
  });

  afterAll(async () => {
    await service.stop();
  });

  function rowsWithGate() {
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const rows = new ResultRows(
      service.database,
      {
        inMemoryMaxRows: 1_000,
        cacheBytes: 1 << 20,
        tmpDir: path.join(service.dataDir, 'tmp'),
        inMemoryPageBytes: 1 << 20,
        partBytes: 1 << 27,
        prefetch: { maxPages: 2, ttlMs: 60_000 },
      },
      () => gate,
    );
    rows.remember(
      execution,
      [0, 1, 2, 3, 4].map((n) => `{"n":${n}}`),
    );
    return { rows, open };
  }

  it('serves the first page from the rendered rows at once', async () => {
    const { rows } = rowsWithGate();
    const page = rows.page(execution, parseResultRequest(new Map()), 'json', 1_000_000);
    expect(await settled(page)).toBe(true);
    expect((await page).count).toBe(5);
  });

  it('holds a filtered page, a CSV page and a sample until the table is written', async () => {
    const { rows, open } = rowsWithGate();
    const filtered = rows.page(execution, parseResultRequest(new Map([['filters', 'n >= 3']])), 'json', 1e6);
    const csv = rows.page(execution, parseResultRequest(new Map()), 'csv', 1e6);
    const sample = rows.page(execution, parseResultRequest(new Map([['sample_count', '2']])), 'json', 1e6);
    expect(await settled(Promise.race([filtered, csv]))).toBe(false);
    open();
    expect((await filtered).count).toBe(2);
    expect((await csv).count).toBe(5);
    expect((await sample).count).toBe(2);
  });
});
