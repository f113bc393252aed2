import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeSql, finished } from '../queries/support/queries.js';
import { executeAndWait, upload } from '../support/results.js';
import { KEYS, startTestService, type TestService } from '../support/service.js';

const QUERIES_DIR = path.resolve(import.meta.dirname, '../fixtures/queries');

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ QUERIES_DIR });
  // The scheduler runs every saved query once at start (1002 runs until the service stops);
  // wait for the others to be recorded, so they do not land between a test's two scrapes.
  for (const deadline = Date.now() + 30_000; ; ) {
    const now = await scrape();
    const settled = ['1001', '1003', '1004', '1005'].every(
      (id) => now('refresh_duration_seconds_count', { query_id: id }) >= 1,
    );
    if (settled) break;
    if (Date.now() > deadline) throw new Error('the start-up refreshes did not finish in 30 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
});
afterAll(() => service.stop());

type Labels = Record<string, string>;

/** The samples of a Prometheus text exposition, as [name, labels, value]. */
function parseExposition(text: string): [string, Labels, number][] {
  const samples: [string, Labels, number][] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Labels = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] as string] = pair[2] as string;
    }
    samples.push([match[1] as string, labels, Number(match[3])]);
  }
  return samples;
}

async function scrape(): Promise<(name: string, labels?: Labels) => number> {
  const response = await fetch(`${service.url}/metrics`);
  expect(response.status).toBe(200);
  const samples = parseExposition(await response.text());
  // The sum over every series of `name` whose labels include `labels`.
  return (name, labels = {}) =>
    samples
      .filter(([n, l]) => n === name && Object.entries(labels).every(([k, v]) => l[k] === v))
      .reduce((sum, [, , value]) => sum + value, 0);
}

describe('GET /metrics', () => {
  it('answers the Prometheus text format without a key, with process metrics', async () => {
    const response = await fetch(`${service.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toContain('# TYPE http_requests_total counter');
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(() => parseExposition(text)).not.toThrow();
  });

  it('counts requests by route pattern and status, never by URL or key', async () => {
    const was = await scrape();
    const secretId = '01SECRETEXECUTIONID0000000';
    expect((await service.request(`/v1/execution/${secretId}/results?limit=5`)).status).toBe(404);
    expect((await service.request(`/api/v1/execution/${secretId}/status`)).status).toBe(404);
    expect((await service.request('/v1/tables')).status).toBe(200);
    expect((await service.request('/v1/tables', { key: 'not-a-key-at-all' })).status).toBe(401);
    expect((await service.request('/v1/no/such/path/at-all')).status).toBe(404);
    expect((await service.request('/v1/tables', { method: 'PUT' })).status).toBe(405);
    const now = await scrape();
    const delta = (labels: Labels) => now('http_requests_total', labels) - was('http_requests_total', labels);
    expect(delta({ route: '/v1/execution/:executionId/results', status: '404', method: 'GET' })).toBe(1);
    expect(delta({ route: '/v1/execution/:executionId/status', status: '404' })).toBe(1);
    expect(delta({ route: '/v1/tables', status: '200' })).toBe(1);
    expect(delta({ route: '/v1/tables', status: '401' })).toBe(1);
    expect(delta({ route: '/v1/tables', status: '405', method: 'PUT' })).toBe(1);
    expect(delta({ route: 'unmatched', status: '404' })).toBe(1);
    const latency = (labels: Labels) =>
      now('http_request_duration_seconds_count', labels) - was('http_request_duration_seconds_count', labels);
    expect(latency({ route: '/v1/tables', status: '200' })).toBe(1);

    const text = await (await fetch(`${service.url}/metrics`)).text();
    for (const leaked of [secretId, 'no/such', KEYS.alice, 'not-a-key', 'limit=5'])
      expect(text).not.toContain(leaked);
  });

  it('labels a request by the route that matched it, whatever the case of its path', async () => {
    const was = await scrape();
    // Mount paths match in any case, the routes under them do not.
    expect((await service.request('/V1/tables')).status).toBe(200);
    expect((await service.request('/API/v1/tables')).status).toBe(200);
    expect((await service.request('/Api/V1/execution/01NOSUCHEXECUTION000000000/status')).status).toBe(404);
    expect((await service.request('/v1/TABLES')).status).toBe(404);
    const now = await scrape();
    const delta = (labels: Labels) => now('http_requests_total', labels) - was('http_requests_total', labels);
    expect(delta({ route: '/v1/tables', status: '200' })).toBe(2);
    expect(delta({ route: '/v1/execution/:executionId/status', status: '404' })).toBe(1);
    expect(delta({ route: 'unmatched', status: '404' })).toBe(1);
    const routes = parseExposition(await (await fetch(`${service.url}/metrics`)).text())
      .filter(([name]) => name === 'http_requests_total')
      .map(([, labels]) => labels.route);
    for (const route of routes)
      expect(route === 'unmatched' || /^\/(v1|settings|health|metrics)\b/.test(route as string)).toBe(true);
  });

  it('records upload and insert bytes and durations', async () => {
    const was = await scrape();
    const csv = 'n,label\n1,one\n2,two\n';
    await upload(service, 'metered', csv);
    const refused = await service.json('/v1/table/upload/csv', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ table_name: 'Bad Name', data: csv }),
    });
    expect(refused.status).toBe(400);
    const created = await service.json('/v1/table/create', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        namespace: 'alice',
        table_name: 'metered_log',
        schema: [{ name: 'n', type: 'integer' }],
      }),
    });
    expect(created.status).toBe(201);
    const insertBody = 'n\n1\n2\n3\n';
    const inserted = await service.json('/v1/table/alice/metered_log/insert', {
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: insertBody,
    });
    expect(inserted.status).toBe(200);
    const now = await scrape();
    const delta = (name: string, labels: Labels) => now(name, labels) - was(name, labels);
    expect(delta('upload_body_bytes_count', { operation: 'upload' })).toBe(1);
    expect(delta('upload_body_bytes_sum', { operation: 'upload' })).toBe(Buffer.byteLength(csv));
    expect(delta('upload_duration_seconds_count', { operation: 'upload', status: '200' })).toBe(1);
    expect(delta('upload_duration_seconds_count', { operation: 'upload', status: '400' })).toBe(1);
    expect(delta('upload_body_bytes_count', { operation: 'insert' })).toBe(1);
    expect(delta('upload_body_bytes_sum', { operation: 'insert' })).toBe(Buffer.byteLength(insertBody));
    expect(delta('upload_duration_seconds_count', { operation: 'insert', status: '200' })).toBe(1);
  });

  it('records refresh durations and failures by saved query', async () => {
    await upload(service, 'numbers', 'n\n3\n1\n2\n');
    await upload(service, 'flaky', 'n\nnot a number\n');
    const was = await scrape();
    expect((await executeAndWait(service, 1001)).state).toBe('QUERY_STATE_COMPLETED');
    expect((await executeAndWait(service, 1004)).state).toBe('QUERY_STATE_FAILED');
    const now = await scrape();
    const delta = (name: string, labels: Labels) => now(name, labels) - was(name, labels);
    expect(
      delta('refresh_duration_seconds_count', { query_id: '1001', state: 'QUERY_STATE_COMPLETED' }),
    ).toBe(1);
    expect(delta('refresh_duration_seconds_count', { query_id: '1004', state: 'QUERY_STATE_FAILED' })).toBe(
      1,
    );
    expect(delta('refresh_failures_total', { query_id: '1004', type: 'FAILED_TYPE_EXECUTION_FAILED' })).toBe(
      1,
    );
    expect(delta('refresh_failures_total', { query_id: '1001' })).toBe(0);
  });

  it('counts the datapoints of result pages, cached or not', async () => {
    await upload(service, 'numbers', 'n\n3\n1\n2\n');
    await executeAndWait(service, 1001);
    const was = await scrape();
    for (let i = 0; i < 2; i++) {
      expect((await service.request('/v1/query/1001/results?limit=2')).status).toBe(200);
    }
    expect((await service.request('/v1/query/1001/results/csv')).status).toBe(200);
    expect((await service.request('/v1/query/1001/results?filters=nope%3D1')).status).toBe(400);
    const now = await scrape();
    const delta = (labels: Labels) =>
      now('datapoints_served_total', labels) - was('datapoints_served_total', labels);
    expect(delta({ format: 'json' })).toBe(4);
    expect(delta({ format: 'csv' })).toBe(3);
  });

  it('reports what the result caches hold and their bounds', async () => {
    await upload(service, 'numbers', 'n\n3\n1\n2\n');
    await executeAndWait(service, 1001);
    expect((await service.request('/v1/query/1001/results?limit=1')).status).toBe(200);
    const now = await scrape();
    expect(now('result_cache_limit_bytes', { cache: 'rows' })).toBe(128 * 2 ** 20);
    expect(now('result_cache_limit_bytes', { cache: 'answers' })).toBe(64 * 2 ** 20);
    expect(now('result_cache_bytes', { cache: 'rows' })).toBeGreaterThan(0);
    expect(now('result_cache_bytes', { cache: 'answers' })).toBeGreaterThan(0);
    // A read answered from the cache adds nothing.
    const held = now('result_cache_bytes', { cache: 'answers' });
    expect((await service.request('/v1/query/1001/results?limit=1')).status).toBe(200);
    expect((await scrape())('result_cache_bytes', { cache: 'answers' })).toBe(held);
  });

  it("reports DuckDB's own memory, which grows with the data it holds", async () => {
    const before = (await scrape())('duckdb_memory_bytes');
    expect(before).toBeGreaterThan(0);
    const rows = Array.from({ length: 200_000 }, (_, i) => `${i},${i * 7},label ${i}`).join('\n');
    await upload(service, 'memory_hog', `a,b,c\n${rows}\n`);
    // The checkpoint after the upload writes the rows out of memory, within half a second here
    // (so a scrape right after the upload raced it); reading them loads their blocks, which stay.
    await finished(
      service,
      await executeSql(service, 'SELECT sum(a), sum(b), max(c) FROM dataset_memory_hog'),
    );
    expect((await scrape())('duckdb_memory_bytes')).toBeGreaterThan(before + 2 ** 20);
  });

  it('keeps the counts of two services in one process apart', async () => {
    const other = await startTestService();
    try {
      await other.request('/v1/tables');
      const text = await (await fetch(`${other.url}/metrics`)).text();
      const samples = parseExposition(text).filter(([name]) => name === 'http_requests_total');
      expect(samples.map(([, labels, value]) => [labels.route, value])).toEqual([['/v1/tables', 1]]);
    } finally {
      await other.stop();
    }
  });
});
