import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';
import { tableCalls } from '../support/tables.js';

/**
 * Unusual input on the ingest path: no write is acknowledged unless every record sent is
 * stored, every reader problem is a 400 naming its line, and width costs no more than bytes.
 * Found by a hostile sweep (issue 13): records of 32 MiB and more were skipped by DuckDB's
 * reader without a word, mixed line ends and stray carriage returns were 500s on inserts.
 */

let service: TestService;
let calls: ReturnType<typeof tableCalls>;

/** Built once: a 50 MB field, longer than DuckDB's reader buffer (32 MiB). */
const HUGE = 'x'.repeat(50_000_000);
const OVER_BUFFER = 'x'.repeat(34_000_000);

beforeAll(async () => {
  service = await startTestService();
  calls = tableCalls(service);
  await calls.createTable(KEYS.alice, 'alice.events', [
    { name: 'id', type: 'bigint' },
    { name: 'note', type: 'varchar' },
  ]);
  expect((await upload('kept', 'a,b\n1,2\n')).status).toBe(200);
});
afterAll(async () => {
  await service.stop();
});

function upload(table: string, data: string) {
  return service.json<{ error?: string }>('/v1/table/upload/csv', uploadBody({ table_name: table, data }));
}

/**
 * Deletes a wide table once its test has looked at it. The service's stop ends with a
 * CHECKPOINT (Database.close), which for a 10,000-column table is compression analysis of
 * every column: 17–37 s on the loaded 2-core machine, past the 60 s hook limit when busier.
 * That cost belongs to shutdown (issue 22, item 5), not to what this file checks.
 */
async function dropWide(table: string) {
  const { status } = await service.json(`/v1/table/alice/${table}`, { method: 'DELETE' });
  expect(status).toBe(200);
}

async function keptRows() {
  return service.database.read((s) => s.all('SELECT * FROM alice.dataset_kept'));
}

async function stagingTables() {
  return service.database.read((s) =>
    s.all("SELECT table_name FROM duckdb_tables() WHERE starts_with(table_name, '__upload_')"),
  );
}

describe('a record longer than the reader takes is a 400 naming its line, never a lost row', () => {
  it('upload: a 34 MB line between two short ones', async () => {
    const { status, body } = await upload('kept', `a\nfirst\n${OVER_BUFFER}\nlast\n`);
    expect(status).toBe(400);
    expect(body.error).toMatch(/^CSV line 3: the record starting there is longer than 2000000 bytes/);
    expect(await keptRows()).toEqual([{ a: 1n, b: 2n }]);
  });

  it('upload: a single 50 MB row', async () => {
    const { status, body } = await upload('kept', `a\n${HUGE}\n`);
    expect(status).toBe(400);
    expect(body.error).toMatch(/^CSV line 2: the record/);
    expect(await keptRows()).toEqual([{ a: 1n, b: 2n }]);
  });

  it('upload: a 3 MB quoted value spread over many lines, named by the line it starts on', async () => {
    const { status, body } = await upload('kept', `a\n1\n"${'y\n'.repeat(1_500_000)}"\n2\n`);
    expect(status).toBe(400);
    expect(body.error).toMatch(/^CSV line 3: the record starting there is longer/);
  });

  it('upload: 3 MB of blank lines before the header: refused once one record could have held them', async () => {
    // The head is kept until the header comes: no more than a record's bytes of it.
    const { status, body } = await upload('kept', `${'\n'.repeat(3_000_000)}a\n1\n`);
    expect(status).toBe(400);
    expect(body.error).toBe('CSV line 1 (the header): the first 2000000 bytes hold only blank lines');
    expect(await keptRows()).toEqual([{ a: 1n, b: 2n }]);
  });

  it('insert, CSV: the last line over 32 MiB writes nothing', async () => {
    const answer = await calls.insert(KEYS.alice, 'alice.events', `id,note\n1,a\n2,${OVER_BUFFER}\n`);
    expect(answer).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^CSV line 3: the record/) },
    });
    expect(await calls.count('alice.events')).toBe(0);
  });

  it('insert, NDJSON: a line over 32 MiB followed by others writes nothing', async () => {
    const body = `{"id":1}\n{"id":2,"note":"${OVER_BUFFER}"}\n{"id":3}\n`;
    const answer = await calls.insert(KEYS.alice, 'alice.events', body, 'application/x-ndjson');
    expect(answer).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^NDJSON line 2: the line/) },
    });
    expect(await calls.count('alice.events')).toBe(0);
  });
});

describe('every reader problem is a 400 naming the line, never a 500', () => {
  const bodies: [string, string, RegExp][] = [
    ['CR LF then LF line ends', 'id,note\r\n1,a\r\n2,b\n3,c\n', /^CSV line 3 ends with a line feed alone/],
    ['LF then CR LF line ends', 'id,note\n1,a\n2,b\r\n', /^CSV line 3 ends with CR LF/],
    [
      'a bare carriage return in an unquoted field',
      'id,note\n1,a\rb\n2,c\n',
      /^CSV line 2 holds a carriage return/,
    ],
    ['text after a closing quote', 'id,note\n1,"a"b\n', /^CSV line 2: text follows the closing quote/],
  ];
  for (const [name, csv, message] of bodies) {
    it(`insert: ${name}`, async () => {
      const answer = await calls.insert(KEYS.alice, 'alice.events', csv);
      expect(answer).toMatchObject({ status: 400, body: { error: expect.stringMatching(message) } });
      expect(await calls.count('alice.events')).toBe(0);
    });
    it(`upload: ${name}`, async () => {
      const { status, body } = await upload('kept', csv);
      expect(status).toBe(400);
      expect(body.error).toMatch(message);
      expect(await keptRows()).toEqual([{ a: 1n, b: 2n }]);
    });
  }

  it('upload: a ragged row 40 MB in, past the first parts, named by its line in the whole body', async () => {
    const rows = 4_000_000;
    const { status, body } = await upload('kept', `n,m\n${'1234567,8\n'.repeat(rows)}9\n`);
    expect(status).toBe(400);
    expect(body.error).toBe(`CSV line ${rows + 2} has fewer fields than the 2 columns of the header`);
    expect(await keptRows()).toEqual([{ a: 1n, b: 2n }]);
    expect(await stagingTables()).toEqual([]);
  });
});

describe('width costs what bytes cost', () => {
  it('uploads 10,000 columns of two rows, each typed', async () => {
    const columns = 10_000;
    const header = Array.from({ length: columns }, (_, i) => `c${i}`).join(',');
    const row = (r: number) =>
      Array.from({ length: columns }, (_, i) => (i % 2 === 0 ? String(i + r) : `t${i}`)).join(',');
    const { status, body } = await upload('wide', `${header}\n${row(0)}\n${row(1)}\n`);
    expect(status, JSON.stringify(body)).toBe(200);
    const [summary] = await service.database.read((s) =>
      s.all<{ n: bigint; ints: bigint; texts: bigint }>(
        `SELECT count(*) AS n,
                (SELECT count(*) FROM duckdb_columns() WHERE table_name = 'dataset_wide' AND data_type = 'BIGINT') AS ints,
                (SELECT count(*) FROM duckdb_columns() WHERE table_name = 'dataset_wide' AND data_type = 'VARCHAR') AS texts
           FROM alice.dataset_wide`,
      ),
    );
    expect(summary).toEqual({ n: 2n, ints: 5_000n, texts: 5_000n });
    const [last] = await service.database.read((s) =>
      s.all<Record<string, unknown>>('SELECT c9998, c9999 FROM alice.dataset_wide ORDER BY c0 DESC LIMIT 1'),
    );
    expect(last).toEqual({ c9998: 9999n, c9999: 't9999' });
    await dropWide('dataset_wide');
  });

  it('widens columns of a wide upload whose misfits come after the sample', async () => {
    const columns = 1_000;
    const rows = 500;
    const header = Array.from({ length: columns }, (_, i) => `c${i}`).join(',');
    const row = (r: number) =>
      Array.from({ length: columns }, (_, i) =>
        r === rows - 1 && i % 100 === 7 ? `x${i}` : String(r * i),
      ).join(',');
    const data = `${header}\n${Array.from({ length: rows }, (_, r) => row(r)).join('\n')}\n`;
    expect(data.length).toBeGreaterThan(2 * 1024 * 1024);
    const { status, body } = await upload('wide_misfits', data);
    expect(status, JSON.stringify(body)).toBe(200);
    const types = await service.database.read((s) =>
      s.all<{ column_name: string; data_type: string }>(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'dataset_wide_misfits' ORDER BY column_index",
      ),
    );
    expect(types.filter((t) => t.data_type === 'VARCHAR').map((t) => t.column_name)).toEqual(
      Array.from({ length: 10 }, (_, k) => `c${k * 100 + 7}`),
    );
    expect(types.filter((t) => t.data_type === 'BIGINT')).toHaveLength(columns - 10);
    const [last] = await service.database.read((s) =>
      s.all('SELECT c0, c7, c8, c907, c999 FROM alice.dataset_wide_misfits ORDER BY c1 DESC LIMIT 1'),
    );
    expect(last).toEqual({
      c0: 0n,
      c7: 'x7',
      c8: BigInt((rows - 1) * 8),
      c907: 'x907',
      c999: BigInt((rows - 1) * 999),
    });
    await dropWide('dataset_wide_misfits');
  });
});

describe("DuckDB's memory limit", () => {
  it('an upload it cannot hold is a 503 saying so; the table and the server stay as they were', async () => {
    const small = await startTestService({ DUCKDB_MEMORY_LIMIT: '250MB' });
    try {
      const post = (data: string) =>
        small.json<{ error?: string }>('/v1/table/upload/csv', uploadBody({ table_name: 'wide', data }));
      expect((await post('a\n1\n')).status).toBe(200);
      // 10,000 columns: DuckDB needs more than 250 MB for their vectors, whatever the rows.
      const columns = 10_000;
      const header = Array.from({ length: columns }, (_, i) => `c${i}`).join(',');
      const row = Array.from({ length: columns }, (_, i) => String(i)).join(',');
      const { status, body } = await post(`${header}\n${row}\n${row}\n`);
      expect(status).toBe(503);
      expect(body.error).toMatch(/ran out of memory .* fewer columns \(10000\)/);
      expect(await small.database.read((s) => s.all('SELECT * FROM alice.dataset_wide'))).toEqual([
        { a: 1n },
      ]);
      expect((await small.json('/v1/account')).status).toBe(200);
    } finally {
      await small.stop();
    }
  });
});

describe('a client that leaves before the answer', () => {
  it('interrupts its upload: nothing is stored, no staging table is left', async () => {
    // Long enough to load that the client is gone well before: a misfit in its last row makes
    // the load infer a column again over every row, and load it all once more.
    const rows = 3_000_000;
    const data = `n,m\n${'123456,7\n'.repeat(rows)}late,7\n`;
    const body = Buffer.from(JSON.stringify({ table_name: 'abandoned', data }));
    const url = new URL(`${service.url}/v1/table/upload/csv`);
    await new Promise<void>((resolve) => {
      const request = http.request(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          'x-service-api-key': KEYS.alice,
        },
      });
      request.on('error', () => resolve());
      request.end(body, () => {
        // The whole body is sent: leave before the answer.
        setTimeout(() => {
          request.destroy();
          resolve();
        }, 50);
      });
    });
    // The server notices, interrupts the load and cleans up; then nothing of it remains.
    for (let i = 0; i < 200 && (await stagingTables()).length > 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 200));
    expect(await stagingTables()).toEqual([]);
    const tables = await service.database.read((s) =>
      s.all("SELECT table_name FROM duckdb_tables() WHERE table_name = 'dataset_abandoned'"),
    );
    expect(tables).toEqual([]);
    expect((await service.json('/v1/account')).status).toBe(200);
  });
});
