import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChildService } from '../support/child-service.js';
import { tempDir } from '../support/service.js';
import {
  acknowledged,
  call,
  killWhenReceived,
  startServer,
  waitForState,
  withDatabaseFile,
} from './support/faults.js';

/**
 * The server is killed with SIGKILL in the middle of an insert and of a refresh, and
 * restarted each time on the same DATA_DIR. Every table must hold exactly its last
 * acknowledged state, row by row; the latest completed execution must still be the one
 * served, the interrupted one recorded as failed by the restart; the database file must
 * open cleanly in DuckDB itself. (A kill in the middle of a replacing upload, while the body
 * streams in and while DuckDB loads it, is test/cli/crash-recovery.test.ts.)
 */

const dataDir = tempDir('faults-kill-');
let server: ChildService | undefined;
afterAll(() => {
  server?.process.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

interface LedgerRow {
  id: number;
  account: string;
  amount: string;
}

function ledgerRows(from: number, count: number): LedgerRow[] {
  return Array.from({ length: count }, (_, i) => ({
    id: from + i,
    account: `acct-${(from + i) % 97}`,
    amount: `${from + i}${'0'.repeat(30)}`,
  }));
}

const csvOf = (rows: readonly LedgerRow[]) =>
  `id,account,amount\n${rows.map((r) => `${r.id},${r.account},${r.amount}`).join('\n')}\n`;

const SNAPSHOT_CSV = 'id,label\n1,first\n2,second\n1500,middle\n';

describe('a server killed during writes and refreshes', () => {
  it('keeps every table at its last acknowledged state and serves the last completed execution', async () => {
    server = await startServer(dataDir);
    const json = 'application/json';
    const acked: LedgerRow[] = [];

    await acknowledged(server, '/v1/table/upload/csv', {
      method: 'POST',
      type: json,
      body: JSON.stringify({ table_name: 'snapshot', data: SNAPSHOT_CSV }),
    });
    await acknowledged(server, '/v1/table/upload/csv', {
      method: 'POST',
      type: json,
      body: JSON.stringify({ table_name: 'spin', data: 'spin\n0\n' }),
    });
    await acknowledged(
      server,
      '/v1/table/create',
      {
        method: 'POST',
        type: json,
        body: JSON.stringify({
          namespace: 'alice',
          table_name: 'ledger',
          schema: [
            { name: 'id', type: 'bigint', nullable: false },
            { name: 'account', type: 'varchar' },
            { name: 'amount', type: 'int256' },
          ],
        }),
      },
      201,
    );
    for (const batch of [ledgerRows(1, 1000), ledgerRows(1001, 1000)]) {
      await acknowledged(server, '/v1/table/alice/ledger/insert', {
        method: 'POST',
        type: 'text/csv',
        body: csvOf(batch),
      });
      acked.push(...batch);
    }
    const execute = async () => {
      const { execution_id: id } = await acknowledged(server as ChildService, '/v1/query/2001/execute', {
        method: 'POST',
      });
      return String(id);
    };
    const first = await execute();
    expect((await waitForState(server, first, ['QUERY_STATE_COMPLETED', 'QUERY_STATE_FAILED'])).state).toBe(
      'QUERY_STATE_COMPLETED',
    );
    const third = ledgerRows(2001, 500);
    await acknowledged(server, '/v1/table/alice/ledger/insert', {
      method: 'POST',
      type: 'text/csv',
      body: csvOf(third),
    });
    acked.push(...third);
    const completed = await execute();
    expect(
      (await waitForState(server, completed, ['QUERY_STATE_COMPLETED', 'QUERY_STATE_FAILED'])).state,
    ).toBe('QUERY_STATE_COMPLETED');
    const servedBefore = await call<{ execution_id: string; result: { rows: unknown[] } }>(
      server,
      '/v1/query/2001/results',
    );
    expect(servedBefore.body.execution_id).toBe(completed);
    expect(servedBefore.body.result.rows).toHaveLength(acked.length);

    // 1. Killed during an insert of 600,000 rows, once the body is whole and DuckDB is writing.
    const big = Buffer.from(csvOf(ledgerRows(10_000, 600_000)));
    const insert = await killWhenReceived(server, dataDir, {
      path: '/v1/table/alice/ledger/insert',
      type: 'text/csv',
      body: big,
      filePrefix: 'insert-',
      expectedFileBytes: big.length,
    });
    expect(insert.answered).toBe(false);
    expect(await server.exited).toBe('SIGKILL');

    server = await startServer(dataDir);
    const tables = await call<{ tables: { table_name: string; row_count: number }[] }>(server, '/v1/tables');
    expect(Object.fromEntries(tables.body.tables.map((t) => [t.table_name, t.row_count]))).toEqual({
      dataset_snapshot: 3,
      dataset_spin: 1,
      ledger: acked.length,
    });
    expect(fs.readdirSync(`${dataDir}/tmp`)).toEqual([]);

    // 2. Killed during a refresh that is running (the query spins on a large range first).
    await acknowledged(server, '/v1/table/upload/csv', {
      method: 'POST',
      type: json,
      body: JSON.stringify({ table_name: 'spin', data: 'spin\n1000000000000\n' }),
    });
    const interrupted = await execute();
    await waitForState(server, interrupted, ['QUERY_STATE_EXECUTING']);
    await new Promise((r) => setTimeout(r, 200));
    server.process.kill('SIGKILL');
    expect(await server.exited).toBe('SIGKILL');

    server = await startServer(dataDir);
    const served = await call<{
      execution_id: string;
      state: string;
      result: { rows: Record<string, unknown>[] };
    }>(server, '/v1/query/2001/results');
    expect(served.status).toBe(200);
    expect(served.body.execution_id).toBe(completed);
    expect(served.body.state).toBe('QUERY_STATE_COMPLETED');
    expect(served.body.result.rows).toEqual(servedBefore.body.result.rows);
    const status = await call<{ state: string; error?: { type: string } }>(
      server,
      `/v1/execution/${interrupted}/status`,
    );
    expect(status.body.state).toBe('QUERY_STATE_FAILED');
    expect(status.body.error?.type).toBe('FAILED_TYPE_SERVICE_RESTARTED');

    server.process.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    server = undefined;

    // The file opens cleanly in DuckDB itself and holds exactly the acknowledged rows.
    await withDatabaseFile(dataDir, async (query) => {
      const ledger = await query(
        'SELECT id, account, amount::VARCHAR AS amount FROM alice.ledger ORDER BY id',
      );
      expect(ledger.map((r) => ({ id: Number(r.id), account: r.account, amount: r.amount }))).toEqual(acked);
      expect(await query('SELECT id, label FROM alice.dataset_snapshot ORDER BY id')).toEqual([
        { id: 1n, label: 'first' },
        { id: 2n, label: 'second' },
        { id: 1500n, label: 'middle' },
      ]);
      expect(await query('SELECT spin FROM alice.dataset_spin')).toEqual([{ spin: 1000000000000n }]);
      const catalog = await query('SELECT table_name, row_count FROM _service.tables ORDER BY table_name');
      expect(catalog).toEqual([
        { table_name: 'dataset_snapshot', row_count: 3n },
        { table_name: 'dataset_spin', row_count: 1n },
        { table_name: 'ledger', row_count: BigInt(acked.length) },
      ]);
      // The interrupted run left no snapshot behind; the completed ones are whole.
      const snapshots = await query(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = '_results' ORDER BY table_name",
      );
      expect(snapshots.map((s) => s.table_name)).toEqual([
        `e_${first.toLowerCase()}`,
        `e_${completed.toLowerCase()}`,
      ]);
      const [count] = await query(`SELECT count(*) AS n FROM _results.e_${completed.toLowerCase()}`);
      expect(count?.n).toBe(BigInt(acked.length));
      await query('CHECKPOINT');
    });
  }, 120_000);
});
