import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/executions/execution.js';
import { type ProcessUser, runCli } from '../support/child-service.js';
import { executeAndWait, waitFinished } from '../support/results.js';
import { KEYS, startTestService, type TestService, tempDir } from '../support/service.js';
import { FAULT_QUERIES_DIR } from './support/faults.js';

/**
 * A data directory the service cannot use: unwritable or unusable at start (a clear error
 * and exit code 1, once, not a crash loop), and a disk that fills up while it runs (a clear
 * 507 on the request, nothing stored, the service keeps serving and recovers by itself once
 * space is freed).
 */

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function freshDir(prefix: string): string {
  const dir = tempDir(prefix);
  dirs.push(dir);
  return dir;
}

interface Exit {
  code: number | null;
  output: string;
  ms: number;
}

/** `serve` in a child process, optionally as another user; resolves when it exits. */
function serveUntilExit(dataDir: string, user?: ProcessUser): Promise<Exit> {
  const started = Date.now();
  const child = runCli(['serve'], { PORT: '0', DATA_DIR: dataDir, API_KEYS: `${KEYS.alice}=alice` }, user);
  let output = '';
  child.stdout?.on('data', (c) => {
    output += c;
  });
  child.stderr?.on('data', (c) => {
    output += c;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output, ms: Date.now() - started });
    }),
  );
}

function expectCleanRefusal(exit: Exit, message: RegExp): void {
  expect(exit.output).not.toMatch(/Serving on/);
  expect(exit.code, exit.output).toBe(1);
  expect(exit.output).toMatch(message);
  // One line for the operator, no stack trace.
  expect(exit.output).not.toMatch(/^\s+at /m);
  expect(
    exit.output
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('error:')),
  ).toHaveLength(1);
}

/** The uid and gid of `nobody`, to take root's write-everywhere right away from the server. */
function nobody(): ProcessUser | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
  } catch {
    return undefined;
  }
}

describe('a data directory that cannot be used at start', () => {
  it('below a regular file: a clear error and exit code 1', async () => {
    const dir = freshDir('datadir-file-');
    fs.writeFileSync(path.join(dir, 'a-file'), 'x');
    const exit = await serveUntilExit(path.join(dir, 'a-file', 'data'));
    expectCleanRefusal(exit, /error: the data directory .*a-file\/data is not writable: ENOTDIR/);
  });

  it('read-only: a clear error and exit code 1', async (context) => {
    const dir = freshDir('datadir-readonly-');
    const readOnly = path.join(dir, 'ro');
    fs.mkdirSync(readOnly);
    fs.chmodSync(readOnly, 0o555);
    // Root writes through file modes: the server then runs as nobody, whom they bind.
    const asRoot = process.getuid?.() === 0;
    const user = asRoot ? nobody() : undefined;
    if (asRoot && !user) context.skip('running as root and there is no user "nobody" to run the server as');
    const exit = await serveUntilExit(path.join(readOnly, 'data'), user);
    expectCleanRefusal(exit, /error: the data directory .*ro\/data is not writable: EACCES/);
  });

  it('holding a database file that is not one: a clear error and exit code 1', async () => {
    const dir = freshDir('datadir-corrupt-');
    fs.writeFileSync(path.join(dir, 'warehouse.duckdb'), Buffer.alloc(64 * 1024, 0x5a));
    const exit = await serveUntilExit(dir);
    expectCleanRefusal(exit, /error: .*warehouse\.duckdb.* not a valid DuckDB database file/);
    // The file is left as it was for the operator to look at.
    expect(fs.readFileSync(path.join(dir, 'warehouse.duckdb')).every((b) => b === 0x5a)).toBe(true);
  });
});

/**
 * A real full disk: a small tmpfs mounted as the data directory. Mounting needs root with
 * CAP_SYS_ADMIN (CI runs as root in a container that has it); elsewhere this is skipped.
 */
const mountPoint = tempDir('full-disk-');
let mounted = false;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', mountPoint], { stdio: 'ignore' });
  mounted = true;
} catch {
  // Not permitted here: the describe below is skipped.
  fs.rmSync(mountPoint, { recursive: true, force: true });
}

/** Fills the file system up to the last byte with one file; returns its path. */
function fillDisk(dir: string): string {
  const filler = path.join(dir, 'filler');
  const fd = fs.openSync(filler, 'a');
  try {
    for (const size of [1 << 20, 1 << 16, 1 << 12, 1 << 9, 1]) {
      const chunk = Buffer.alloc(size, 1);
      for (;;) {
        try {
          fs.writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return filler;
}

describe.skipIf(!mounted)('a disk that fills up while the service runs', () => {
  const dataDir = path.join(mountPoint, 'data');
  let service: TestService;
  const env = { QUERIES_DIR: FAULT_QUERIES_DIR };

  beforeAll(async () => {
    service = await startTestService(env, dataDir);
  });
  afterAll(async () => {
    await service?.close();
    if (mounted) execFileSync('umount', [mountPoint]);
    fs.rmSync(mountPoint, { recursive: true, force: true });
  });

  const upload = (table: string, data: string) =>
    service.json<{ error?: string }>('/v1/table/upload/csv', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ table_name: table, data }),
    });
  const insert = (csv: string) =>
    service.json<{ error?: string }>('/v1/table/alice/log/insert', {
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: csv,
    });
  const rowsOf = (table: string) =>
    service.database.read((s) => s.all(`SELECT * FROM ${table} ORDER BY ALL`));
  const numbers = (count: number) =>
    `n\n${Array.from({ length: count }, (_, i) => `${i * 7919}`).join('\n')}\n`;

  it('refuses writes with a clear 507, keeps serving, and recovers once space is freed', async () => {
    expect((await upload('keep', 'id,label\n1,one\n2,two\n')).status).toBe(200);
    expect((await upload('numbers', numbers(50_000))).status).toBe(200);
    const created = await service.json('/v1/table/create', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        namespace: 'alice',
        table_name: 'log',
        schema: [{ name: 'n', type: 'bigint' }],
      }),
    });
    expect(created.status).toBe(201);
    expect((await insert('n\n1\n2\n3\n')).status).toBe(200);
    const completed = await executeAndWait(service, 2002);
    expect(completed.state).toBe('QUERY_STATE_COMPLETED');
    const keep = await rowsOf('alice.dataset_keep');
    const log = await rowsOf('alice.log');
    const catalog = await rowsOf('_service.tables');

    const filler = fillDisk(mountPoint);
    const freeBytes = (bytes: number) => {
      fs.truncateSync(filler, 0);
      fillDisk(mountPoint);
      fs.truncateSync(filler, Math.max(0, fs.statSync(filler).size - bytes));
    };

    // Bodies that cannot even be written to their temporary file.
    const refusedUpload = await upload('keep', `id,label\n${'3,three\n'.repeat(50_000)}`);
    expect(refusedUpload.status, JSON.stringify(refusedUpload.body)).toBe(507);
    expect(refusedUpload.body.error).toMatch(/no disk space left: nothing of this request was stored/);
    const refusedInsert = await insert(`n\n${'4\n'.repeat(100_000)}`);
    expect(refusedInsert.status, JSON.stringify(refusedInsert.body)).toBe(507);

    // A body that fits in its temporary file, but whose rows DuckDB then has no room for.
    freeBytes(2 * 1024 * 1024);
    const hex = randomBytes(800_000).toString('hex');
    const rows = Array.from({ length: 20_000 }, (_, i) => `${i},${hex.slice(i * 80, i * 80 + 80)}`);
    const late = await upload('keep', `id,label\n${rows.join('\n')}\n`);
    expect(late.status, JSON.stringify(late.body)).toBe(507);

    // A run whose snapshot would take the reserve kept for writes (a tenth of this 32 MB disk)
    // fails before it starts; a refresh that does not fit fails; the previous result is still served.
    freeBytes(512 * 1024);
    const failed = await executeAndWait(service, 2002);
    expect(failed.state).toBe('QUERY_STATE_FAILED');
    expect(failed.error?.message).toMatch(/less free space than the reserve kept for uploads/);
    const refresh = await service.executions.submit({
      queryId: 2002,
      sql: 'SELECT range AS n, md5(range::VARCHAR) AS h FROM range(200000)',
      owner: OPERATOR,
      lane: 'operator',
    });
    const refreshed = await waitFinished(service, refresh.id);
    expect(refreshed.state).toBe('QUERY_STATE_FAILED');
    expect(refreshed.error?.message).toMatch(/disk is full|No space left on device/);
    const served = await service.json<{ execution_id: string; result: { rows: unknown[] } }>(
      '/v1/query/2002/results?limit=5',
    );
    expect(served.status).toBe(200);
    expect(served.body.execution_id).toBe(completed.execution_id);
    expect(served.body.result.rows).toHaveLength(5);
    expect((await service.json('/v1/tables')).status).toBe(200);
    expect((await service.json('/health', { key: null })).status).toBe(200);
    expect(fs.readdirSync(path.join(dataDir, 'tmp'))).toEqual([]);

    expect(await rowsOf('alice.dataset_keep')).toEqual(keep);
    expect(await rowsOf('alice.log')).toEqual(log);
    expect(await rowsOf('_service.tables')).toEqual(catalog);

    // Space again: the same service takes writes, no restart needed.
    fs.rmSync(filler);
    expect((await upload('keep', 'id,label\n9,nine\n')).status).toBe(200);
    expect((await insert('n\n5\n')).status).toBe(200);
    expect(await rowsOf('alice.dataset_keep')).toEqual([{ id: 9n, label: 'nine' }]);
    expect(await rowsOf('alice.log')).toEqual([{ n: 1n }, { n: 2n }, { n: 3n }, { n: 5n }]);

    // And it restarts on the data directory, which opens cleanly, with exactly that state.
    await service.close();
    service = await startTestService(env, dataDir);
    expect(await rowsOf('alice.dataset_keep')).toEqual([{ id: 9n, label: 'nine' }]);
    expect(await rowsOf('alice.log')).toEqual([{ n: 1n }, { n: 2n }, { n: 3n }, { n: 5n }]);
    const again = await service.json<{ execution_id: string }>('/v1/query/2002/results?limit=1');
    expect(again.body.execution_id).toBe(completed.execution_id);
  }, 60_000);
});
