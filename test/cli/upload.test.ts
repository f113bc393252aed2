import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/child-service.js';
import { KEYS, startTestService, type TestService, tempDir } from '../support/service.js';

/**
 * `upload FILE` as a user runs it: a process of its own sending a file to a listening
 * service, its progress on stderr, the answer on stdout, and an exit code for each outcome.
 */

let service: TestService;
let dir: string;

beforeAll(async () => {
  service = await startTestService();
  dir = tempDir('cli-upload-');
});
afterAll(async () => {
  await service.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function upload(args: string[], env: Record<string, string> = {}) {
  const child = runCli(['upload', ...args], env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c) => {
    stdout += c;
  });
  child.stderr?.on('data', (c) => {
    stderr += c;
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

const file = (name: string, content: string | Buffer) => {
  const at = path.join(dir, name);
  fs.writeFileSync(at, content);
  return at;
};

const count = async (table: string) => {
  const [row] = await service.database.read((session) =>
    session.all<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`),
  );
  return Number(row?.n);
};

describe('upload FILE', () => {
  it('streams a CSV of many megabytes with progress, and prints the answer', async () => {
    const rows = 600_000;
    const lines = Array.from(
      { length: rows },
      (_, i) => `${i},0x${i.toString(16).padStart(40, '0')},${i}.25`,
    );
    const csv = file('Trades 2024.csv', `id,trader,amount\n${lines.join('\n')}\n`);
    const { code, stdout, stderr } = await upload([csv, '--url', service.url, '--key', KEYS.alice]);
    expect(code, stderr).toBe(0);
    const answer = JSON.parse(stdout) as { success: boolean; table_name: string; row_count: number };
    expect(answer).toMatchObject({ success: true, table_name: 'dataset_trades_2024', row_count: rows });
    // stderr is no terminal here: the bar prints a line every two seconds, and its last at the end.
    expect(stderr).toMatch(/uploading \[.*\] 100% \| \d+\.\d MB of \d+\.\d MB \| \d+\.\d MB\/s \| ETA/);
    expect(await count('alice.dataset_trades_2024')).toBe(rows);
  });

  it('sends Parquet and NDJSON with their content types, --table, --private and --description', async () => {
    const parquet = path.join(dir, 'amounts.parquet');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    await connection.run(
      `COPY (SELECT range AS id, (range / 3)::DECIMAL(38,18) AS amount FROM range(1000)) TO '${parquet}' (FORMAT parquet)`,
    );
    connection.closeSync();
    instance.closeSync();
    const fromParquet = await upload([parquet, '--url', service.url, '--key', KEYS.bob, '--private']);
    expect(fromParquet.code, fromParquet.stderr).toBe(0);
    expect(JSON.parse(fromParquet.stdout)).toMatchObject({
      table_name: 'dataset_amounts',
      columns: [
        { name: 'id', type: 'bigint' },
        { name: 'amount', type: 'decimal(38,18)' },
      ],
    });
    const jsonl = file('events.jsonl', '{"id": 1, "label": "one"}\n{"id": 2}\n');
    const fromNdjson = await upload([
      jsonl,
      '--table',
      'labels',
      '--description',
      'two events',
      '--url',
      service.url,
      '--key',
      KEYS.bob,
    ]);
    expect(fromNdjson.code, fromNdjson.stderr).toBe(0);
    const described = await service.json<{ is_private: boolean; description: string }>(
      '/v1/table/bob/dataset_amounts',
      { key: KEYS.bob },
    );
    expect(described.body.is_private).toBe(true);
    const labels = await service.json<{ description: string; row_count: number }>(
      '/v1/table/bob/dataset_labels',
      { key: KEYS.bob },
    );
    expect(labels.body).toMatchObject({ description: 'two events', row_count: 2 });
  });

  it('refuses what it cannot send with exit code 2, and a refusal by the service with 1', async () => {
    const csv = file('good.csv', 'a\n1\n');
    const cases: [string[], number, RegExp][] = [
      [
        [file('notes.txt', 'a\n1\n'), '--url', service.url, '--key', KEYS.alice],
        2,
        /name it \.csv, \.parquet, \.ndjson or \.jsonl/,
      ],
      [
        [path.join(dir, 'missing.csv'), '--url', service.url, '--key', KEYS.alice],
        2,
        /cannot read .*missing\.csv/,
      ],
      [
        [file('2024 export.csv', 'a\n1\n'), '--url', service.url, '--key', KEYS.alice],
        2,
        /give one with --table NAME \(taken from the file name 2024 export\.csv\)/,
      ],
      [[csv, '--url', 'not a url', '--key', KEYS.alice], 2, /--url "not a url" is not a URL/],
      [[csv, '--url', service.url, '--key', 'wrong-key-0000000'], 1, /the service answered 401: /],
      [
        [file('ragged.csv', 'a,b\n1\n'), '--url', service.url, '--key', KEYS.alice],
        1,
        /the service answered 400: CSV line 2 has fewer fields/,
      ],
      [
        [csv, '--url', service.url, '--key', KEYS.alice, '--private'],
        1,
        /the service answered 403: private tables need a premium plan/,
      ],
      [
        [csv, '--url', 'http://127.0.0.1:9', '--key', KEYS.alice],
        1,
        /could not reach http:\/\/127\.0\.0\.1:9/,
      ],
    ];
    for (const [args, code, message] of cases) {
      const outcome = await upload(args, { SERVICE_API_KEY: '' });
      expect(outcome.code, args.join(' ')).toBe(code);
      expect(outcome.stderr, args.join(' ')).toMatch(message);
      expect(outcome.stdout).toBe('');
    }
  });

  it('takes the key from SERVICE_API_KEY, else from the data directory of a first start', async () => {
    const csv = file('keyed.csv', 'a\n1\n');
    const fromEnv = await upload([csv, '--url', service.url], { SERVICE_API_KEY: KEYS.carol });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    const dataDir = tempDir('cli-upload-key-');
    fs.writeFileSync(path.join(dataDir, 'dev-api-key.txt'), `${KEYS.alice}\n`);
    const fromFile = await upload(
      [csv, '--url', service.url, '--data-dir', dataDir, '--table', 'from_file'],
      {
        SERVICE_API_KEY: '',
      },
    );
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(await count('alice.dataset_from_file')).toBe(1);
    const none = await upload([csv, '--url', service.url, '--data-dir', path.join(dataDir, 'nowhere')], {
      SERVICE_API_KEY: '',
    });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no API key: give --key KEY \(or set SERVICE_API_KEY\)/);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});
