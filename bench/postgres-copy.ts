import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * The alternative many teams would pick for ingest: PostgreSQL's COPY of the same CSV into
 * a table, through psql. A throwaway server from Debian's postgresql package is started for
 * the measurement (initdb into a temporary directory, a free port, its socket in that
 * directory), with the package's default settings, and removed afterwards. PostgreSQL
 * refuses to run as root, so as root the server runs as the `postgres` user.
 */

export type PostgresCopyOutcome = { skipped: string } | { version: string; runsMs: number[]; rows: number };

/** The benchmark CSV's columns (bench/benchmark-csv.ts), typed as the upload infers them. */
const TABLE_COLUMNS = `block_number bigint, log_index integer, tx_hash text, staker text, token text,
  amount double precision, block_time timestamp, is_deposit boolean, memo text`;

export interface Tools {
  bin: string;
  version: string;
}

/** The newest /usr/lib/postgresql/<version>/bin that has a server and psql. */
export function findTools(): Tools | undefined {
  const root = '/usr/lib/postgresql';
  let versions: string[];
  try {
    versions = fs.readdirSync(root);
  } catch {
    return undefined;
  }
  const usable = versions
    .filter((v) =>
      ['initdb', 'pg_ctl', 'postgres', 'psql'].every((t) => fs.existsSync(path.join(root, v, 'bin', t))),
    )
    .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
  const version = usable[0];
  return version ? { bin: path.join(root, version, 'bin'), version } : undefined;
}

/** uid and gid of the `postgres` user, from /etc/passwd. */
export function postgresUser(): { uid: number; gid: number } | undefined {
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  return uid && gid ? { uid: Number(uid), gid: Number(gid) } : undefined;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface RunOptions {
  user?: { uid: number; gid: number };
  stdinFile?: string;
}

export function run(command: string, args: string[], options: RunOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: [options.stdinFile ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      ...(options.user ?? {}),
      env: { ...process.env, LC_ALL: 'C.UTF-8' },
    });
    let output = '';
    child.stdout?.on('data', (c) => {
      output += c;
    });
    child.stderr?.on('data', (c) => {
      output += c;
    });
    if (options.stdinFile && child.stdin) {
      const input = fs.createReadStream(options.stdinFile, { highWaterMark: 1 << 20 });
      input.on('error', reject);
      input.pipe(child.stdin);
    }
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${path.basename(command)} exited ${code}: ${output}`)),
    );
  });
}

export async function measurePostgresCopy(csvFile: string, runs: number): Promise<PostgresCopyOutcome> {
  const tools = findTools();
  if (!tools) return { skipped: 'skipped: postgresql not installed (apt-get install postgresql)' };
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? postgresUser() : undefined;
  if (asRoot && !user) return { skipped: 'skipped: running as root and there is no postgres user' };

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-postgres-'));
  const dataDir = path.join(dir, 'data');
  if (user) fs.chownSync(dir, user.uid, user.gid);
  const port = await freePort();
  const bin = (tool: string) => path.join(tools.bin, tool);
  const psql = (args: string[], stdinFile?: string) =>
    run(
      bin('psql'),
      [
        '-X',
        '-q',
        '-v',
        'ON_ERROR_STOP=1',
        '-h',
        dir,
        '-p',
        String(port),
        '-U',
        'postgres',
        '-d',
        'postgres',
        ...args,
      ],
      {
        ...(user ? { user } : {}),
        ...(stdinFile ? { stdinFile } : {}),
      },
    );
  let started = false;
  try {
    await run(
      bin('initdb'),
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-sync'],
      {
        ...(user ? { user } : {}),
      },
    );
    await run(
      bin('pg_ctl'),
      [
        '-D',
        dataDir,
        '-l',
        path.join(dir, 'server.log'),
        '-w',
        '-o',
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
        'start',
      ],
      { ...(user ? { user } : {}) },
    );
    started = true;
    const version = (await psql(['-At', '-c', 'SHOW server_version'])).trim();
    const runsMs: number[] = [];
    let rows = 0;
    for (let i = 0; i < runs; i++) {
      await psql(['-c', `DROP TABLE IF EXISTS bench; CREATE TABLE bench (${TABLE_COLUMNS})`]);
      const before = performance.now();
      const output = await psql(['-c', 'COPY bench FROM STDIN WITH (FORMAT csv, HEADER true)'], csvFile);
      runsMs.push(performance.now() - before);
      rows = Number((await psql(['-At', '-c', 'SELECT count(*) FROM bench'])).trim());
      if (output.trim() !== '') process.stderr.write(`postgres copy: ${output.trim()}\n`);
    }
    return { version: `PostgreSQL ${version.split(' ')[0]}`, runsMs, rows };
  } finally {
    if (started) {
      await run(bin('pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', 'stop'], {
        ...(user ? { user } : {}),
      }).catch((error: unknown) =>
        process.stderr.write(`postgres stop failed: ${(error as Error).message}\n`),
      );
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [csvFile, runs = '1'] = process.argv.slice(2);
  if (!csvFile) throw new Error('usage: tsx bench/postgres-copy.ts <file.csv> [runs]');
  console.log(JSON.stringify(await measurePostgresCopy(csvFile, Number(runs))));
}
