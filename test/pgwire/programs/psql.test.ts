import { beforeAll, describe, expect, it } from 'vitest';
import { startPgService } from '../../support/pg-wire.js';
import { psql } from '../../support/psql.js';
import { KEYS, type TestService, uploadBody } from '../../support/service.js';

/** Debian's psql (postgresql-client) against the Postgres wire protocol. */

let service: TestService & { pgPort: number };

beforeAll(async () => {
  service = await startPgService();
  const upload = await service.request(
    '/v1/table/upload/csv',
    uploadBody({
      table_name: 'prices',
      data: 'day,token,price\n2024-01-01,stETH,2301.5\n2024-01-02,rETH,2512.25\n',
    }),
  );
  expect(upload.status).toBe(200);
});

describe('psql', () => {
  it('connects with the key as password and prints rows', async () => {
    const { code, stdout, stderr } = await psql(service.pgPort, [
      '-A',
      '-t',
      '-F',
      '|',
      '-c',
      'SELECT day, token, price FROM dataset_prices ORDER BY day',
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe('2024-01-01|stETH|2301.5\n2024-01-02|rETH|2512.25\n');
  });

  it('is refused with a wrong key', async () => {
    const { code, stderr } = await psql(service.pgPort, ['-c', 'SELECT 1'], { key: 'wrong-key-0000' });
    expect(code).toBe(2);
    expect(stderr).toMatch(/FATAL: {2}password authentication failed for user "tester"/);
  });

  it('shows an error with its position, and a script goes on without ON_ERROR_STOP', async () => {
    const script = 'SELECT * FROM nope;\nSELECT 1 AS after;\n';
    const { stdout, stderr } = await psql(service.pgPort, ['-A', '-t'], { input: script });
    expect(stderr).toContain(
      'ERROR:  table nope does not exist\nLINE 1: SELECT * FROM nope;\n                      ^',
    );
    expect(stdout).toBe('1\n');
  });

  it('stops a script at the first error with ON_ERROR_STOP', async () => {
    const { code } = await psql(service.pgPort, ['-v', 'ON_ERROR_STOP=1', '-c', 'DROP TABLE dataset_prices']);
    expect(code).toBe(1);
  });

  it('reads a large result through a cursor with FETCH_COUNT', async () => {
    const { code, stdout, stderr } = await psql(service.pgPort, [
      '-A',
      '-t',
      '-v',
      'FETCH_COUNT=1000',
      '-c',
      'SELECT count(*) OVER () AS n, i FROM range(25000) t(i) ORDER BY i',
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(25000);
    expect(lines[24999]).toBe('25000|24999');
  });

  it('runs a transaction and session settings as a client script would', async () => {
    const script =
      "BEGIN;\nSET LOCAL application_name = 'batch';\nSHOW application_name;\nSELECT 2 AS two;\nCOMMIT;\n";
    const { code, stdout, stderr } = await psql(service.pgPort, ['-A', '-t', '-v', 'ON_ERROR_STOP=1'], {
      input: script,
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe('BEGIN\nSET\nbatch\n2\nCOMMIT\n');
  });

  it('describes tables with dt, d, dn and l', async () => {
    const dt = await psql(service.pgPort, ['-A', '-t', '-c', '\\dt']);
    expect(dt.stderr).toBe('');
    expect(dt.stdout).toBe('alice|dataset_prices|table|alice\n');
    const d = await psql(service.pgPort, ['-A', '-t', '-c', '\\d dataset_prices']);
    expect(d.stderr).toBe('');
    expect(d.stdout).toBe('day|date|||\ntoken|text|||\nprice|double precision|||\n');
    const dn = await psql(service.pgPort, ['-A', '-t', '-c', '\\dn']);
    expect(dn.stdout).toBe('alice|alice\n');
    const l = await psql(service.pgPort, ['-A', '-t', '-c', '\\l']);
    expect(l.stdout).toMatch(/^dune\|dune\|UTF8\|/);
    const plus = await psql(service.pgPort, ['-A', '-t', '-c', '\\dt+']);
    expect(plus.stderr).toBe('');
    expect(plus.stdout).toMatch(/^alice\|dataset_prices\|table\|alice\|permanent\|heap\|\d+ bytes\|$/m);
  });

  it("sees another account's table only when it is public", async () => {
    const bob = await service.request('/v1/table/upload/csv', {
      ...uploadBody({ table_name: 'hidden', data: 'x\n1\n', is_private: true }),
      headers: { 'content-type': 'application/json', 'x-service-api-key': KEYS.bob },
    });
    expect(bob.status).toBe(200);
    const { stderr } = await psql(service.pgPort, ['-c', 'SELECT * FROM bob.dataset_hidden']);
    expect(stderr).toContain('ERROR:  table bob.dataset_hidden does not exist');
    const own = await psql(service.pgPort, ['-A', '-t', '-c', 'SELECT * FROM bob.dataset_hidden'], {
      key: KEYS.bob,
    });
    expect(own.stdout).toBe('1\n');
  });
});
