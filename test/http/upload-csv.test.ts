import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service.stop();
});

interface StoredTable {
  columns: { name: string; type: string }[];
  rows: Record<string, unknown>[];
}

/** What DuckDB holds for a table, read directly: the ground truth the API must match. */
async function stored(namespace: string, table: string): Promise<StoredTable | undefined> {
  return service.database.read(async (session) => {
    const exists = await session.all(
      'SELECT 1 FROM duckdb_tables() WHERE schema_name = ? AND table_name = ?',
      [namespace, table],
    );
    if (exists.length === 0) return undefined;
    const result = await session.query(`SELECT * FROM "${namespace}"."${table}"`);
    return {
      columns: result.columns,
      rows: result.rows.map((row) => Object.fromEntries(result.columns.map((c, i) => [c.name, row[i]]))),
    };
  });
}

async function upload(fields: Record<string, unknown>, key: string = KEYS.alice) {
  return service.json<{ success?: boolean; table_name?: string; error?: string }>('/v1/table/upload/csv', {
    ...uploadBody(fields),
    key,
  });
}

async function uploadRaw(body: string | Buffer, headers: Record<string, string> = {}) {
  return service.json<{ error?: string }>('/v1/table/upload/csv', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
}

describe('POST /v1/table/upload/csv', () => {
  it('stores the CSV as <handle>.dataset_<table_name> and answers the spec shape', async () => {
    const { status, body } = await upload({
      table_name: 'first',
      description: 'a first table',
      is_private: false,
      data: 'id,name\n1,one\n2,two\n',
    });
    expect(status).toBe(200);
    // Dune's fields first (what both official clients read), then what was stored.
    expect(body).toEqual({
      success: true,
      table_name: 'dataset_first',
      row_count: 2,
      columns: [
        { name: 'id', type: 'bigint' },
        { name: 'name', type: 'varchar' },
      ],
      widened: [],
    });
    const table = await stored('alice', 'dataset_first');
    expect(table?.rows).toEqual([
      { id: 1n, name: 'one' },
      { id: 2n, name: 'two' },
    ]);
  });

  it('answers under /api/v1 as well, and takes the key from api_key or X-Dune-Api-Key', async () => {
    const viaQuery = await service.json(`/api/v1/table/upload/csv?api_key=${KEYS.alice}`, {
      ...uploadBody({ table_name: 'via_query', data: 'a\n1\n' }),
      key: null,
    });
    expect(viaQuery.status).toBe(200);
    const viaDune = await service.json('/v1/uploads/csv', {
      ...uploadBody({ table_name: 'via_dune', data: 'a\n1\n' }),
      key: null,
      headers: { 'content-type': 'application/json', 'x-dune-api-key': KEYS.alice },
    });
    expect(viaDune.status).toBe(200);
    expect(await stored('alice', 'dataset_via_dune')).toBeDefined();
  });

  it('infers column types without losing anything', async () => {
    const csv = [
      'int_col,big_col,dbl_col,bool_col,date_col,ts_col,zip,text_col,precise,mixed_bool',
      '1,123456789012345678901234567890,1.5,true,2024-01-05,2024-01-05 10:00:00,007,hello,0.12345678901234567890,true',
      '-2,-5,2e3,FALSE,2024-02-29,2024-01-05T11:30:00.250,02134,"a, b",1.00000000000000000001,1',
      ',,,,,,,,,',
    ].join('\n');
    expect((await upload({ table_name: 'types', data: csv })).status).toBe(200);
    const table = await stored('alice', 'dataset_types');
    expect(Object.fromEntries(table?.columns.map((c) => [c.name, c.type]) ?? [])).toEqual({
      int_col: 'BIGINT',
      big_col: 'HUGEINT',
      dbl_col: 'DOUBLE',
      bool_col: 'BOOLEAN',
      date_col: 'DATE',
      ts_col: 'TIMESTAMP',
      zip: 'VARCHAR',
      text_col: 'VARCHAR',
      precise: 'DECIMAL(21,20)',
      mixed_bool: 'VARCHAR',
    });
    expect(table?.rows[0]?.zip).toBe('007');
    expect(table?.rows[1]?.zip).toBe('02134');
    expect(table?.rows[1]?.text_col).toBe('a, b');
    expect(table?.rows[0]?.big_col).toBe(123456789012345678901234567890n);
    expect(table?.rows[2]).toEqual(Object.fromEntries(table?.columns.map((c) => [c.name, null]) ?? []));
  });

  it('keeps an empty field NULL and a quoted empty field an empty string', async () => {
    expect((await upload({ table_name: 'nulls', data: 'a,b\nx,\n"",y\n' })).status).toBe(200);
    expect((await stored('alice', 'dataset_nulls'))?.rows).toEqual([
      { a: 'x', b: null },
      { a: '', b: 'y' },
    ]);
  });

  it('widens a column when a value after 100,000 numeric rows is text, keeping every row', async () => {
    const lines = ['n,label'];
    for (let i = 0; i < 100_000; i++) lines.push(`${i},row${i}`);
    lines.push('not a number,last');
    const { status } = await upload({ table_name: 'widen', data: `${lines.join('\n')}\n` });
    expect(status).toBe(200);
    const [summary] = await service.database.read((s) =>
      s.all<{ n: bigint; last: string; first: string; t: string }>(
        `SELECT count(*) AS n, max(n) FILTER (WHERE label = 'last') AS last, max(n) FILTER (WHERE label = 'row0') AS first,
                any_value(typeof(n)) AS t FROM alice.dataset_widen`,
      ),
    );
    expect(summary).toEqual({ n: 100_001n, last: 'not a number', first: '0', t: 'VARCHAR' });
  });

  it('widens a late decimal in an integer column to DOUBLE, and a late leading zero to VARCHAR', async () => {
    const ints = Array.from({ length: 30_000 }, (_, i) => `${i},${i}`);
    const data = `a,b\n${ints.join('\n')}\n2.5,007\n`;
    expect((await upload({ table_name: 'late', data })).status).toBe(200);
    const table = await stored('alice', 'dataset_late');
    expect(table?.columns).toEqual([
      { name: 'a', type: 'DOUBLE' },
      { name: 'b', type: 'VARCHAR' },
    ]);
    expect(table?.rows.at(-1)).toEqual({ a: 2.5, b: '007' });
  });

  it('handles CRLF, a byte-order mark, unicode, escaped quotes and trailing blank lines', async () => {
    const data = '\ufeffname,emoji\r\n"Zoë ""Z""",😀\r\nÅsa,\u00e9\r\n\r\n\r\n';
    expect((await upload({ table_name: 'unicode', data })).status).toBe(200);
    expect((await stored('alice', 'dataset_unicode'))?.rows).toEqual([
      { name: 'Zoë "Z"', emoji: '😀' },
      { name: 'Åsa', emoji: 'é' },
    ]);
  });

  it('ignores trailing blank lines of a one-column CSV instead of storing NULL rows', async () => {
    expect((await upload({ table_name: 'one_col', data: 'a\n1\n\n2\n\n\n' })).status).toBe(200);
    expect((await stored('alice', 'dataset_one_col'))?.rows).toEqual([{ a: 1n }, { a: null }, { a: 2n }]);
  });

  it('accepts a header with no rows as an empty table', async () => {
    expect((await upload({ table_name: 'header_only', data: 'a,b' })).status).toBe(200);
    const table = await stored('alice', 'dataset_header_only');
    expect(table?.rows).toEqual([]);
    expect(table?.columns.map((c) => c.name)).toEqual(['a', 'b']);
  });

  it('replaces a same-named table whole', async () => {
    await upload({ table_name: 'replace_me', data: 'a,b\n1,2\n3,4\n' });
    const { status } = await upload({ table_name: 'replace_me', data: 'c\nx\n' });
    expect(status).toBe(200);
    expect((await stored('alice', 'dataset_replace_me'))?.rows).toEqual([{ c: 'x' }]);
  });

  it('lets unicode column names start with a letter of any alphabet or _', async () => {
    const { status } = await upload({ table_name: 'names', data: 'émission,_x,Ωmega,with space\n1,2,3,4\n' });
    expect(status).toBe(200);
    expect((await stored('alice', 'dataset_names'))?.columns.map((c) => c.name)).toEqual([
      'émission',
      '_x',
      'Ωmega',
      'with space',
    ]);
  });

  it('needs a premium key for a private table', async () => {
    const free = await upload({ table_name: 'secret', data: 'a\n1\n', is_private: true }, KEYS.alice);
    expect(free.status).toBe(403);
    expect(free.body.error).toMatch(/premium/);
    expect(await stored('alice', 'dataset_secret')).toBeUndefined();
    const premium = await upload({ table_name: 'secret', data: 'a\n1\n', is_private: true }, KEYS.bob);
    expect(premium.status).toBe(200);
  });

  it('refuses a missing or unknown key with 401', async () => {
    for (const [key, error] of [
      [null, /^missing API key: send it in the X-Service-Api-Key header/],
      ['not-a-key', /^invalid API Key: the key in the X-Service-Api-Key header is not a key of this service/],
    ] as const) {
      const { status, body } = await service.json('/v1/table/upload/csv', {
        ...uploadBody({ table_name: 'nokey', data: 'a\n1\n' }),
        key,
      });
      expect(status).toBe(401);
      expect(body).toEqual({ error: expect.stringMatching(error) });
    }
    expect(await stored('alice', 'dataset_nokey')).toBeUndefined();
  });
});

describe('bad uploads get a 400 naming the problem and change nothing', () => {
  const original = 'keep,me\n1,2\n3,4\n';

  beforeAll(async () => {
    expect((await upload({ table_name: 'guarded', data: original })).status).toBe(200);
  });

  async function expectUnchanged() {
    expect((await stored('alice', 'dataset_guarded'))?.rows).toEqual([
      { keep: 1n, me: 2n },
      { keep: 3n, me: 4n },
    ]);
  }

  const badBodies: [string, string | Buffer, RegExp][] = [
    ['truncated JSON', '{"table_name":"guarded","data":"a\\n1', /malformed JSON body: unexpected end/],
    [
      'trailing garbage',
      '{"table_name":"guarded","data":"a\\n1\\n"} x',
      /malformed JSON body: unexpected 'x'/,
    ],
    ['not an object', '["guarded"]', /expected '\{'/],
    ['empty body', '', /malformed JSON body/],
    ['trailing comma', '{"table_name":"guarded","data":"a\\n1\\n",}', /expected a field name/],
    ['raw newline in data', '{"table_name":"guarded","data":"a\n1\n"}', /raw control character/],
    ['bad escape in data', '{"table_name":"guarded","data":"a\\q1"}', /invalid escape/],
    ['lone surrogate', '{"table_name":"guarded","data":"a\\n\\ud800\\n"}', /unpaired UTF-16 surrogate/],
    ['duplicate field', '{"table_name":"guarded","table_name":"x","data":"a\\n1\\n"}', /appears twice/],
    [
      'invalid UTF-8 in data',
      Buffer.concat([
        Buffer.from('{"table_name":"guarded","data":"a\\n'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('\\n"}'),
      ]),
      /not valid UTF-8/,
    ],
  ];
  for (const [name, body, message] of badBodies) {
    it(`malformed body: ${name}`, async () => {
      const { status, body: answer } = await uploadRaw(body);
      expect(status).toBe(400);
      expect(answer.error).toMatch(message);
      await expectUnchanged();
    });
  }

  const badFields: [string, Record<string, unknown>, RegExp][] = [
    ['missing data', { table_name: 'guarded' }, /field "data" is required/],
    ['missing table_name', { data: 'a\n1\n' }, /field "table_name" is required/],
    ['data not a string', { table_name: 'guarded', data: 5 }, /field "data" must be a string/],
    ['data null', { table_name: 'guarded', data: null }, /field "data" must be a string/],
    ['table_name not a string', { table_name: 7, data: 'a\n1\n' }, /field "table_name" must be a string/],
    ['description not a string', { table_name: 'guarded', data: 'a\n1\n', description: 1 }, /"description"/],
    [
      'is_private not a boolean',
      { table_name: 'guarded', data: 'a\n1\n', is_private: 'yes' },
      /"is_private"/,
    ],
    ['upper-case table name', { table_name: 'Guarded', data: 'a\n1\n' }, /lowercase/],
    ['table name starting with a digit', { table_name: '1guarded', data: 'a\n1\n' }, /lowercase letter/],
    ['table name with a dash', { table_name: 'guar-ded', data: 'a\n1\n' }, /lowercase letters, digits and _/],
    [
      'injection in the table name',
      { table_name: 'guarded"; DROP TABLE x; --', data: 'a\n1\n' },
      /table_name/,
    ],
    ['empty table name', { table_name: '', data: 'a\n1\n' }, /must not be empty/],
    ['table name over 128 characters', { table_name: `g${'x'.repeat(128)}`, data: 'a\n1\n' }, /at most 128/],
    ['empty data', { table_name: 'guarded', data: '' }, /"data" is empty/],
    ['blank data', { table_name: 'guarded', data: '\n\n' }, /"data" is empty/],
    [
      'column starting with a digit',
      { table_name: 'guarded', data: '1a,b\n1,2\n' },
      /start with a letter or _: "1a"/,
    ],
    ['column starting with a symbol', { table_name: 'guarded', data: 'a,$b\n1,2\n' }, /"\$b"/],
    [
      'empty column name',
      { table_name: 'guarded', data: 'a,,c\n1,2,3\n' },
      /empty column name at position 2/,
    ],
    [
      'names equal ignoring case',
      { table_name: 'guarded', data: 'Keep,keep\n1,2\n' },
      /differ ignoring case: "Keep" and "keep"/,
    ],
    [
      'row with too few fields',
      { table_name: 'guarded', data: 'a,b\n1,2\n3\n4,5\n' },
      /line 3 has fewer fields/,
    ],
    [
      'row with too many fields',
      { table_name: 'guarded', data: 'a,b\n1,2\n3,4\n5,6,7\n' },
      /line 4 has more fields/,
    ],
    [
      'unterminated quote',
      { table_name: 'guarded', data: 'a,b\n1,2\n"3,4\n5,6\n' },
      /line 3: a quoted value is not closed/,
    ],
    [
      'ragged row after a multi-line value (physical lines)',
      { table_name: 'guarded', data: 'a,b\n"x\ny\nz",2\n3,4\n5\n' },
      /line 6 has fewer fields/,
    ],
    ['unterminated quote in the header', { table_name: 'guarded', data: '"a,b\n1,2\n' }, /header/],
  ];
  for (const [name, fields, message] of badFields) {
    it(`bad field: ${name}`, async () => {
      const { status, body } = await upload(fields);
      expect(status).toBe(400);
      expect(body.error).toMatch(message);
      await expectUnchanged();
    });
  }

  it('a ragged row after 50,000 good ones names its line', async () => {
    const rows = Array.from({ length: 50_000 }, (_, i) => `${i},${i}`);
    const { status, body } = await upload({
      table_name: 'guarded',
      data: `a,b\n${rows.join('\n')}\n1,2,3\n`,
    });
    expect(status).toBe(400);
    expect(body.error).toMatch(/line 50002 has more fields/);
    await expectUnchanged();
  });

  it('another content type is 415', async () => {
    const { status, body } = await uploadRaw('table_name=guarded', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(status).toBe(415);
    expect(body.error).toMatch(/application\/json/);
    await expectUnchanged();
  });

  it('an unknown query parameter is 400', async () => {
    const { status, body } = await service.json(
      '/v1/table/upload/csv?foo=1',
      uploadBody({ table_name: 'guarded', data: 'a\n1\n' }),
    );
    expect(status).toBe(400);
    expect(body).toEqual({ error: expect.stringMatching(/unknown query parameter "foo"/) });
    await expectUnchanged();
  });
});
