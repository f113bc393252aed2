import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Envelope, executeAndWait, upload, waitFinished, walk } from '../support/results.js';
import { KEYS, startTestService, type TestService } from '../support/service.js';

const QUERIES_DIR = path.resolve(import.meta.dirname, '../fixtures/queries');
let service: TestService;
let numbers: Envelope;

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function numbersCsv(count: number, label = 'n') {
  const lines = ['n,sq,name'];
  for (let i = 1; i <= count; i++) lines.push(`${i},${i * i},${label}${i}`);
  return `${lines.join('\n')}\n`;
}

beforeAll(async () => {
  service = await startTestService({ QUERIES_DIR });
  await upload(service, 'numbers', numbersCsv(25));
  numbers = await executeAndWait(service, 1001);
  expect(numbers.state).toBe('QUERY_STATE_COMPLETED');
});
afterAll(async () => {
  await service.stop();
});

describe('the results envelope', () => {
  it('answers every field of spec §2.2 with counts for the page and the whole result', async () => {
    const { status, body } = await service.json<Envelope>('/v1/query/1001/results?limit=10&columns=name,n');
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual([
      'execution_id',
      'query_id',
      'state',
      'is_execution_finished',
      'submitted_at',
      'execution_started_at',
      'execution_ended_at',
      'expires_at',
      'next_offset',
      'next_uri',
      'result',
    ]);
    expect(body).toMatchObject({
      execution_id: numbers.execution_id,
      query_id: 1001,
      state: 'QUERY_STATE_COMPLETED',
      is_execution_finished: true,
      next_offset: 10,
    });
    for (const field of [
      'submitted_at',
      'execution_started_at',
      'execution_ended_at',
      'expires_at',
    ] as const) {
      expect(body[field]).toMatch(RFC3339);
    }
    const rows = body.result?.rows ?? [];
    expect(rows[0]).toEqual({ name: 'n1', n: 1 });
    const metadata = body.result?.metadata;
    expect(metadata).toEqual({
      column_names: ['name', 'n'],
      column_types: ['varchar', 'bigint'],
      datapoint_count: 20,
      execution_time_millis: expect.any(Number),
      pending_time_millis: expect.any(Number),
      result_set_bytes: Buffer.byteLength(JSON.stringify(rows)),
      row_count: 10,
      total_result_set_bytes: expect.any(Number),
      total_row_count: 25,
    });
    const whole = await service.json<Envelope>('/v1/query/1001/results');
    expect(whole.body.result?.metadata.total_result_set_bytes).toBe(
      Buffer.byteLength(JSON.stringify(whole.body.result?.rows)),
    );
    expect(whole.body.result?.metadata.result_set_bytes).toBe(
      whole.body.result?.metadata.total_result_set_bytes,
    );
  });

  it('counts total_result_set_bytes as the pages render, for a result rendered in its run (1,000 rows) and one counted per column (1,001)', async () => {
    // Text that takes more bytes than characters, NULLs, a timestamp, a double's infinity.
    const sql = (rows: number) =>
      `SELECT i, 'é' || i AS t, CASE WHEN i % 3 = 0 THEN NULL ELSE i / 7 END AS d, TIMESTAMP '2024-01-01' + INTERVAL (i) SECOND AS ts,
        CASE WHEN i = 5 THEN 'inf'::DOUBLE ELSE i END AS x FROM range(${rows}) r(i) ORDER BY i DESC`;
    for (const rows of [1000, 1001]) {
      const { body } = await service.json<{ execution_id: string }>('/v1/sql/execute', {
        method: 'POST',
        body: JSON.stringify({ sql: sql(rows) }),
      });
      const status = await waitFinished(service, body.execution_id);
      expect(status.state).toBe('QUERY_STATE_COMPLETED');
      const first = await service.json<Envelope>(`/v1/execution/${body.execution_id}/results?limit=3`);
      expect(first.body.result?.rows).toEqual([
        {
          i: rows - 1,
          t: `é${rows - 1}`,
          d: (rows - 1) % 3 === 0 ? null : (rows - 1) / 7,
          ts: expect.any(String),
          x: rows - 1,
        },
        expect.objectContaining({ i: rows - 2 }),
        expect.objectContaining({ i: rows - 3 }),
      ]);
      const response = await service.request(`/v1/execution/${body.execution_id}/results`);
      const text = await response.text();
      const all = (JSON.parse(text) as Envelope).result?.rows ?? [];
      expect(all).toHaveLength(rows);
      expect(all.find((row) => row.i === 5)?.x).toBe('Infinity');
      // The rows exactly as sent: DuckDB writes some doubles otherwise than JSON.stringify.
      const rowsText = text.slice(text.indexOf('"rows":['), text.lastIndexOf('],"metadata":') + 1);
      const bytes = Buffer.byteLength(rowsText) - Buffer.byteLength('"rows":');
      expect(status.result_metadata?.total_result_set_bytes).toBe(bytes);
    }
  });

  it('leaves next_offset and next_uri out on the last page and without a limit', async () => {
    for (const query of ['', '?limit=25', '?limit=5&offset=20', '?limit=100']) {
      const { body } = await service.json<Envelope>(`/v1/query/1001/results${query}`);
      expect(body).not.toHaveProperty('next_offset');
      expect(body).not.toHaveProperty('next_uri');
    }
  });

  it('renders values by DESIGN §5: big integers and specials as strings, timestamps, dates, hex', async () => {
    const types = await executeAndWait(service, 1003);
    expect(types.state).toBe('QUERY_STATE_COMPLETED');
    const { body } = await service.json<Envelope>(`/v1/execution/${types.execution_id}/results`);
    expect(body.result?.rows[0]).toEqual({
      id: 1,
      safe_big: 9007199254740991,
      unsafe_big: '9007199254740993',
      dbl: 1.5,
      nan: 'NaN',
      inf: 'Infinity',
      dec_small: 12.25,
      dec_wide: '123456789012345678.5',
      ts: '2024-01-05 10:00:00.123 UTC',
      day: '2024-02-29',
      bin: '0xab01',
      flag: true,
      txt: 'text, with "quotes"',
      maybe: null,
      huge: '340282366920938463463374607431768211456',
      list: [1, 2],
      struct: { k: 'v' },
    });
    expect(body.result?.rows[1]).toMatchObject({
      nan: '-Infinity',
      unsafe_big: '-9007199254740993',
      huge: -5,
      bin: '0x',
    });
    expect(body.result?.metadata.column_types).toEqual([
      'integer',
      'bigint',
      'bigint',
      'double',
      'double',
      'double',
      'decimal(10,2)',
      'decimal(38,1)',
      'timestamp',
      'date',
      'blob',
      'boolean',
      'varchar',
      'varchar',
      'bignum',
      'integer[]',
      'struct(k varchar)',
    ]);
  });
});

describe('pagination', () => {
  it('walks every row exactly once through next_uri, in order', async () => {
    const pages = await walk(service, '/api/v1/query/1001/results?limit=7&sort_by=n%20desc&columns=n');
    expect(pages.map((p) => p.result?.rows.length)).toEqual([7, 7, 7, 4]);
    const values = pages.flatMap((p) => p.result?.rows.map((r) => r.n));
    expect(values).toEqual(Array.from({ length: 25 }, (_, i) => 25 - i));
    expect(pages.at(-1)).not.toHaveProperty('next_uri');
    for (const page of pages) expect(page.result?.metadata.total_row_count).toBe(25);
  });

  it('builds next_uri absolute, pinned to the execution, keys sorted, without api_key', async () => {
    const { body } = await service.json<Envelope>(
      `/v1/query/1001/results?sort_by=n&limit=3&filters=n%20%3E%202&columns=n,name&api_key=${KEYS.alice}`,
      { key: null },
    );
    expect(body.next_uri).toBe(
      `${service.url}/v1/execution/${numbers.execution_id}/results?columns=n%2Cname&filters=n%20%3E%202&limit=3&offset=3&sort_by=n`,
    );
    const api = await service.json<Envelope>('/api/v1/query/1001/results?limit=3');
    expect(api.body.next_uri).toBe(
      `${service.url}/api/v1/execution/${numbers.execution_id}/results?limit=3&offset=3`,
    );
  });

  it('following next_uri never shifts rows, even when a refresh happens between two pages', async () => {
    await upload(service, 'numbers', numbersCsv(25));
    const before = await executeAndWait(service, 1001);
    const first = await service.json<Envelope>('/v1/query/1001/results?limit=10');
    expect(first.body.execution_id).toBe(before.execution_id);
    await upload(service, 'numbers', numbersCsv(30, 'fresh'));
    const after = await executeAndWait(service, 1001);
    expect(after.execution_id).not.toBe(before.execution_id);
    const rest = await walk(service, (first.body.next_uri as string).slice(service.url.length));
    const all = [...(first.body.result?.rows ?? []), ...rest.flatMap((p) => p.result?.rows ?? [])];
    expect(all.map((r) => r.name)).toEqual(Array.from({ length: 25 }, (_, i) => `n${i + 1}`));
    const latest = await service.json<Envelope>('/v1/query/1001/results?limit=1');
    expect(latest.body.execution_id).toBe(after.execution_id);
    expect(latest.body.result?.rows).toEqual([{ n: 1, sq: 1, name: 'fresh1' }]);
    // Back to the 25 rows the other tests expect.
    await upload(service, 'numbers', numbersCsv(25));
    numbers = await executeAndWait(service, 1001);
  });

  it('offset past the end is 200 with no rows', async () => {
    const { status, body } = await service.json<Envelope>('/v1/query/1001/results?offset=1000&limit=5');
    expect(status).toBe(200);
    expect(body.result?.rows).toEqual([]);
    expect(body.result?.metadata.row_count).toBe(0);
    expect(body.result?.metadata.total_row_count).toBe(25);
  });

  it('the CSV variant has a header line, LF line ends and pagination headers', async () => {
    const response = await service.request('/v1/query/1001/results/csv?limit=2&offset=1&columns=name,sq');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(await response.text()).toBe('name,sq\nn2,4\nn3,9\n');
    expect(response.headers.get('x-dune-next-offset')).toBe('3');
    expect(response.headers.get('x-dune-next-uri')).toBe(
      `${service.url}/v1/execution/${numbers.execution_id}/results/csv?columns=name%2Csq&limit=2&offset=3`,
    );
    const last = await service.request('/v1/query/1001/results/csv?limit=5&offset=20');
    expect(last.headers.get('x-dune-next-uri')).toBeNull();
    expect((await last.text()).split('\n')).toHaveLength(7);
  });
});

describe('filters, sort_by and columns', () => {
  it('filters and sorts with ties broken by row order', async () => {
    const { body } = await service.json<Envelope>(
      `/v1/query/1001/results?filters=${encodeURIComponent("n > 20 OR name IN ('n2', 'n3')")}&sort_by=${encodeURIComponent('sq DESC')}&columns=name`,
    );
    expect(body.result?.rows.map((r) => r.name)).toEqual(['n25', 'n24', 'n23', 'n22', 'n21', 'n3', 'n2']);
    expect(body.result?.metadata.total_row_count).toBe(7);
  });

  it('answers 400 naming the parameter for a bad filter, sort or column', async () => {
    for (const [query, message] of [
      ['filters=nope%20%3D%201', /unknown column/],
      ['filters=n%20%3D%20NULL', /IS NULL/],
      ['sort_by=n%20sideways', /sort_by/],
      ['columns=n,missing', /missing/],
      ['limit=0', /"limit" must be/],
      ['offset=-3', /"offset" must be/],
      ['limit=ten', /"limit" must be a whole number/],
      ['allow_partial_results=maybe', /allow_partial_results/],
      ['wat=1', /unknown query parameter "wat"/],
      ['limit=1&limit=2', /more than once/],
      ['params.x=1', /unknown parameter "x"; this query takes no parameters/],
    ] as const) {
      const { status, body } = await service.json<{ error: string }>(`/v1/query/1001/results?${query}`);
      expect(status, query).toBe(400);
      expect(body.error, query).toMatch(message);
    }
  });

  it('checks a repeated query string by the rules of the endpoint it reaches, every time', async () => {
    // Checked parameters are kept per query string: a refusal is never kept, a page is
    // answered alike, and one endpoint's parameters never pass on another.
    for (let i = 0; i < 2; i++) {
      expect((await service.request('/v1/query/1001/results?limit=ten')).status).toBe(400);
      const { status, body } = await service.json<Envelope>('/v1/query/1001/results?limit=2&columns=n');
      expect(status).toBe(200);
      expect(body.result?.rows).toEqual([{ n: 1 }, { n: 2 }]);
    }
    await service.request('/v1/restaking/avs-stats?queryID=3693850&limit=2');
    const { status, body } = await service.json<{ error: string }>(
      '/v1/query/1001/results?queryID=3693850&limit=2',
    );
    expect(status).toBe(400);
    expect(body.error).toMatch(/unknown query parameter "queryID"/);
    const metrics = await service.json<{ error: string }>('/v1/restaking/avs-stats?limit=2&columns=n');
    expect(metrics.status).toBe(400);
    expect(metrics.body.error).toMatch(/"queryID" is required/);
  });
});

describe('sample_count', () => {
  it('returns exactly min(n, total) distinct rows, with columns and sort_by', async () => {
    const { body } = await service.json<Envelope>(
      '/v1/query/1001/results?sample_count=6&columns=n&sort_by=n%20desc',
    );
    const values = body.result?.rows.map((r) => r.n as number) ?? [];
    expect(values).toHaveLength(6);
    expect(new Set(values).size).toBe(6);
    expect([...values].sort((a, b) => b - a)).toEqual(values);
    expect(Object.keys(body.result?.rows[0] ?? {})).toEqual(['n']);
    const all = await service.json<Envelope>('/v1/query/1001/results?sample_count=500');
    expect(all.body.result?.rows).toHaveLength(25);
    expect(all.body).not.toHaveProperty('next_uri');
  });

  it('cannot be combined with limit, offset or filters', async () => {
    for (const extra of ['limit=2', 'offset=1', 'filters=n%3E1']) {
      const { status, body } = await service.json<{ error: string }>(
        `/v1/query/1001/results?sample_count=3&${extra}`,
      );
      expect(status).toBe(400);
      expect(body.error).toMatch(/"sample_count" cannot be combined/);
    }
  });

  it('is uniform: every row is drawn about equally often (chi-square)', async () => {
    const draws = 400;
    const counts = new Map<number, number>();
    await Promise.all(
      Array.from({ length: draws }, async () => {
        const { body } = await service.json<Envelope>('/v1/query/1001/results?sample_count=5&columns=n');
        for (const row of body.result?.rows ?? [])
          counts.set(row.n as number, (counts.get(row.n as number) ?? 0) + 1);
      }),
    );
    const expected = (draws * 5) / 25;
    let chi = 0;
    for (let n = 1; n <= 25; n++) chi += ((counts.get(n) ?? 0) - expected) ** 2 / expected;
    // 24 degrees of freedom: P(chi² > 51.2) = 0.001.
    expect(chi).toBeLessThan(51.2);
  });
});

describe('execute, status and cancel', () => {
  it('POST execute answers {execution_id, state}; status carries result_metadata once completed', async () => {
    const done = await executeAndWait(service, 1001);
    expect(done).toMatchObject({
      state: 'QUERY_STATE_COMPLETED',
      query_id: 1001,
      is_execution_finished: true,
    });
    expect(done.result_metadata).toEqual({
      column_names: ['n', 'sq', 'name'],
      column_types: ['bigint', 'bigint', 'varchar'],
      datapoint_count: 75,
      execution_time_millis: expect.any(Number),
      pending_time_millis: expect.any(Number),
      result_set_bytes: expect.any(Number),
      row_count: 25,
      total_result_set_bytes: expect.any(Number),
      total_row_count: 25,
    });
    numbers = done;
  });

  it('a failed run is recorded with an error, and the previous result keeps being served', async () => {
    await upload(service, 'flaky', 'n\n3\n1\n2\n');
    const good = await executeAndWait(service, 1004);
    expect(good.state).toBe('QUERY_STATE_COMPLETED');
    await upload(service, 'flaky', 'n\n3\nnot a number\n');
    const bad = await executeAndWait(service, 1004);
    expect(bad.state).toBe('QUERY_STATE_FAILED');
    expect(bad.error).toEqual({
      type: 'FAILED_TYPE_EXECUTION_FAILED',
      message: expect.stringMatching(/Conversion Error/),
    });
    expect(bad).not.toHaveProperty('result_metadata');
    const latest = await service.json<Envelope>('/v1/query/1004/results');
    expect(latest.body.execution_id).toBe(good.execution_id);
    expect(latest.body.result?.rows).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    const failed = await service.json<Envelope>(`/v1/execution/${bad.execution_id}/results`);
    expect(failed.body).toMatchObject({
      state: 'QUERY_STATE_FAILED',
      error: { type: 'FAILED_TYPE_EXECUTION_FAILED' },
    });
    expect(failed.body).not.toHaveProperty('result');
    const csv = await service.json<{ error: string }>(`/v1/execution/${bad.execution_id}/results/csv`);
    expect(csv.status).toBe(409);
  });

  it('queues, reports the queue position, and cancels pending and running executions', async () => {
    const submit = async () =>
      (await service.json<{ execution_id: string }>('/v1/query/1002/execute', { method: 'POST' })).body
        .execution_id;
    // A key runs two at once (MAX_RUNNING_QUERIES_PER_KEY); a run of the file that waits to
    // start is one run for everyone who asks for it meanwhile.
    const submitted = [await submit(), await submit(), await submit(), await submit()];
    const ids = [...new Set(submitted)];
    expect(ids).toHaveLength(3);
    expect(submitted[3]).toBe(submitted[2]);
    const statuses = await Promise.all(ids.map((id) => service.json<Envelope>(`/v1/execution/${id}/status`)));
    const pending = statuses.filter((s) => s.body.state === 'QUERY_STATE_PENDING');
    expect(pending.map((s) => s.body.queue_position)).toEqual([1]);
    for (const id of ids) {
      const { body } = await service.json<{ success: boolean }>(`/v1/execution/${id}/cancel`, {
        method: 'POST',
      });
      expect(body).toEqual({ success: true });
    }
    for (const id of ids) {
      const status = await waitFinished(service, id);
      expect(status.state).toBe('QUERY_STATE_CANCELLED');
      expect(status.cancelled_at).toMatch(RFC3339);
    }
    const again = await service.json<{ success: boolean }>(`/v1/execution/${ids[0]}/cancel`, {
      method: 'POST',
    });
    expect(again.body).toEqual({ success: false });
  });

  it('before any run completed, the latest result is the running envelope without result', async () => {
    const { body } = await service.json<Envelope>('/v1/query/1002/results');
    expect(['QUERY_STATE_PENDING', 'QUERY_STATE_EXECUTING', 'QUERY_STATE_CANCELLED']).toContain(body.state);
    expect(body).not.toHaveProperty('result');
  });

  it('refuses query parameters in the execute body, and unknown ids', async () => {
    const withParams = await service.json<{ error: string }>('/v1/query/1001/execute', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query_parameters: [{ name: 'x', value: 1 }] }),
    });
    expect(withParams.status).toBe(400);
    const sdkLike = await service.json('/v1/query/1001/execute', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query_parameters: [], performance: 'medium' }),
    });
    expect(sdkLike.status).toBe(200);
    await waitFinished(service, (sdkLike.body as { execution_id: string }).execution_id);
    for (const [path, method] of [
      ['/v1/query/999/execute', 'POST'],
      ['/v1/query/abc/results', 'GET'],
      ['/v1/query/999/results/csv', 'GET'],
      ['/v1/execution/01NOPE/results', 'GET'],
      ['/v1/execution/01NOPE/status', 'GET'],
      ['/v1/execution/01NOPE/cancel', 'POST'],
    ] as const) {
      const { status } = await service.json(path, { method });
      expect(status, path).toBe(404);
    }
  });
});

describe('expiry', () => {
  it('an execution past expires_at answers QUERY_STATE_EXPIRED without rows, then is purged', async () => {
    const old = await executeAndWait(service, 1004);
    const record = service.executions.store.get(old.execution_id);
    if (!record) throw new Error('no record');
    await service.executions.store.save({ ...record, expiresAt: new Date(Date.now() - 1000) });
    const { body } = await service.json<Envelope>(`/v1/execution/${old.execution_id}/results`);
    expect(body.state).toBe('QUERY_STATE_EXPIRED');
    expect(body).not.toHaveProperty('result');
    await service.executions.purgeExpired(Date.now() + 2 * 86_400_000);
    expect((await service.json(`/v1/execution/${old.execution_id}/results`)).status).toBe(404);
  });
});

describe('a result too large to page in memory', () => {
  it('pages, filters, sorts and samples in DuckDB with the same answers', async () => {
    const large = await executeAndWait(service, 1005);
    expect(large.state).toBe('QUERY_STATE_COMPLETED');
    const pages = await walk(
      service,
      `/v1/execution/${large.execution_id}/results?limit=20000&columns=i&filters=m%20%3D%203`,
    );
    const values = pages.flatMap((p) => p.result?.rows.map((r) => r.i) ?? []);
    expect(values).toHaveLength(8571);
    expect(values.every((v, i) => v === 3 + 7 * i)).toBe(true);
    expect(pages[0]?.result?.metadata.total_row_count).toBe(8571);
    const sorted = await service.json<Envelope>(
      `/v1/execution/${large.execution_id}/results?limit=3&sort_by=m%20desc,i%20desc&columns=i,m`,
    );
    expect(sorted.body.result?.rows).toEqual([
      { i: 59996, m: 6 },
      { i: 59989, m: 6 },
      { i: 59982, m: 6 },
    ]);
    const sample = await service.json<Envelope>(
      `/v1/execution/${large.execution_id}/results?sample_count=50&columns=i&sort_by=i`,
    );
    const drawn = sample.body.result?.rows.map((r) => r.i as number) ?? [];
    expect(drawn).toHaveLength(50);
    expect(new Set(drawn).size).toBe(50);
    expect([...drawn].sort((a, b) => a - b)).toEqual(drawn);
    const whole = await service.json<Envelope>(`/v1/execution/${large.execution_id}/results?offset=59990`);
    expect(whole.body.result?.rows.map((r) => r.i)).toEqual(Array.from({ length: 10 }, (_, k) => 59990 + k));
    expect(whole.body).not.toHaveProperty('next_uri');
    // Unfiltered, unsorted pages are cut by row id: every row once, in order, JSON and CSV.
    const all = await walk(service, `/v1/execution/${large.execution_id}/results?limit=25000`);
    const ids = all.flatMap((p) => p.result?.rows.map((r) => r.i) ?? []);
    expect(ids).toEqual(Array.from({ length: 60000 }, (_, k) => k));
    expect(all[0]?.result?.metadata).toMatchObject({ row_count: 25000, datapoint_count: 75000 });
    const csv = await service.request(`/v1/execution/${large.execution_id}/results/csv?limit=3&offset=59998`);
    expect(await csv.text()).toBe('i,m,label\n59998,1,row 59998\n59999,2,row 59999\n');
  });
});
