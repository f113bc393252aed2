import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvRowExpression } from '../../src/executions/row-rendering.js';
import { type Envelope, executeAndWait, upload } from '../support/results.js';
import { KEYS, startTestService, type TestService, tempDir } from '../support/service.js';

/**
 * The Parquet results: files written by DuckDB, read back by DuckDB here, equal to the result
 * as the CSV endpoint renders it (one renderer for both sides: the service's own CSV
 * expressions, applied to the file's columns), with columns, filters and sort honoured.
 */

const QUERIES_DIR = path.resolve(import.meta.dirname, '../fixtures/queries');
let service: TestService;
let reader: Awaited<ReturnType<DuckDBInstance['connect']>>;
const downloads = tempDir('parquet-downloads-');
let numbers: Envelope;
let types: Envelope;

/** 2^127 - 1 and -(2^127): the ends of HUGEINT, which DuckDB's Parquet writer would round. */
const HUGE = '170141183460469231731687303715884105727';
const HUGE_NEGATIVE = '-170141183460469231731687303715884105728';

function numbersCsv(count: number): string {
  const lines = ['n,label,big'];
  for (let i = 1; i <= count; i++) {
    const big = i === 1 ? HUGE : i === 2 ? HUGE_NEGATIVE : String(i * 1000);
    lines.push(`${i},"item ${i % 7}, ""quoted""",${big}`);
  }
  return `${lines.join('\n')}\n`;
}

beforeAll(async () => {
  // A small datapoint cap: files have none, pages do.
  service = await startTestService({ QUERIES_DIR, MAX_DATAPOINTS_PER_REQUEST: '100' });
  await upload(service, 'numbers', numbersCsv(500));
  numbers = await executeAndWait(service, 1001);
  types = await executeAndWait(service, 1003);
  expect([numbers.state, types.state]).toEqual(['QUERY_STATE_COMPLETED', 'QUERY_STATE_COMPLETED']);
  reader = await (await DuckDBInstance.create(':memory:')).connect();
  await reader.run("SET TimeZone = 'UTC'");
});

afterAll(async () => {
  reader?.closeSync();
  await service?.stop();
  fs.rmSync(downloads, { recursive: true, force: true });
});

async function fetchParquet(
  urlPath: string,
  key: string = KEYS.alice,
): Promise<{ response: Response; file: string }> {
  const response = await service.request(urlPath, { key });
  const file = path.join(downloads, `${fs.readdirSync(downloads).length}.parquet`);
  fs.writeFileSync(file, Buffer.from(await response.arrayBuffer()));
  return { response, file };
}

/** The file's rows rendered by the service's CSV renderer, and its column names and types. */
async function readBack(
  file: string,
): Promise<{ columns: { name: string; type: string }[]; lines: string[] }> {
  const source = `read_parquet('${file.replaceAll("'", "''")}')`;
  const described = await reader.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`);
  const columns = described
    .getRowObjectsJS()
    .map((row) => ({ name: String(row.column_name), type: String(row.column_type).toLowerCase() }));
  const rows = await reader.runAndReadAll(`SELECT ${csvRowExpression(columns)} AS line FROM ${source}`);
  return { columns, lines: rows.getRowObjectsJS().map((row) => String(row.line)) };
}

/** The CSV endpoint's rows for the same parameters (every row: the cap is lifted). */
async function csvLines(urlPath: string): Promise<string[]> {
  const separator = urlPath.includes('?') ? '&' : '?';
  const response = await service.request(`${urlPath}${separator}ignore_max_datapoints_per_request=true`);
  expect(response.status).toBe(200);
  return (await response.text()).split('\n').slice(1, -1);
}

describe('GET /v1/execution/{id}/results/parquet', () => {
  it('is the whole result, value for value, as the CSV endpoint renders it', async () => {
    const base = `/v1/execution/${types.execution_id}/results`;
    const { response, file } = await fetchParquet(`${base}/parquet`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="${types.execution_id.toLowerCase()}.parquet"`,
    );
    expect(Number(response.headers.get('content-length'))).toBe(fs.statSync(file).size);
    const back = await readBack(file);
    expect(back.columns.map((c) => c.name)).toEqual(types.result_metadata?.column_names);
    expect(back.lines).toEqual(await csvLines(`${base}/csv`));
    // Types survive: a timestamp is a timestamp, a date a date, a blob a blob.
    const typeOf = Object.fromEntries(back.columns.map((c) => [c.name, c.type]));
    expect(typeOf).toMatchObject({ ts: 'timestamp', day: 'date', bin: 'blob', unsafe_big: 'bigint' });
  });

  it('keeps 128-bit integers exact, as text', async () => {
    const { file } = await fetchParquet(`/v1/execution/${numbers.execution_id}/results/parquet?limit=3`);
    const back = await readBack(file);
    expect(back.columns.find((c) => c.name === 'big')?.type).toBe('varchar');
    expect(back.lines).toEqual([
      `1,"item 1, ""quoted""",${HUGE}`,
      `2,"item 2, ""quoted""",${HUGE_NEGATIVE}`,
      '3,"item 3, ""quoted""",3000',
    ]);
    const json = await service.json<Envelope>(
      `/v1/execution/${numbers.execution_id}/results?limit=2&columns=big`,
    );
    expect(json.body.result?.rows).toEqual([{ big: HUGE }, { big: HUGE_NEGATIVE }]);
  });

  it('honours columns, filters, sort_by, limit and offset, and has no datapoint cap', async () => {
    const query = `columns=${encodeURIComponent('label, n')}&filters=${encodeURIComponent("n > 10 AND label LIKE 'item 3%'")}&sort_by=${encodeURIComponent('n desc')}`;
    const base = `/v1/execution/${numbers.execution_id}/results`;
    // The JSON page of these rows is over the cap of 100 datapoints; the file is not.
    const page = await service.json<{ error: string }>(`${base}?${query}`);
    expect(page.status).toBe(400);
    const { response, file } = await fetchParquet(`${base}/parquet?${query}`);
    expect(response.status).toBe(200);
    const back = await readBack(file);
    expect(back.columns.map((c) => c.name)).toEqual(['label', 'n']);
    const expected = await csvLines(`${base}/csv?${query}`);
    expect(expected.length).toBe(70);
    expect(back.lines).toEqual(expected);
    expect(back.lines[0]).toBe('"item 3, ""quoted""",500');

    const window = await fetchParquet(`${base}/parquet?${query}&limit=5&offset=10`);
    expect((await readBack(window.file)).lines).toEqual(expected.slice(10, 15));
  });

  it('refuses what pages refuse, with the same JSON errors, and leaves no file behind', async () => {
    const base = `/v1/execution/${numbers.execution_id}/results/parquet`;
    const cases: [string, number, RegExp][] = [
      [`${base}?filters=${encodeURIComponent("n > 'abc'")}`, 400, /^filters: expected a number for column n/],
      [`${base}?sort_by=nope`, 400, /^sort_by: unknown column "nope"/],
      [`${base}?columns=n,n`, 400, /^columns:/],
      [`${base}?sample_count=3`, 400, /sample_count.*not available for Parquet/],
      [`${base}?limit=0`, 400, /"limit" must be/],
      [`${base}?bogus=1`, 400, /unknown query parameter "bogus"/],
    ];
    for (const [urlPath, status, error] of cases) {
      const answer = await service.json<{ error: string }>(urlPath);
      expect(answer.status, urlPath).toBe(status);
      expect(answer.body.error, urlPath).toMatch(error);
    }
    // What does not exist is absent here as on the JSON results, with the same answer.
    for (const urlPath of ['/v1/execution/01NOPE/results', '/v1/query/999999/results']) {
      const json = await service.json<{ error: string }>(urlPath);
      expect(json.status).toBe(404);
      expect(await service.json(`${urlPath}/parquet`)).toEqual(json);
    }
    const anonymous = await service.json<{ error: string }>(base, { key: null });
    expect(anonymous).toEqual({ status: 401, body: { error: expect.stringMatching(/^missing API key: /) } });
    const post = await service.json<{ error: string }>(base, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(fs.readdirSync(path.join(service.dataDir, 'tmp')).filter((f) => f.endsWith('.parquet'))).toEqual(
      [],
    );
  });

  it('leaves no file behind, whether the client reads it all or leaves after the headers', async () => {
    const tmp = path.join(service.dataDir, 'tmp');
    const url = `${service.url}/v1/execution/${types.execution_id}/results/parquet`;
    await new Promise<void>((resolve, reject) => {
      const request = http.get(url, { headers: { 'x-service-api-key': KEYS.alice } }, (response) => {
        expect(response.statusCode).toBe(200);
        request.destroy();
        resolve();
      });
      request.on('error', (error) => (request.destroyed ? resolve() : reject(error)));
    });
    const { response } = await fetchParquet(`/v1/execution/${types.execution_id}/results/parquet`);
    expect(response.status).toBe(200);
    for (let i = 0; i < 100 && fs.readdirSync(tmp).some((f) => f.endsWith('.parquet')); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(fs.readdirSync(tmp).filter((f) => f.endsWith('.parquet'))).toEqual([]);
  });

  it('answers 409 for an execution without a result, as the CSV endpoint does', async () => {
    const { body } = await service.json<{ execution_id: string }>('/v1/query/1002/execute', {
      method: 'POST',
    });
    const running = await service.json<{ error: string }>(
      `/v1/execution/${body.execution_id}/results/parquet`,
    );
    expect(running.status).toBe(409);
    expect(running.body.error).toMatch(/has no result to return/);
    await service.json(`/v1/execution/${body.execution_id}/cancel`, { method: 'POST', key: KEYS.admin });
  });
});

describe('GET /v1/query/{id}/results/parquet', () => {
  it('is the latest result of the saved query', async () => {
    const { response, file } = await fetchParquet(
      '/v1/query/1001/results/parquet?columns=n&sort_by=n%20desc&limit=2',
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toContain(numbers.execution_id.toLowerCase());
    expect((await readBack(file)).lines).toEqual(['500', '499']);
  });
});

describe('access rules and parameters of users’ queries', () => {
  const post = (urlPath: string, body: unknown, key: string) =>
    service.json<{ query_id: number; execution_id: string }>(urlPath, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      key,
    });
  async function finished(executionId: string, key: string): Promise<void> {
    for (let i = 0; i < 600; i++) {
      const { body } = await service.json<{ is_execution_finished: boolean }>(
        `/v1/execution/${executionId}/status`,
        { key },
      );
      if (body.is_execution_finished) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`execution ${executionId} did not finish`);
  }

  it('a private query’s file is the owner’s alone; to anyone else it is absent, as its JSON result', async () => {
    const { body: query } = await post(
      '/v1/query',
      { name: 'secret', query_sql: 'SELECT 42 AS answer', is_private: true },
      KEYS.bob,
    );
    const { body: run } = await post(`/v1/query/${query.query_id}/execute`, {}, KEYS.bob);
    await finished(run.execution_id, KEYS.bob);
    for (const base of [`/v1/execution/${run.execution_id}/results`, `/v1/query/${query.query_id}/results`]) {
      const own = await fetchParquet(`${base}/parquet`, KEYS.bob);
      expect(own.response.status, base).toBe(200);
      expect((await readBack(own.file)).lines).toEqual(['42']);
      const json = await service.json(base, { key: KEYS.alice });
      expect(json.status, base).toBe(404);
      expect(await service.json(`${base}/parquet`, { key: KEYS.alice })).toEqual(json);
    }
  });

  it('a query’s latest file for a parameter set (params.NAME), as its JSON result', async () => {
    const { body: query } = await post(
      '/v1/query',
      {
        name: 'times',
        query_sql: 'SELECT range * {{factor}} AS x FROM range(3)',
        parameters: [{ key: 'factor', type: 'number', value: '2' }],
      },
      KEYS.alice,
    );
    for (const factor of ['10', '100']) {
      const { body: run } = await post(
        `/v1/query/${query.query_id}/execute`,
        { query_parameters: { factor } },
        KEYS.alice,
      );
      await finished(run.execution_id, KEYS.alice);
    }
    const ten = await fetchParquet(`/v1/query/${query.query_id}/results/parquet?params.factor=10`);
    expect((await readBack(ten.file)).lines).toEqual(['0', '10', '20']);
    const latest = await fetchParquet(`/v1/query/${query.query_id}/results/parquet`);
    expect(latest.response.status).toBe(404); // never run with its default, 2
    const hundred = await fetchParquet(`/v1/query/${query.query_id}/results/parquet?params.factor=100`);
    expect((await readBack(hundred.file)).lines).toEqual(['0', '100', '200']);
  });
});
