import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoSummary, loadDemoData } from '../../src/demo/demo-data.js';
import { RESTAKING_NAMESPACE, SOURCE_TABLES } from '../../src/demo/source-tables.js';
import { DEMO_STRATEGIES, TOKENS } from '../../src/demo/strategies.js';
import { Database } from '../../src/storage/database.js';
import { migrate } from '../../src/storage/service-schema.js';
import { qualifiedName } from '../../src/storage/sql.js';
import { findTable } from '../../src/tables/table-catalog.js';
import { runAvsMetrics, TOKEN_COLUMNS } from '../metrics/support/avs-metrics.js';

async function openDatabase(): Promise<Database> {
  const database = await Database.open({ path: ':memory:' });
  await migrate(database);
  return database;
}

/** Per table: row count and a hash over every row and its rowid (so order counts too). */
async function fingerprint(database: Database): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const source of SOURCE_TABLES) {
    const [row] = await database.read((session) =>
      session.all<{ n: bigint; h: bigint | null }>(
        `SELECT count(*) AS n, sum(hash(rowid, t)) AS h FROM ${qualifiedName(RESTAKING_NAMESPACE, source.name)} t`,
      ),
    );
    result[source.name] = `${row?.n}:${row?.h}`;
  }
  return result;
}

async function scalar(database: Database, sql: string): Promise<number> {
  const [row] = await database.read((session) => session.all<{ v: bigint | number }>(sql));
  return Number(row?.v);
}

const table = (name: string) => qualifiedName(RESTAKING_NAMESPACE, name);

describe('demo data', () => {
  let database: Database;
  let summary: DemoSummary;
  const progress: [number, number, string][] = [];

  beforeAll(async () => {
    database = await openDatabase();
    summary = await loadDemoData(database, {
      scale: 1,
      onProgress: (done, total, stage) => progress.push([done, total, stage]),
    });
  });
  afterAll(async () => {
    await database.close();
  });

  it('has the same content on every load of a scale', async () => {
    const first = await fingerprint(database);
    await loadDemoData(database, { scale: 1 });
    expect(await fingerprint(database)).toEqual(first);

    const other = await openDatabase();
    try {
      await loadDemoData(other, { scale: 1 });
      expect(await fingerprint(other)).toEqual(first);
    } finally {
      await other.close();
    }
  });

  it('has dozens of AVSs, hundreds of operators, ten thousand stakers at scale 1', async () => {
    // Pinned: a change here changes every demo result (and the benchmarks).
    expect(summary).toEqual({
      scale: 1,
      operators: 300,
      stakers: 10_000,
      rows: {
        avs: 40,
        operator_avs_registrations: 1550,
        staker_delegations: 14760,
        operator_share_changes: 24513,
        strategies: 13,
      },
    });
    expect(
      await scalar(database, `SELECT count(DISTINCT staker) AS v FROM ${table('staker_delegations')}`),
    ).toBe(10_000);
    expect(
      await scalar(
        database,
        `SELECT count(DISTINCT operator) AS v FROM ${table('operator_avs_registrations')}`,
      ),
    ).toBe(300);
  });

  it('grows linearly with the scale', async () => {
    const other = await openDatabase();
    try {
      const double = await loadDemoData(other, { scale: 2 });
      expect(double.rows.avs).toBe(80);
      expect(double.rows.strategies).toBe(13);
      expect(double.operators).toBe(600);
      expect(double.stakers).toBe(20_000);
      for (const name of [
        'operator_avs_registrations',
        'staker_delegations',
        'operator_share_changes',
      ] as const) {
        const ratio = double.rows[name] / summary.rows[name];
        expect(ratio, name).toBeGreaterThan(1.9);
        expect(ratio, name).toBeLessThan(2.1);
      }
    } finally {
      await other.close();
    }
  });

  it('declares the source tables with DESIGN §6 types and records them in the catalog', async () => {
    const columns = await database.read((session) =>
      session.all<{ table_name: string; column_name: string; data_type: string }>(
        `SELECT table_name, column_name, data_type FROM duckdb_columns()
          WHERE schema_name = 'restaking' ORDER BY table_name, column_index`,
      ),
    );
    const shape = (name: string) =>
      columns.filter((c) => c.table_name === name).map((c) => `${c.column_name} ${c.data_type}`);
    expect(shape('avs')).toEqual(['avs_contract_address VARCHAR', 'avs_name VARCHAR']);
    expect(shape('operator_avs_registrations')).toEqual([
      'block_number BIGINT',
      'log_index INTEGER',
      'operator VARCHAR',
      'avs_contract_address VARCHAR',
      'status INTEGER',
    ]);
    expect(shape('staker_delegations')).toEqual([
      'block_number BIGINT',
      'log_index INTEGER',
      'staker VARCHAR',
      'operator VARCHAR',
      'delegated BOOLEAN',
    ]);
    expect(shape('operator_share_changes')).toEqual([
      'block_number BIGINT',
      'log_index INTEGER',
      'operator VARCHAR',
      'staker VARCHAR',
      'strategy VARCHAR',
      'shares_delta BIGNUM',
    ]);
    expect(shape('strategies')).toEqual(['strategy VARCHAR', 'token VARCHAR', 'shares_to_underlying DOUBLE']);

    const record = await database.read((session) =>
      findTable(session, RESTAKING_NAMESPACE, 'operator_share_changes'),
    );
    expect(record).toMatchObject({ isPrivate: false, rowCount: summary.rows.operator_share_changes });
    expect(record?.description).not.toBe('');
    expect(record?.sizeBytes).toBeGreaterThan(0);
    expect(record?.declaredColumns?.map((c) => c.type)).toEqual([
      'bigint',
      'integer',
      'varchar',
      'varchar',
      'varchar',
      'int256',
    ]);
    for (const source of SOURCE_TABLES) {
      const saved = await database.read((session) => findTable(session, RESTAKING_NAMESPACE, source.name));
      expect(saved?.rowCount, source.name).toBe(summary.rows[source.name]);
    }
  });

  it('tells a realistic story: real strategies, lowercase addresses, every kind of event', async () => {
    const strategies = await database.read((session) =>
      session.all<{ strategy: string; token: string; shares_to_underlying: number }>(
        `SELECT * FROM ${table('strategies')} ORDER BY rowid`,
      ),
    );
    expect(strategies.map((s) => s.token)).toEqual([...TOKENS]);
    expect(strategies.map((s) => s.strategy)).toEqual(DEMO_STRATEGIES.map((s) => s.strategy));
    expect(strategies.find((s) => s.token === 'beacon_chain_ETH')?.shares_to_underlying).toBe(1);
    expect(strategies.filter((s) => s.shares_to_underlying > 1).length).toBeGreaterThanOrEqual(10);

    const badAddresses = await scalar(
      database,
      `SELECT count(*) AS v FROM (
         SELECT avs_contract_address AS a FROM ${table('avs')}
         UNION ALL SELECT operator FROM ${table('operator_avs_registrations')}
         UNION ALL SELECT staker FROM ${table('staker_delegations')}
         UNION ALL SELECT strategy FROM ${table('operator_share_changes')}
       ) WHERE NOT regexp_full_match(a, '0x[0-9a-f]{40}')`,
    );
    expect(badAddresses).toBe(0);
    expect(
      await scalar(
        database,
        `SELECT count(*) AS v FROM ${table('avs')}
          WHERE avs_contract_address = '0x870679e138bcdf293b7ff14dd44b70fc97e12fc0' AND avs_name = 'EigenDA'`,
      ),
    ).toBe(1);

    const counts = {
      deregistrations: `SELECT count(*) AS v FROM ${table('operator_avs_registrations')} WHERE status = 0`,
      reRegistrations: `SELECT count(*) AS v FROM (SELECT operator, avs_contract_address FROM ${table('operator_avs_registrations')}
         GROUP BY ALL HAVING count(*) FILTER (WHERE status = 1) > 1)`,
      sameBlockRotations: `SELECT count(*) AS v FROM (SELECT operator, avs_contract_address, block_number
         FROM ${table('operator_avs_registrations')} GROUP BY ALL HAVING count(*) > 1)`,
      undelegations: `SELECT count(*) AS v FROM ${table('staker_delegations')} WHERE NOT delegated`,
      reDelegations: `SELECT count(*) AS v FROM (SELECT staker FROM ${table('staker_delegations')}
         GROUP BY staker HAVING count(DISTINCT operator) > 1)`,
      withdrawals: `SELECT count(*) AS v FROM ${table('operator_share_changes')} WHERE shares_delta < 0`,
      beyond2pow64: `SELECT count(*) AS v FROM ${table('operator_share_changes')}
         WHERE shares_delta > '18446744073709551616'::BIGNUM`,
      nettingToZero: `SELECT count(*) AS v FROM (SELECT operator, staker, strategy FROM ${table('operator_share_changes')}
         GROUP BY ALL HAVING sum(shares_delta) = 0)`,
      unlisted: `SELECT count(*) AS v FROM ${table('operator_share_changes')}
         WHERE strategy NOT IN (SELECT strategy FROM ${table('strategies')})`,
    };
    for (const [name, sql] of Object.entries(counts)) {
      expect(await scalar(database, sql), name).toBeGreaterThan(0);
    }
    // Wei-like magnitudes: deposits from 1e15 up to 1e22 (native restaking in 32 ETH steps).
    const [range] = await database.read((session) =>
      session.all<{ smallest: number; largest: number }>(
        `SELECT min(shares_delta::DOUBLE) AS smallest, max(shares_delta::DOUBLE) AS largest
           FROM ${table('operator_share_changes')} WHERE shares_delta > 0`,
      ),
    );
    expect(range?.smallest).toBeGreaterThanOrEqual(1e14);
    expect(range?.largest).toBeLessThanOrEqual(1e22);
    expect(range?.largest).toBeGreaterThan(1e21);
  });

  it('gives the metrics query one non-trivial row per AVS', async () => {
    const { rows } = await runAvsMetrics(database);
    expect(rows).toHaveLength(40);
    expect(new Set(rows.map((r) => r.avs_contract_address)).size).toBe(40);
    expect(rows.every((r) => (r.num_operators as bigint) > 0n)).toBe(true);
    expect(rows.filter((r) => (r.num_stakers as bigint) > 0n).length).toBeGreaterThan(30);
    expect(rows.every((r) => (r.total_TVL as number) > 0)).toBe(true);
    const positiveColumns = TOKEN_COLUMNS.filter((column) => rows.some((r) => (r[column] as number) > 0));
    expect(positiveColumns.length).toBe(TOKEN_COLUMNS.length);
    const eigenDa = rows.find((r) => r.avs_name === 'EigenDA');
    expect(eigenDa?.avs_contract_address).toBe('0x870679e138bcdf293b7ff14dd44b70fc97e12fc0');
    const totals = rows.map((r) => r.total_TVL as number);
    expect(totals).toEqual([...totals].sort((a, b) => b - a));
  });

  it('reports progress step by step and ends with done', () => {
    expect(progress[0]).toEqual([0, progress[0]?.[1], 'tables']);
    expect(progress.at(-1)).toEqual([progress.length - 1, progress.length - 1, 'done']);
    expect(progress.map(([done]) => done)).toEqual(progress.map((_, i) => i));
  });

  it('refuses a scale that is not a positive whole number', async () => {
    for (const scale of [0, -1, 1.5, Number.NaN, 1_000_000]) {
      await expect(loadDemoData(database, { scale }), String(scale)).rejects.toThrow(RangeError);
    }
  });
});
