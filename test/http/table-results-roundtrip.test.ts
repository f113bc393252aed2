import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, tempDir } from '../support/service.js';
import { tableCalls } from '../support/tables.js';

/**
 * Values beyond 64 bits, and varbinary, from an insert to a query result and back out of
 * the API unchanged: insert (CSV and NDJSON) → table → saved query → results (JSON and CSV).
 */

const QUERY_ID = 2101;
let service: TestService;
let queriesDir: string;

const INT256_MIN = `-${2n ** 255n}`;
const UINT256_MAX = `${2n ** 256n - 1n}`;

beforeAll(async () => {
  queriesDir = tempDir('roundtrip-queries-');
  fs.writeFileSync(
    path.join(queriesDir, `${QUERY_ID}-wide.sql`),
    `-- id: ${QUERY_ID}\n-- name: Wide numbers\n-- description: alice.wide, in id order.\n-- refresh_seconds: 86400\nSELECT id, delta, balance, payload FROM alice.wide ORDER BY id\n`,
  );
  service = await startTestService({ QUERIES_DIR: queriesDir });
});
afterAll(async () => {
  await service.stop();
  fs.rmSync(queriesDir, { recursive: true, force: true });
});

async function runQuery(): Promise<void> {
  const started = await service.json<{ execution_id: string }>(`/v1/query/${QUERY_ID}/execute`, {
    method: 'POST',
    key: KEYS.admin,
  });
  expect(started.status).toBe(200);
  const until = Date.now() + 30_000;
  for (;;) {
    const { body } = await service.json<{ state: string; is_execution_finished: boolean }>(
      `/v1/execution/${started.body.execution_id}/status`,
      { key: KEYS.admin },
    );
    if (body.is_execution_finished) {
      expect(body.state).toBe('QUERY_STATE_COMPLETED');
      return;
    }
    if (Date.now() > until) throw new Error('the query did not finish');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('insert → results round trip', () => {
  it('keeps int256, uint256 and varbinary exact', async () => {
    const calls = tableCalls(service);
    await calls.createTable(KEYS.alice, 'alice.wide', [
      { name: 'id', type: 'integer', nullable: false },
      { name: 'delta', type: 'int256' },
      { name: 'balance', type: 'uint256' },
      { name: 'payload', type: 'varbinary' },
    ]);
    const csv = `id,delta,balance,payload\n1,${INT256_MIN},${UINT256_MAX},0x00ff\n2,9007199254740993,18446744073709551616,0x\n`;
    expect((await calls.insert(KEYS.alice, 'alice.wide', csv)).status).toBe(200);
    const ndjson = `{"id": 3, "delta": -340282366920938463463374607431768211457, "balance": 340282366920938463463374607431768211456, "payload": "0xCAFE"}\n{"id": 4, "delta": 7, "balance": 9007199254740991}\n`;
    expect((await calls.insert(KEYS.alice, 'alice.wide', ndjson, 'application/x-ndjson')).status).toBe(200);
    await runQuery();

    const { status, body } = await service.json<{ result: { rows: Record<string, unknown>[] } }>(
      `/v1/query/${QUERY_ID}/results`,
      { key: KEYS.alice },
    );
    expect(status).toBe(200);
    expect(body.result.rows).toEqual([
      { id: 1, delta: INT256_MIN, balance: UINT256_MAX, payload: '0x00ff' },
      { id: 2, delta: '9007199254740993', balance: '18446744073709551616', payload: '0x' },
      {
        id: 3,
        delta: '-340282366920938463463374607431768211457',
        balance: '340282366920938463463374607431768211456',
        payload: '0xcafe',
      },
      { id: 4, delta: 7, balance: 9007199254740991, payload: null },
    ]);

    const csvResult = await service.request(`/v1/query/${QUERY_ID}/results/csv`, { key: KEYS.alice });
    expect(csvResult.status).toBe(200);
    const lines = (await csvResult.text()).trim().split('\n');
    expect(lines[0]).toBe('id,delta,balance,payload');
    expect(lines[1]).toBe(`1,${INT256_MIN},${UINT256_MAX},0x00ff`);
    expect(lines[3]).toBe(
      '3,-340282366920938463463374607431768211457,340282366920938463463374607431768211456,0xcafe',
    );
  });
});
