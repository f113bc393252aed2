import { execFile } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { startPgService } from '../../support/pg-wire.js';
import { KEYS, type TestService, uploadBody } from '../../support/service.js';

/**
 * Debian's Python clients against the Postgres wire protocol: psycopg2, SQLAlchemy's
 * inspector, and pandas' read_sql through SQLAlchemy. Debian's interpreter runs them
 * (python3-psycopg2, python3-sqlalchemy, python3-pandas: .ci/run installs them).
 */

const PYTHON = '/usr/bin/python3';
let service: TestService & { pgPort: number };

function python(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      PYTHON,
      ['-c', script],
      { env: { ...process.env, PG_PORT: String(service.pgPort), KEY: KEYS.alice }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  service = await startPgService();
  const upload = await service.request(
    '/v1/table/upload/csv',
    uploadBody({
      table_name: 'prices',
      description: 'daily prices',
      data: 'day,token,price,amount\n2024-01-01,stETH,2301.5,115792089237316195423570985008687907853\n2024-01-02,rETH,,7\n',
    }),
  );
  expect(upload.status).toBe(200);
  const hidden = await service.request('/v1/table/upload/csv', {
    ...uploadBody({ table_name: 'hidden', is_private: true, data: 'x\n1\n' }),
    key: KEYS.bob,
  });
  expect(hidden.status).toBe(200);
});

const ENGINE = `
import os, json, sqlalchemy as sa, pandas as pd
engine = sa.create_engine(f"postgresql+psycopg2://alice:{os.environ['KEY']}@127.0.0.1:{os.environ['PG_PORT']}/dune")
`;

describe('Python clients', () => {
  it('psycopg2: a transaction, parameters quoted by the driver, exact numbers', async () => {
    const { stdout, stderr, code } = await python(`
import os, json, psycopg2
conn = psycopg2.connect(host='127.0.0.1', port=int(os.environ['PG_PORT']), user='alice', password=os.environ['KEY'], dbname='dune')
cur = conn.cursor()
cur.execute('SELECT token, price, amount FROM dataset_prices WHERE token = %s OR token = %s ORDER BY day', ('stETH', "x' OR '1'='1"))
rows = cur.fetchall()
conn.rollback()
print(json.dumps([[r[0], r[1], str(r[2])] for r in rows]))
try:
    cur.execute('SELECT * FROM bob.dataset_hidden')
except psycopg2.Error as e:
    print(e.pgcode)
conn.close()
`);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe('[["stETH", 2301.5, "115792089237316195423570985008687907853"]]\n42P01\n');
  });

  it("SQLAlchemy: the inspector sees the caller's tables and columns, and no private one of another account", async () => {
    const { stdout, stderr, code } = await python(`${ENGINE}
insp = sa.inspect(engine)
print(json.dumps({
  'schemas': insp.get_schema_names(),
  'tables': insp.get_table_names(schema='alice'),
  'bob': insp.get_table_names(schema='bob'),
  'columns': [[c['name'], str(c['type']), c['nullable']] for c in insp.get_columns('dataset_prices', schema='alice')],
  'pk': insp.get_pk_constraint('dataset_prices', schema='alice')['constrained_columns'],
  'indexes': insp.get_indexes('dataset_prices', schema='alice'),
  'comment': insp.get_table_comment('dataset_prices', schema='alice')['text'],
  'has': [insp.has_table('dataset_prices', schema='alice'), insp.has_table('dataset_hidden', schema='bob')],
}))
`);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      schemas: ['alice', 'information_schema'],
      tables: ['dataset_prices'],
      bob: [],
      columns: [
        ['day', 'DATE', true],
        ['token', 'TEXT', true],
        ['price', 'DOUBLE_PRECISION', true],
        ['amount', 'NUMERIC', true],
      ],
      pk: [],
      indexes: [],
      comment: 'daily prices',
      has: [true, false],
    });
  });

  it('pandas: read_sql of a query and of a table', async () => {
    const { stdout, stderr, code } = await python(`${ENGINE}
frame = pd.read_sql('SELECT day, token, price FROM dataset_prices ORDER BY day', engine)
table = pd.read_sql_table('dataset_prices', engine, schema='alice')
with engine.connect() as connection:
    bound = pd.read_sql(sa.text('SELECT :n + 1 AS n'), connection, params={'n': 41})
print(json.dumps({
  'rows': frame.astype(str).values.tolist(),
  'dtypes': [str(t) for t in frame.dtypes],
  'table': list(table.columns),
  'bound': int(bound['n'][0]),
}))
`);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      rows: [
        ['2024-01-01', 'stETH', '2301.5'],
        ['2024-01-02', 'rETH', 'nan'],
      ],
      dtypes: ['object', 'object', 'float64'],
      table: ['day', 'token', 'price', 'amount'],
      bound: 42,
    });
  });
});
