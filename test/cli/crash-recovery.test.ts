import fs from 'node:fs';
import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnService } from '../support/child-service.js';
import { KEYS, tempDir } from '../support/service.js';

const dataDir = tempDir('crash-');
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const original = 'id,label\n1,one\n2,two\n3,three\n';

function bigBody(rows: number): Buffer {
  const lines = ['id,label'];
  for (let i = 0; i < rows; i++) lines.push(`${i},replacement row number ${i}`);
  return Buffer.from(JSON.stringify({ table_name: 'precious', data: `${lines.join('\n')}\n` }));
}

/**
 * Starts an upload and kills the server with SIGKILL at `when`: once half the body is
 * sent, or once all of it is sent (the server is then loading it into DuckDB).
 */
async function killDuringUpload(url: string, body: Buffer, when: 'streaming' | 'loading') {
  const child = await spawnAt(url);
  return child(body, when);
}

function spawnAt(url: string) {
  return (body: Buffer, when: 'streaming' | 'loading') =>
    new Promise<{ answered: boolean }>((resolve) => {
      let answered = false;
      const req = http.request(
        `${url}/v1/table/upload/csv`,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': body.length,
            'x-service-api-key': KEYS.alice,
          },
        },
        () => {
          answered = true;
        },
      );
      req.on('error', () => resolve({ answered }));
      req.on('close', () => resolve({ answered }));
      const half = Math.floor(body.length / 2);
      req.write(body.subarray(0, half), () => {
        if (when === 'streaming') {
          current?.process.kill('SIGKILL');
          return;
        }
        req.end(body.subarray(half), () => setTimeout(() => current?.process.kill('SIGKILL'), 150));
      });
    });
}

let current: Awaited<ReturnType<typeof spawnService>> | undefined;

async function readPrecious(url: string) {
  const response = await fetch(`${url}/v1/tables`, { headers: { 'x-service-api-key': KEYS.alice } });
  const { tables } = (await response.json()) as { tables: { table_name: string; row_count: number }[] };
  return tables.find((t) => t.table_name === 'dataset_precious');
}

describe('a server killed in the middle of a replacing upload', () => {
  it('restarts on the same data directory with the previous table intact', async () => {
    current = await spawnService(dataDir);
    const first = await fetch(`${current.url}/v1/table/upload/csv`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-api-key': KEYS.alice },
      body: JSON.stringify({ table_name: 'precious', data: original }),
    });
    expect(first.status).toBe(200);
    const body = bigBody(1_500_000);

    for (const when of ['streaming', 'loading'] as const) {
      const outcome = await killDuringUpload(current.url, body, when);
      expect(await current.exited).toBe('SIGKILL');
      expect(outcome.answered).toBe(false);
      current = await spawnService(dataDir);
      expect((await readPrecious(current.url))?.row_count).toBe(3);
      expect(fs.readdirSync(`${dataDir}/tmp`)).toEqual([]);
    }

    current.process.kill('SIGTERM');
    expect(await current.exited).toBe(0);
    // The database file opens cleanly in DuckDB itself and holds exactly the original rows.
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(`${dataDir}/warehouse.duckdb`);
    const connection = await instance.connect();
    const rows = (
      await connection.runAndReadAll('SELECT * FROM alice.dataset_precious ORDER BY id')
    ).getRowObjectsJS();
    expect(rows).toEqual([
      { id: 1n, label: 'one' },
      { id: 2n, label: 'two' },
      { id: 3n, label: 'three' },
    ]);
    connection.closeSync();
    instance.closeSync();
  });
});
