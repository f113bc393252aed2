import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_PATH, PYTHON } from '../sdk/support/python-client.js';
import { KEYS, startTestService, type TestService } from '../support/service.js';

/**
 * The README's "Query your tables" examples, run as written against a fresh server: the curl
 * block with bash (each line of output must be the `# …` line shown under its command, `…`
 * standing for anything), and the Python block with the official client.
 */

const run = promisify(execFile);
const README = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const SECTION = README.slice(
  README.indexOf('## Query your tables'),
  README.indexOf('## Filter and sort language'),
);

function block(text: string, language: string, after = ''): string {
  const start = text.indexOf(`\`\`\`${language}\n`, text.indexOf(after));
  if (start < 0) throw new Error(`README: no ${language} block`);
  const body = start + language.length + 4;
  return text.slice(body, text.indexOf('\n```', body));
}

const wildcard = (line: string) =>
  new RegExp(
    `^${line
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );

const TRANSFERS =
  'day,token,amount\n2024-01-01,stETH,12.5\n2024-01-01,rETH,3\n2024-01-02,stETH,7.25\n2024-01-03,rETH,1.5\n';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service.stop();
});

describe('README: Query your tables', () => {
  it('the curl example prints what the README shows', async () => {
    const script = block(SECTION.slice(SECTION.indexOf('<!-- query-your-tables:curl:start -->')), 'sh');
    const expected = script
      .split('\n')
      .filter((line) => line.startsWith('# '))
      .map((line) => line.slice(2));
    expect(expected.length).toBeGreaterThan(3);
    // curl -s prints no line end after a JSON body; a terminal shows each on its own line.
    const prelude = 'set -euo pipefail\ncurl() { command curl --fail-with-body "$@"; echo; }\n';
    const { stdout } = await run('bash', ['-c', prelude + script], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', BASE: service.url, KEY: KEYS.alice },
      timeout: 60_000,
    });
    const printed = stdout.split('\n').filter((line) => line !== '');
    expect(printed).toHaveLength(expected.length);
    printed.forEach((line, i) => {
      expect(line).toMatch(wildcard(expected[i] as string));
    });
  });

  it('the Python example runs with the official client', async () => {
    const script = block(SECTION, 'python', '**With the Python client**')
      .replace('"YOUR_KEY"', JSON.stringify(KEYS.bob))
      .replace('"http://127.0.0.1:8080"', JSON.stringify(service.url));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-python-'));
    try {
      fs.writeFileSync(path.join(dir, 'transfers.csv'), TRANSFERS);
      const { stdout } = await run(PYTHON, ['-c', `import importlib.metadata\n${script}`], {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          PYTHONPATH: CLIENT_PATH,
          PYTHONDONTWRITEBYTECODE: '1',
        },
        timeout: 60_000,
      });
      const lines = stdout.trim().split('\n');
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(/\{'token': 'rETH', 'total': 4\.5\}/);
      expect(lines[1]).toMatch(/\{'token': 'stETH', 'total': 7\.25\}/);
      expect(lines[2]).toBe(lines[1]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the TypeScript example runs with the official client', async () => {
    const upload = await service.json('/v1/table/upload/csv', {
      method: 'POST',
      key: KEYS.bob,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ table_name: 'transfers', data: TRANSFERS }),
    });
    expect(upload.status).toBe(200);
    const code = block(SECTION, 'ts', '**With the TypeScript client**')
      .replace("'YOUR_KEY'", JSON.stringify(KEYS.bob))
      .replace("'http://127.0.0.1:8080/api'", JSON.stringify(`${service.url}/api`));
    // Plain JavaScript as written; run from the project so that the client's package resolves.
    const { stdout } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `${code}\nconsole.log(JSON.stringify([latest.execution_id === run.execution_id, adHoc.result.rows]));`,
      ],
      {
        cwd: path.resolve(import.meta.dirname, '../..'),
        timeout: 60_000,
      },
    );
    expect(stdout).toMatch(/day: '2024-01-01', amount: 3 \}.*\n.*day: '2024-01-03', amount: 1\.5/);
    const last = stdout.trim().split('\n').at(-1) as string;
    expect(JSON.parse(last)).toEqual([true, [{ n: 4 }]]);
  });
});
