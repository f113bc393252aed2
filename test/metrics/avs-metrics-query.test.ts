import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/storage/database.js';
import {
  AVS_METRICS_FILE,
  createSourceTables,
  insertRows,
  METRICS_COLUMNS,
  type MetricsRow,
  runAvsMetrics,
  TOKEN_COLUMNS,
} from './support/avs-metrics.js';

/**
 * The AVS metrics query (queries/3693850-avs-metrics.sql) over small hand-made event logs,
 * against the expected metrics worked out by hand from DESIGN.md §6.
 */

const address = (tag: string) => `0x${tag.padStart(40, '0')}`;

const AVS_X = address('a1');
const AVS_Y = address('b2');
const AVS_W = address('c3');
const AVS_V = address('d4');
const AVS_Z = address('e5');

const [OP1, OP2, OP3, OP4, OP5, OP6] = ['f1', 'f2', 'f3', 'f4', 'f5', 'f6'].map(address) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const STAKERS = Array.from({ length: 14 }, (_, i) => address(`5${String(i).padStart(3, '0')}`));
const staker = (n: number) => STAKERS[n] as string;

const CBETH = '0x54945180db7943c0ed0fee7edab2bd24620256bc';
const STETH = '0x93c4b944d05dfe6df7645a86cd2206016c51564d';
const RETH = '0x1bee69b7dfffa4e2d53c2a2df135c388ad25dcd2';
const BEACON = '0xbeac0eeeeeeeeeeeeeeeeeeeeeeeeeeeeeebeac0';
const UNLISTED = '0x6c3ee4d1b9a2f0e8d7c5b4a3928170f6e5d4c3b2';

const E18 = 10n ** 18n;
const wei = (value: bigint) => value.toString();

const zeroTokens = Object.fromEntries(TOKEN_COLUMNS.map((column) => [column, 0])) as Record<
  (typeof TOKEN_COLUMNS)[number],
  number
>;

describe('AVS metrics query: hand-made event log', () => {
  let database: Database;
  let rows: MetricsRow[];
  let columns: { name: string; type: string }[];

  beforeAll(async () => {
    database = await Database.open({ path: ':memory:' });
    await createSourceTables(database);
    await database.write(async (session) => {
      // Z is listed twice (its later name wins) and before V, so that the row order cannot
      // come from insertion order.
      await insertRows(session, 'avs', [
        [AVS_X, 'Xenon DA'],
        [AVS_Y, 'Yarrow Oracle'],
        [AVS_W, 'Wisp Relay'],
        [AVS_Z, 'Old Zinc'],
        [AVS_Z, 'Zinc Bridge'],
        [AVS_V, 'Vale Keeper'],
      ]);
      // rETH is listed twice: its later rate (1.25) applies. cbETH's rate is not 1.
      await insertRows(session, 'strategies', [
        [CBETH, 'cbETH', 1.5],
        [STETH, 'stETH', 1.0],
        [RETH, 'rETH', 2.0],
        [BEACON, 'beacon_chain_ETH', 1.0],
        [RETH, 'rETH', 1.25],
      ]);
      // Listed in insertion order; rowid (the last tie-breaker) follows it.
      await insertRows(session, 'operator_avs_registrations', [
        [10, 0, OP1, AVS_X, 1],
        [10, 1, OP2, AVS_X, 1],
        [10, 2, OP3, AVS_X, 1],
        [5, 0, OP1, AVS_Y, 1],
        [15, 0, OP2, AVS_Y, 1],
        [20, 0, OP2, AVS_X, 0], // OP2 leaves X...
        [25, 0, OP2, AVS_Y, 0], // ...and Y for good,
        [30, 0, OP2, AVS_X, 1], // but registers with X again: registered.
        [40, 7, OP3, AVS_X, 0], // OP3 deregisters at log 7 of block 40; the registration
        [40, 2, OP3, AVS_X, 1], // at log 2 of that block, inserted later, is older: not registered.
        [45, 0, OP4, AVS_X, 1],
        [50, 8, OP4, AVS_X, 1], // OP4 registers again at log 8; the deregistration at log 3
        [50, 3, OP4, AVS_X, 0], // of the same block, inserted later, is older: registered.
        [60, 1, OP5, AVS_W, 0], // Exact ties: the row inserted later wins,
        [60, 1, OP5, AVS_W, 1], // OP5 registered with W,
        [60, 1, OP6, AVS_W, 1],
        [60, 1, OP6, AVS_W, 0], // OP6 not.
        [70, 0, OP3, AVS_Z, 0], // A lone deregistration: Z has no operators.
      ]);
      await insertRows(session, 'staker_delegations', [
        [100, 0, staker(1), OP1, true],
        [100, 1, staker(2), OP1, true],
        [100, 2, staker(3), OP1, true],
        [100, 3, staker(4), OP2, true],
        [100, 4, staker(5), OP4, true],
        [100, 5, staker(6), OP1, true],
        [100, 6, staker(7), OP2, true],
        [100, 7, staker(8), OP5, true],
        [100, 8, staker(10), OP3, true],
        [100, 9, staker(11), OP6, true],
        [100, 10, staker(12), OP1, true],
        [110, 0, staker(9), OP5, true], // An exact tie: the later undelegation wins.
        [110, 0, staker(9), OP5, false],
        [150, 0, staker(12), OP1, false], // S12 undelegates and keeps its shares with OP1.
        [200, 0, staker(2), OP1, false], // S2 undelegates from OP1...
        [300, 0, staker(2), OP2, true], // ...and re-delegates to OP2.
        [100, 11, staker(13), OP1, true],
        [120, 0, staker(13), OP1, false], // S13 moves to OP4 but its shares stay with OP1.
        [130, 0, staker(13), OP4, true],
      ]);
      await insertRows(session, 'operator_share_changes', [
        [101, 0, OP1, staker(1), STETH, wei(2n * E18)],
        [102, 0, OP1, staker(1), STETH, wei(-5n * 10n ** 17n)], // S1: 1.5 stETH with OP1
        [106, 0, OP1, staker(1), RETH, wei(4n * E18)], // and 4 rETH shares.
        [101, 1, OP1, staker(2), STETH, wei(E18)],
        [200, 1, OP1, staker(2), STETH, wei(-E18)], // S2's shares leave OP1 with the undelegation
        [300, 1, OP2, staker(2), STETH, wei(E18)], // and arrive at OP2.
        [101, 2, OP1, staker(3), CBETH, wei(5n * E18)],
        [103, 0, OP1, staker(3), CBETH, wei(-5n * E18)], // S3 nets to zero.
        [101, 3, OP2, staker(4), UNLISTED, wei(7n * E18)], // S4 holds only an unlisted strategy.
        // S5: intermediate values beyond 2^128 that net to exactly 64 beacon-chain ETH; as
        // doubles, 3·2^128 − 64e18 rounds to 3·2^128 and the net would be 0.
        [101, 4, OP4, staker(5), BEACON, wei(3n * 2n ** 128n)],
        [104, 0, OP4, staker(5), BEACON, wei(-(3n * 2n ** 128n - 64n * E18))],
        // S6: 2^64 + 1 then −2^64 nets to 1 wei (as doubles: 0), positive, so S6 counts.
        [101, 5, OP1, staker(6), CBETH, wei(2n ** 64n + 1n)],
        [105, 0, OP1, staker(6), CBETH, wei(-(2n ** 64n))],
        [101, 6, OP2, staker(7), CBETH, wei(4n * E18)],
        [101, 7, OP5, staker(8), STETH, wei(10n * E18)],
        [111, 0, OP5, staker(9), STETH, wei(2n * E18)],
        [101, 8, OP3, staker(10), STETH, wei(9n * E18)], // OP3 is registered nowhere.
        [101, 9, OP6, staker(11), STETH, wei(6n * E18)], // OP6 neither.
        [101, 10, OP1, staker(12), STETH, wei(3n * E18)],
        [101, 11, OP1, staker(13), STETH, wei(2n * E18)],
      ]);
    });
    const run = await runAvsMetrics(database);
    rows = run.rows;
    columns = run.result.columns;
  });

  afterAll(async () => {
    await database.close();
  });

  const row = (avs: string) => {
    const found = rows.find((r) => r.avs_contract_address === avs);
    if (!found) throw new Error(`no row for ${avs}`);
    return found;
  };

  it('has the spec’s columns, in its order, with its types', () => {
    expect(columns.map((c) => c.name)).toEqual([...METRICS_COLUMNS]);
    expect(columns.map((c) => c.type)).toEqual([
      'VARCHAR',
      'VARCHAR',
      'BIGINT',
      'DOUBLE',
      'BIGINT',
      ...TOKEN_COLUMNS.map(() => 'DOUBLE'),
    ]);
  });

  it('gives one row per AVS, ordered by total_TVL descending, then address', () => {
    // X 82.5, W 12, Y 11.5, then V and Z with 0, V's address being the smaller.
    expect(rows.map((r) => r.avs_contract_address)).toEqual([AVS_X, AVS_W, AVS_Y, AVS_V, AVS_Z]);
  });

  it('counts registrations by their latest event: re-registration, same block, exact tie', () => {
    // X: OP1; OP2 (deregistered, registered again); OP4 (log 8 after log 3 in block 50).
    // Not OP3 (log 7 deregistration after the log 2 registration in block 40).
    expect(row(AVS_X).num_operators).toBe(3n);
    // Y: OP1 only; OP2 left at block 25.
    expect(row(AVS_Y).num_operators).toBe(1n);
    // W: OP5 (the later-inserted of two tied rows says registered); OP6's says deregistered.
    expect(row(AVS_W).num_operators).toBe(1n);
  });

  it('computes the value locked per token exactly, then in token units', () => {
    expect(row(AVS_X)).toMatchObject({
      // OP1 + OP2 + OP4. cbETH: S3 0 + S6 1 wei + S7 4e18 = 4e18 + 1 shares, exactly; as a
      // double 4e18; times 1.5, over 1e18: 6.
      cbETH_TVL: 6,
      // stETH: OP1 (S1 1.5e18 + S2 0 + S12 3e18 + S13 2e18, S12's and S13's staying with
      // OP1 though they undelegated) + OP2 (S2 1e18) = 7.5e18 → 7.5. OP3's and OP6's stETH
      // do not count.
      stETH_TVL: 7.5,
      // rETH: 4e18 shares at the later-listed rate 1.25 → 5.
      rETH_TVL: 5,
      // beacon chain: S5's 3·2^128 − (3·2^128 − 64e18) = 64e18 → 64.
      beacon_chain_ETH_TVL: 64,
      // 6 + 7.5 + 5 + 64; the unlisted strategy's 7e18 shares count nowhere.
      total_TVL: 82.5,
    });
    expect(row(AVS_Y)).toMatchObject({
      // OP1 only: cbETH 1 wei × 1.5 / 1e18.
      cbETH_TVL: 1.5e-18,
      stETH_TVL: 6.5, // S1 1.5e18 + S12 3e18 + S13 2e18
      rETH_TVL: 5,
      beacon_chain_ETH_TVL: 0,
      // 1.5e-18 + 6.5 rounds to 6.5; + 5.
      total_TVL: 11.5,
    });
    expect(row(AVS_W)).toMatchObject({
      // OP5: S8 10e18 + S9 2e18 (S9 undelegated, its shares stay with OP5).
      stETH_TVL: 12,
      total_TVL: 12,
    });
    for (const avs of [AVS_X, AVS_Y, AVS_W]) {
      for (const column of ['ETHx_TVL', 'ankrETH_TVL', 'OETH_TVL', 'osETH_TVL', 'mETH_TVL'] as const) {
        expect(row(avs)[column]).toBe(0);
      }
    }
    expect(row(AVS_W).cbETH_TVL).toBe(0);
  });

  it('counts stakers delegated to a registered operator with positive shares there', () => {
    // X: S1 (OP1), S2 (re-delegated to OP2, positive there), S5 (OP4, 64e18 after the
    // 2^128-sized changes), S6 (OP1, 1 wei), S7 (OP2). Not S3 (nets to zero), S4 (only an
    // unlisted strategy), S12 (undelegated), S13 (delegated to OP4 but positive only with
    // OP1), S10/S11 (operators not registered).
    expect(row(AVS_X).num_stakers).toBe(5n);
    // Y: OP1's S1 and S6; S2 has moved to OP2, which left Y.
    expect(row(AVS_Y).num_stakers).toBe(2n);
    // W: S8; S9's tied delegation rows end undelegated (the later-inserted row wins).
    expect(row(AVS_W).num_stakers).toBe(1n);
  });

  it('gives an AVS without operators zeros, not NULLs, and the later of two names', () => {
    const expected = { num_operators: 0n, num_stakers: 0n, total_TVL: 0, ...zeroTokens };
    expect(row(AVS_Z)).toEqual({ avs_name: 'Zinc Bridge', avs_contract_address: AVS_Z, ...expected });
    expect(row(AVS_V)).toEqual({ avs_name: 'Vale Keeper', avs_contract_address: AVS_V, ...expected });
  });
});

describe('AVS metrics query: arithmetic details', () => {
  let database: Database;

  beforeAll(async () => {
    database = await Database.open({ path: ':memory:' });
  });
  afterAll(async () => {
    await database.close();
  });

  it('adds the token columns left to right in the spec’s order for total_TVL', async () => {
    await createSourceTables(database);
    await database.write(async (session) => {
      await insertRows(session, 'avs', [[AVS_X, 'Xenon DA']]);
      await insertRows(session, 'strategies', [
        [CBETH, 'cbETH', 1.0],
        [STETH, 'stETH', 1.0],
        [RETH, 'rETH', 1.0],
        [BEACON, 'beacon_chain_ETH', 1.0],
      ]);
      await insertRows(session, 'operator_avs_registrations', [[1, 0, OP1, AVS_X, 1]]);
      await insertRows(session, 'staker_delegations', [[2, 0, staker(1), OP1, true]]);
      await insertRows(session, 'operator_share_changes', [
        [3, 0, OP1, staker(1), CBETH, wei(2n ** 53n * E18)],
        [3, 1, OP1, staker(1), STETH, wei(E18)],
        [3, 2, OP1, staker(1), RETH, wei(E18)],
        [3, 3, OP1, staker(1), BEACON, wei(E18)],
      ]);
    });
    const { rows } = await runAvsMetrics(database);
    expect(rows[0]).toMatchObject({ cbETH_TVL: 2 ** 53, stETH_TVL: 1, rETH_TVL: 1, beacon_chain_ETH_TVL: 1 });
    // cbETH + stETH = 2^53 + 1 rounds to 2^53 (ties to even), and so does each further + 1.
    // Adding the small columns first (1 + 1 + 1 + 2^53) would give 2^53 + 4.
    expect(rows[0]?.total_TVL).toBe(9007199254740992);
  });

  it('sums int256 shares exactly across stakers and operators (beyond 2^64 and 2^128)', async () => {
    await createSourceTables(database);
    await database.write(async (session) => {
      await insertRows(session, 'avs', [[AVS_X, 'Xenon DA']]);
      await insertRows(session, 'strategies', [[STETH, 'stETH', 1.0]]);
      await insertRows(session, 'operator_avs_registrations', [
        [1, 0, OP1, AVS_X, 1],
        [1, 1, OP2, AVS_X, 1],
      ]);
      await insertRows(session, 'staker_delegations', [
        [2, 0, staker(1), OP1, true],
        [2, 1, staker(2), OP2, true],
      ]);
      // Near the int256 limits: per operator 2^254 + 1e18 and −2^254 + 2e18, together 3e18.
      // Summed as doubles, each operator's net rounds to ±2^254 and the total to 0.
      await insertRows(session, 'operator_share_changes', [
        [3, 0, OP1, staker(1), STETH, wei(2n ** 254n)],
        [3, 1, OP1, staker(1), STETH, wei(E18)],
        [3, 2, OP2, staker(2), STETH, wei(-(2n ** 254n))],
        [3, 3, OP2, staker(2), STETH, wei(2n * E18)],
      ]);
    });
    const { rows } = await runAvsMetrics(database);
    // OP1 + OP2 = 3e18 shares → 3 stETH. S1 is positive with OP1 (2^254 + 1e18); S2 is
    // negative with OP2 (−2^254 + 2e18), so it does not count.
    expect(rows[0]).toMatchObject({ stETH_TVL: 3, total_TVL: 3, num_stakers: 1n, num_operators: 2n });
  });

  it('is read from the saved-query file with the header the executions engine expects', () => {
    const lines = fs.readFileSync(AVS_METRICS_FILE, 'utf8').split('\n');
    expect(lines.slice(0, 4)).toEqual([
      '-- id: 3693850',
      '-- name: AVS metrics',
      '-- description: Per AVS: registered operators, their stakers and the value locked per strategy token.',
      '-- refresh_seconds: default',
    ]);
  });
});
