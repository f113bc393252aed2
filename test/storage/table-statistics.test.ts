import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { post } from '../queries/support/queries.js';
import { KEYS, startTestService, tempDir } from '../support/service.js';

/**
 * Issue 27: tables written in bulk keep DuckDB's distinct-value counts over a restart. DuckDB
 * writes a large write's row groups into the file and only pointers to them into the WAL; a
 * database reopened from that WAL has lost the counts ("Approx Unique" in `stats()`), and its
 * join planner guesses without them. The service checkpoints after such writes.
 */

const ROWS = 130_000;

function csv(rows: number): string {
  const lines = ['id,code'];
  for (let i = 0; i < rows; i++) lines.push(`${i},c${i % 1000}`);
  return `${lines.join('\n')}\n`;
}

/** Until DuckDB has checkpointed (the WAL is gone or empty), 10 s at most. */
async function checkpointed(file: string): Promise<void> {
  const wal = `${file}.wal`;
  for (let i = 0; i < 200; i++) {
    if (!fs.existsSync(wal) || fs.statSync(wal).size === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function statistics(file: string, table: string): Promise<string> {
  const instance = await DuckDBInstance.create(file);
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(`SELECT stats(id)::VARCHAR AS s FROM ${table} LIMIT 1`);
    return String(reader.getRows()[0]?.[0]);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe('distinct-value statistics of tables written in bulk', () => {
  it('survive a restart after an upload and after an insert', async () => {
    const dataDir = tempDir('statistics-');
    const file = path.join(dataDir, 'warehouse.duckdb');
    const service = await startTestService({}, dataDir);
    try {
      const uploaded = await service.json(
        '/v1/table/upload/csv',
        post({ table_name: 'bulk', data: csv(ROWS), is_private: false }, KEYS.alice),
      );
      expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
      const created = await service.json(
        '/v1/table/create',
        post({
          namespace: 'alice',
          table_name: 'appended',
          schema: [
            { name: 'id', type: 'bigint' },
            { name: 'code', type: 'varchar' },
          ],
        }),
      );
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const inserted = await service.request('/v1/table/alice/appended/insert', {
        method: 'POST',
        headers: { 'content-type': 'text/csv' },
        body: csv(ROWS),
      });
      expect(inserted.status, await inserted.text()).toBe(200);
      await checkpointed(file);
    } finally {
      await service.close();
    }
    expect(await statistics(file, 'alice.dataset_bulk')).toContain('Approx Unique');
    expect(await statistics(file, 'alice.appended')).toContain('Approx Unique');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});
