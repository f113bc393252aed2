import { execFile } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startPgService } from '../../support/pg-wire.js';
import { KEYS, type TestService, uploadBody } from '../../support/service.js';

/**
 * pgjdbc, the driver of DBeaver and Metabase (Debian's libpostgresql-jdbc-java 42.5, run by
 * the JDK's source launcher; .ci/run installs both), against the Postgres wire protocol.
 */

const DRIVER = '/usr/share/java/postgresql.jar';
const PROGRAM = path.resolve(import.meta.dirname, 'jdbc/JdbcClient.java');
let service: TestService & { pgPort: number };

beforeAll(async () => {
  service = await startPgService();
  const upload = await service.request(
    '/v1/table/upload/csv',
    uploadBody({
      table_name: 'prices',
      description: 'daily prices',
      data: 'day,token,price\n2024-01-01,stETH,2301.5\n2024-01-02,rETH,2512.25\n',
    }),
  );
  expect(upload.status).toBe(200);
  const hidden = await service.request('/v1/table/upload/csv', {
    ...uploadBody({ table_name: 'hidden', is_private: true, data: 'x\n1\n' }),
    key: KEYS.bob,
  });
  expect(hidden.status).toBe(200);
});

describe('pgjdbc', () => {
  it('browses the catalog, runs prepared statements in binary, and reads with a fetch size', async () => {
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
      execFile(
        'java',
        ['-cp', DRIVER, PROGRAM, String(service.pgPort), KEYS.alice],
        { timeout: 120_000, env: { ...process.env, TZ: 'UTC' } },
        (_error, out, err) => resolve({ stdout: out, stderr: err }),
      );
    });
    expect(stderr).toBe('');
    expect(stdout.trim().split('\n')).toEqual([
      'product PostgreSQL 15.0',
      'catalogs 1:dune',
      'schemas 3:alice;information_schema;pg_catalog',
      'tables 1:alice,dataset_prices,TABLE,daily prices',
      'columns 3:day,91,date;token,12,text;price,8,float8',
      'keys 0:',
      'indexes 0:',
      'imported 0:',
      'types true',
      'prepared 2024-01-02 rETH 2512.25 0',
      'prepared 2024-01-02 rETH 2512.25 1',
      'prepared 2024-01-02 rETH 2512.25 2',
      'fetched 25000 312487500',
    ]);
  });
});
