import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/storage/storage-error.js';
import { startTestService, type TestService, uploadBody } from '../support/service.js';

/**
 * The database's second wall (DESIGN §10): even SQL that never went through the sandbox,
 * run on the running service's own connections, cannot read or write a file outside the
 * service's temp folder, load an extension, or undo those settings. Uploads, which DuckDB
 * reads from that folder, and the demo loader keep working.
 *
 * One thing the wall does not close: DuckDB keeps its own database, WAL and spill files
 * readable (it adds them to allowed_paths itself when external access is turned off, and
 * `SET allowed_paths = []` does not remove them), so `read_blob` of the database file works
 * here. Keeping `read_blob` and every other file-reading function away from users' SQL is the
 * sandbox's part (sandbox.test.ts, hostile-sql.test.ts).
 */

let service: TestService;
let tmp: string;

beforeAll(async () => {
  service = await startTestService({ DEMO_DATA: 'on' });
  tmp = path.join(service.dataDir, 'tmp');
  fs.writeFileSync(path.join(service.dataDir, 'outside.csv'), 'a\n1\n');
  fs.symlinkSync('/etc/passwd', path.join(tmp, 'passwd-link.csv'));
});

afterAll(() => service.stop());

/** Runs `sql` on one of the service's reader connections, past any checker. */
const raw = (sql: string) => service.database.read((session) => session.all(sql));

async function refused(run: Promise<unknown>, message: RegExp): Promise<void> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StorageError);
  expect((error as Error).message).toMatch(message);
}

const FILE_DISABLED = /Permission Error: .*disabled (by|through) configuration/;

describe('raw SQL on the service database', () => {
  it.each([
    ["read_csv('/etc/passwd')", "SELECT * FROM read_csv('/etc/passwd')"],
    ['a file beside the temp folder', () => `SELECT * FROM read_csv('${service.dataDir}/outside.csv')`],
    ['.. out of the temp folder', () => `SELECT * FROM read_text('${tmp}/../outside.csv')`],
    ['a link in the temp folder to /etc/passwd', () => `SELECT * FROM read_text('${tmp}/passwd-link.csv')`],
    ['glob of the data directory', () => `SELECT * FROM glob('${service.dataDir}/*')`],
    ['COPY TO a file', "COPY (SELECT 1) TO '/tmp/second-wall-test.csv'"],
    ['ATTACH a database file', () => `ATTACH '${service.dataDir}/other.duckdb' AS other`],
    ['INSTALL an extension', 'INSTALL httpfs'],
  ] as const)('refuses %s', async (_name, sql) => {
    await refused(raw(typeof sql === 'function' ? sql() : sql), FILE_DISABLED);
  });

  it('refuses replacement scans altogether', async () => {
    // With external access off DuckDB no longer turns a quoted path into a file scan at all.
    await refused(
      raw("SELECT * FROM '/etc/passwd'"),
      /Catalog Error: Table with name \/etc\/passwd does not exist/,
    );
  });

  it('refuses LOAD of an extension', async () => {
    await refused(raw('LOAD httpfs'), /Permission Error|disabled/);
  });

  it.each([
    'SET enable_external_access = true',
    "SET allowed_directories = ['/']",
    'SET lock_configuration = false',
    'RESET lock_configuration',
    "SET GLOBAL TimeZone = 'Europe/Paris'",
  ])('cannot undo the lock: %s', async (sql) => {
    await refused(raw(sql), /the configuration has been locked/);
  });

  it('holds on dedicated connections and on the writer too', async () => {
    await refused(
      service.database.dedicated((session) => session.all("SELECT * FROM read_csv('/etc/passwd')")),
      FILE_DISABLED,
    );
    await refused(
      service.database.write((session) => session.all("SELECT * FROM read_csv('/etc/passwd')")),
      FILE_DISABLED,
    );
    expect(fs.existsSync('/tmp/second-wall-test.csv')).toBe(false);
  });
});

describe('what the service does with files still works', () => {
  it('loaded the demo data under the wall', async () => {
    const [row] = await raw('SELECT count(*) AS n FROM restaking.avs');
    expect(Number((row as { n: bigint }).n)).toBeGreaterThan(0);
  });

  it('reads files in its temp folder', async () => {
    fs.writeFileSync(path.join(tmp, 'inside.csv'), 'a\n7\n');
    expect(await raw(`SELECT a FROM read_csv('${tmp}/inside.csv')`)).toEqual([{ a: 7n }]);
  });

  it('uploads a CSV', async () => {
    const upload = await service.json(
      '/v1/table/upload/csv',
      uploadBody({ table_name: 'walled', data: 'x,y\n1,a\n2,b\n' }),
    );
    expect(upload.body).toMatchObject({ success: true, table_name: 'dataset_walled' });
    expect(await raw('SELECT x, y FROM alice.dataset_walled ORDER BY x')).toEqual([
      { x: 1n, y: 'a' },
      { x: 2n, y: 'b' },
    ]);
  });

  it('inserts CSV and NDJSON into a created table', async () => {
    const created = await service.json('/v1/table/create', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        namespace: 'alice',
        table_name: 'appended',
        schema: [
          { name: 'x', type: 'bigint' },
          { name: 'y', type: 'varchar' },
        ],
      }),
    });
    expect(created.status).toBe(201);
    for (const [contentType, body] of [
      ['text/csv', 'x,y\n3,c\n'],
      ['application/x-ndjson', '{"x":4,"y":"d"}\n'],
    ]) {
      const insert = await service.json('/v1/table/alice/appended/insert', {
        method: 'POST',
        headers: { 'content-type': contentType as string },
        body,
      });
      expect(insert.body).toMatchObject({ rows_written: 1 });
    }
    expect(await raw('SELECT x, y FROM alice.appended ORDER BY x')).toEqual([
      { x: 3n, y: 'c' },
      { x: 4n, y: 'd' },
    ]);
  });
});
