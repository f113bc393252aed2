import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeSql, finished } from '../queries/support/queries.js';
import type { Envelope } from '../support/results.js';
import { KEYS, startTestService, type TestService } from '../support/service.js';

/**
 * Large results read whole (issue 17): pages of a result over the in-memory limit are written
 * by DuckDB into files and sent from there, a long range part after part, the page after a
 * large one written ahead. What the pages promise stays: the same bytes as a small result's
 * (rendered in memory), every row once and in order through next_uri, the byte counts, the
 * datapoint cap, filters and sort, partial results, access rules; and no file is left behind.
 */

const ROWS = 300_000;
/** Six columns of the kinds users have; some text needs CSV quoting and JSON escapes; NULLs; integers past 2^53. */
const sql = (rows: number) => `SELECT i AS id,
  CASE WHEN i % 1000 = 7 THEN NULL ELSE CAST(i AS DOUBLE) * 1.5 END AS amount,
  CASE WHEN i % 5000 = 1 THEN 'a,"b"' || chr(10) || 'c' ELSE 'token_' || (i % 13) END AS label,
  TIMESTAMP '2024-01-01' + to_seconds(i) AS at,
  i % 3 = 0 AS flag,
  CASE WHEN i % 7000 = 3 THEN 9007199254740993 + i ELSE i END AS big
  FROM range(${rows}) r(i)`;

/** The text of a JSON page's rows, as sent: between `"rows":[` and `],"metadata":`. */
function rowsText(body: string): string {
  const start = body.indexOf('"rows":[') + '"rows":['.length;
  return body.slice(start, body.lastIndexOf('],"metadata":'));
}

async function text(service: TestService, urlPath: string, key: string = KEYS.alice) {
  const response = await service.request(urlPath, { key });
  const body = await response.text();
  expect(response.status, body.slice(0, 300)).toBe(200);
  return { body, headers: response.headers };
}

function rowFiles(service: TestService): string[] {
  return fs.readdirSync(path.join(service.dataDir, 'tmp')).filter((file) => file.startsWith('rows-'));
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(condition(), what).toBe(true);
}

describe('a large result read whole', () => {
  let service: TestService;
  let large: string;
  let small: string;

  beforeAll(async () => {
    service = await startTestService();
    large = await executeSql(service, sql(ROWS));
    small = await executeSql(service, sql(40_000));
    expect((await finished(service, large)).state).toBe('QUERY_STATE_COMPLETED');
    expect((await finished(service, small)).state).toBe('QUERY_STATE_COMPLETED');
  });
  afterAll(async () => {
    await service.stop();
  });

  it('a page sent from files holds the bytes a result rendered in memory holds, JSON and CSV', async () => {
    const fromFiles = await text(service, `/v1/execution/${large}/results?limit=40000`);
    const inMemory = await text(service, `/v1/execution/${small}/results`);
    expect(rowsText(fromFiles.body).length).toBeGreaterThan(1024 * 1024);
    expect(rowsText(fromFiles.body)).toBe(rowsText(inMemory.body));
    expect(fromFiles.headers.get('content-length')).toBe(String(Buffer.byteLength(fromFiles.body)));
    const page = JSON.parse(fromFiles.body) as Envelope;
    expect(page.result?.metadata).toMatchObject({
      row_count: 40_000,
      datapoint_count: 240_000,
      total_row_count: ROWS,
      result_set_bytes: Buffer.byteLength(`[${rowsText(fromFiles.body)}]`),
    });
    expect(page.result?.rows[7]).toEqual({
      id: 7,
      amount: null,
      label: 'token_7',
      at: '2024-01-01 00:00:07.000 UTC',
      flag: false,
      big: 7,
    });
    expect(page.result?.rows[3]?.big).toBe('9007199254740996');
    expect(page.result?.rows[1]?.label).toBe('a,"b"\nc');
    expect(page.next_uri).toBe(`${service.url}/v1/execution/${large}/results?limit=40000&offset=40000`);

    const csvFromFiles = await text(service, `/v1/execution/${large}/results/csv?limit=40000`);
    const csvInMemory = await text(service, `/v1/execution/${small}/results/csv`);
    expect(csvFromFiles.body).toBe(csvInMemory.body);
    expect(
      csvFromFiles.body.startsWith(
        'id,amount,label,at,flag,big\n0,0.0,token_0,2024-01-01 00:00:00.000 UTC,true,0\n1,1.5,"a,""b""\nc",',
      ),
    ).toBe(true);
    expect(csvFromFiles.headers.get('x-dune-next-offset')).toBe('40000');
    expect(csvFromFiles.headers.get('x-dune-next-uri')).toBe(
      `${service.url}/v1/execution/${large}/results/csv?limit=40000&offset=40000`,
    );
  });

  it('JSON pages through next_uri, as large as the datapoint cap allows: every row once, in order, each page counted', async () => {
    let next: string | undefined = `/v1/execution/${large}/results?limit=41666`;
    const ids: number[] = [];
    let pages = 0;
    while (next) {
      const { body, headers } = await text(service, next);
      const page = JSON.parse(body) as Envelope;
      // Sent from files, with its length; the last page (0.9 MB) is small enough to be kept in memory.
      if (page.next_uri) expect(headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
      expect(page.result?.metadata.result_set_bytes).toBe(Buffer.byteLength(`[${rowsText(body)}]`));
      expect(page.result?.metadata.total_row_count).toBe(ROWS);
      for (const row of page.result?.rows ?? []) ids.push(row.id as number);
      next = page.next_uri?.slice(service.url.length);
      pages++;
    }
    expect(pages).toBe(Math.ceil(ROWS / 41_666));
    expect(ids).toEqual(Array.from({ length: ROWS }, (_, i) => i));
    const over = await service.json<{ error: string }>(`/v1/execution/${large}/results?limit=41667`);
    expect(over.status).toBe(400);
    expect(over.body.error).toMatch(/250002 datapoints .* over the limit of 250000/);
  });

  it('the whole result as one CSV is the CSV pages joined, and as one JSON its count of bytes is the one the status gives', async () => {
    const whole = await text(
      service,
      `/v1/execution/${large}/results/csv?ignore_max_datapoints_per_request=true`,
    );
    let joined = '';
    for (let offset = 0; offset < ROWS; offset += 41_666) {
      const page = await text(service, `/v1/execution/${large}/results/csv?limit=41666&offset=${offset}`);
      joined += offset === 0 ? page.body : page.body.slice(page.body.indexOf('\n') + 1);
    }
    expect(whole.body).toBe(joined);
    expect(whole.headers.get('x-dune-next-uri')).toBeNull();

    const json = await text(service, `/v1/execution/${large}/results?ignore_max_datapoints_per_request=true`);
    const result = (JSON.parse(json.body) as Envelope).result;
    expect(result?.rows.map((row) => row.id)).toEqual(Array.from({ length: ROWS }, (_, i) => i));
    const bytes = Buffer.byteLength(`[${rowsText(json.body)}]`);
    expect(result?.metadata).toMatchObject({
      result_set_bytes: bytes,
      total_result_set_bytes: bytes,
      row_count: ROWS,
    });
    const status = await service.json<Envelope>(`/v1/execution/${large}/status`);
    expect(status.body.result_metadata?.total_result_set_bytes).toBe(bytes);
    const offset = await text(
      service,
      `/v1/execution/${large}/results/csv?ignore_max_datapoints_per_request=true&offset=299998`,
    );
    expect(offset.body).toBe(
      'id,amount,label,at,flag,big\n299998,449997.0,token_10,2024-01-04 11:19:58.000 UTC,false,299998\n299999,449998.5,token_11,2024-01-04 11:19:59.000 UTC,false,299999\n',
    );
  });

  it('filters, sort_by and columns on a large page, and a sample', async () => {
    const { body } = await text(
      service,
      `/v1/execution/${large}/results?limit=40000&offset=10&columns=id,flag&sort_by=${encodeURIComponent('id desc')}&filters=${encodeURIComponent('flag = true')}`,
    );
    const page = JSON.parse(body) as Envelope;
    expect(page.result?.metadata).toMatchObject({
      total_row_count: 100_000,
      row_count: 40_000,
      column_names: ['id', 'flag'],
    });
    expect(page.result?.rows.map((row) => row.id)).toEqual(
      Array.from({ length: 40_000 }, (_, i) => 299_997 - 3 * (10 + i)),
    );
    expect(page.next_offset).toBe(40_010);
    const sample = await service.json<Envelope>(
      `/v1/execution/${large}/results?sample_count=40000&columns=id`,
    );
    const drawn = sample.body.result?.rows.map((row) => row.id as number) ?? [];
    expect(new Set(drawn).size).toBe(40_000);
    expect([...drawn].sort((a, b) => a - b)).toEqual(drawn);
  });
});

describe('files of large pages', () => {
  let service: TestService;
  let large: string;
  let partial: string;

  beforeAll(async () => {
    service = await startTestService({ MAX_RESULT_ROWS: String(ROWS) });
    large = await executeSql(service, sql(ROWS));
    partial = await executeSql(service, sql(ROWS + 10));
    expect((await finished(service, large)).state).toBe('QUERY_STATE_COMPLETED');
    expect((await finished(service, partial)).state).toBe('QUERY_STATE_COMPLETED_PARTIAL');
  });
  afterAll(async () => {
    await service.stop();
  });

  it('are removed when the client goes away mid-answer, and the service goes on', async () => {
    expect(rowFiles(service)).toEqual([]);
    const url = `${service.url}/v1/execution/${large}/results/csv?ignore_max_datapoints_per_request=true`;
    await new Promise<void>((resolve, reject) => {
      const request = http.get(url, { headers: { 'x-service-api-key': KEYS.alice } }, (response) => {
        response.once('data', () => {
          request.destroy();
          resolve();
        });
      });
      request.on('error', reject);
    });
    await until(() => rowFiles(service).length === 0, 'every file of the cut answer removed');
    const again = await text(service, `/v1/execution/${large}/results/csv?limit=3&offset=10`);
    expect(again.body.split('\n')).toHaveLength(5);
  });

  it('of a single page are removed whenever the client goes away: at its headers, its first bytes, or near its end', async () => {
    // One file per page (a page, not the whole result in parts): the race of a client that
    // leaves while the last write or the end is under way must not keep the file.
    const url = `${service.url}/v1/execution/${large}/results/csv?limit=200000&offset=7`;
    const cuts = [0, 1, 2_000_000, 5_000_000, Number.POSITIVE_INFINITY];
    await Promise.all(
      cuts.map(
        (cut) =>
          new Promise<void>((resolve, reject) => {
            const request = http.get(url, { headers: { 'x-service-api-key': KEYS.alice } }, (response) => {
              let received = 0;
              const leave = () => {
                request.destroy();
                resolve();
              };
              if (cut === 0) return leave();
              response.on('data', (chunk: Buffer) => {
                received += chunk.length;
                if (received >= cut) leave();
              });
              response.on('end', resolve);
            });
            request.on('error', (error) => (request.destroyed ? resolve() : reject(error)));
          }),
      ),
    );
    await until(() => rowFiles(service).length === 0, 'every file of the pages removed');
    const again = await text(service, `/v1/execution/${large}/results/csv?limit=3&offset=10`);
    expect(again.body.split('\n')).toHaveLength(5);
  });

  it('the pages after a large one are written ahead, taken by their request, and removed at shutdown', async () => {
    expect(rowFiles(service)).toEqual([]);
    const first = JSON.parse(
      (await text(service, `/v1/execution/${large}/results?limit=40000`)).body,
    ) as Envelope;
    // Written ahead: the next two pages, a file each.
    await until(() => rowFiles(service).length === 2, 'the next two pages written ahead');
    const ahead = rowFiles(service);
    const second = JSON.parse(
      (await text(service, (first.next_uri as string).slice(service.url.length))).body,
    ) as Envelope;
    expect(second.result?.rows[0]?.id).toBe(40_000);
    expect(second.result?.rows.at(-1)?.id).toBe(79_999);
    // The second page's file is removed once sent; the third stays, and the fourth is written.
    await until(
      () =>
        rowFiles(service).length === 2 &&
        rowFiles(service).filter((file) => ahead.includes(file)).length === 1,
      'the second page removed, the third kept, the fourth written ahead',
    );
    await service.close();
    expect(rowFiles(service)).toEqual([]);
    // A new service on the same data directory for the tests after this one.
    service = await startTestService({ MAX_RESULT_ROWS: String(ROWS) }, service.dataDir);
  });

  it('a partial result: refused without allow_partial_results, whole with it', async () => {
    const refused = await service.json<Envelope>(`/v1/execution/${partial}/results?limit=40000`);
    expect(refused.body.state).toBe('QUERY_STATE_FAILED');
    expect(refused.body).not.toHaveProperty('result');
    expect((await service.request(`/v1/execution/${partial}/results/csv?limit=40000`)).status).toBe(409);
    const whole = await text(
      service,
      `/v1/execution/${partial}/results/csv?allow_partial_results=true&ignore_max_datapoints_per_request=true&columns=id`,
    );
    expect(whole.body).toBe(`id\n${Array.from({ length: ROWS }, (_, i) => `${i}\n`).join('')}`);
  });

  it("another account's request is refused before any file is written", async () => {
    const before = rowFiles(service).length;
    const refused = await service.json<{ error: string }>(
      `/v1/execution/${large}/results/csv?ignore_max_datapoints_per_request=true`,
      { key: KEYS.bob },
    );
    expect(refused.status).toBe(404);
    expect(rowFiles(service).length).toBe(before);
  });
});
