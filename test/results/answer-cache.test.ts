import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Execution } from '../../src/executions/execution.js';
import { parseResultRequest } from '../../src/results/result-request.js';
import { ResultRows } from '../../src/results/result-rows.js';
import { Results } from '../../src/results/results.js';
import { executeSql, finished } from '../queries/support/queries.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * What the answer cache keeps is what it counts: a small answer's bytes are a buffer of
 * their own, not a view into one of Node's shared 8 KB pool slabs, which the kept view would
 * keep alive whole while the cache counted only the answer's length.
 */

describe('the answer cache', () => {
  let service: TestService;
  let execution: Execution;
  let results: Results;

  beforeAll(async () => {
    service = await startTestService();
    const id = await executeSql(service, `SELECT i AS id, 'label ' || i AS label FROM range(40) r(i)`);
    expect((await finished(service, id)).state).toBe('QUERY_STATE_COMPLETED');
    execution = service.executions.get(id) as Execution;
    const rows = new ResultRows(service.database, {
      inMemoryMaxRows: 1_000,
      cacheBytes: 1 << 20,
      tmpDir: path.join(service.dataDir, 'tmp'),
      inMemoryPageBytes: 1 << 20,
      partBytes: 1 << 27,
      prefetch: { maxPages: 2, ttlMs: 60_000 },
    });
    results = new Results(service.executions, rows, {
      maxDatapointsPerRequest: 1_000_000,
      baseUrl: () => service.url,
      cacheBytes: 1 << 20,
      maxCachedAnswerBytes: 1 << 20,
    });
  });

  afterAll(async () => {
    await results.close();
    await service.stop();
  });

  it('keeps each small page in bytes of its own, and serves the kept answer again', async () => {
    for (const format of ['json', 'csv'] as const) {
      for (let offset = 0; offset < 20; offset++) {
        const request = parseResultRequest(
          new Map([
            ['limit', '2'],
            ['offset', String(offset)],
          ]),
        );
        const answer = await results.answer(execution, request, format, '/api/v1');
        if (answer.body.kind !== 'bytes') throw new Error(`a small page in ${answer.body.kind}`);
        const bytes = answer.body.bytes;
        // Small enough for the pool: what made the slabs' waste possible.
        expect(bytes.length).toBeLessThan(4096);
        expect(bytes.buffer.byteLength).toBe(bytes.length);
        expect(bytes.byteOffset).toBe(0);
        const text = bytes.toString();
        if (format === 'json') {
          const rows = (JSON.parse(text) as { result: { rows: { id: number }[] } }).result.rows;
          expect(rows.map((row) => row.id)).toEqual([offset, offset + 1]);
        } else {
          expect(text).toBe(`id,label\n${offset},label ${offset}\n${offset + 1},label ${offset + 1}\n`);
        }
        // The same request again is the kept answer itself.
        expect(await results.answer(execution, request, format, '/api/v1')).toBe(answer);
      }
    }
  });

  it('writes a head and tail of more than one byte per character exactly around the rows', async () => {
    const id = await executeSql(service, `SELECT i AS "größe", '→' || i AS "naïve" FROM range(3) r(i)`);
    expect((await finished(service, id)).state).toBe('QUERY_STATE_COMPLETED');
    const other = service.executions.get(id) as Execution;
    const request = parseResultRequest(new Map([['limit', '2']]));
    const csv = await results.answer(other, request, 'csv', '/v1');
    if (csv.body.kind !== 'bytes') throw new Error(`a small page in ${csv.body.kind}`);
    expect(csv.body.bytes.toString()).toBe('größe,naïve\n0,→0\n1,→1\n');
    expect(csv.body.size).toBe(Buffer.byteLength('größe,naïve\n0,→0\n1,→1\n'));
    const json = await results.answer(other, request, 'json', '/v1');
    if (json.body.kind !== 'bytes') throw new Error(`a small page in ${json.body.kind}`);
    const envelope = JSON.parse(json.body.bytes.toString()) as {
      result: { rows: unknown[]; metadata: { column_names: string[]; result_set_bytes: number } };
    };
    expect(envelope.result.rows).toEqual([
      { größe: 0, naïve: '→0' },
      { größe: 1, naïve: '→1' },
    ]);
    expect(envelope.result.metadata.result_set_bytes).toBe(
      Buffer.byteLength(JSON.stringify(envelope.result.rows)),
    );
  });
});
