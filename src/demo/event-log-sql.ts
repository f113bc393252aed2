import { qualifiedName, quoteLiteral } from '../storage/sql.js';
import { EIGEN_DA, inventedAvsNameSql } from './avs-names.js';
import { RESTAKING_NAMESPACE } from './source-tables.js';
import { DEMO_STRATEGIES, UNLISTED_STRATEGIES } from './strategies.js';

/**
 * The SQL that generates the demo's synthetic event log inside DuckDB. Every random choice
 * is a hash of the entity's index and a fixed salt, never a random number generator, so
 * the same scale gives the same rows on every run, and the rows are produced by set
 * operations over range() instead of one INSERT per row.
 *
 * The story it tells: AVSs launch, operators register with a few of them (popular ones
 * more often) and some deregister, re-register, or rotate keys by deregistering and
 * registering again in the same block. Stakers delegate to operators (large operators
 * attract more), deposit into one to three strategies, sometimes top up or withdraw part,
 * a few withdraw everything, and some undelegate (their shares leave the operator) and
 * re-delegate to another operator (their shares arrive there).
 */

export interface DemoSizes {
  avs: number;
  operators: number;
  stakers: number;
}

/**
 * Entity counts per unit of scale; they and their events grow linearly with the scale (the
 * thirteen strategies do not). Stakers are what the metrics query's cost follows (it groups
 * millions of 42-character addresses), so their number is what keeps scale 100 within the
 * query's time budget.
 */
export function demoSizes(scale: number): DemoSizes {
  return { avs: 40 * scale, operators: 300 * scale, stakers: 10_000 * scale };
}

/** Changing it changes every generated value; the tests pin what it gives. */
const SEED = 3_693_850;

/** Around EigenLayer's mainnet launch; events spread over the following ~2M blocks. */
const FIRST_BLOCK = 19_600_000;

/** Log indexes within a block: a plausible busy block's range. */
const LOGS_PER_BLOCK = 400;

export const TEMP_TABLES = ['demo_avs', 'demo_operators', 'demo_stakers', 'demo_positions'] as const;

const table = (name: string) => qualifiedName(RESTAKING_NAMESPACE, name);

/** A uniform number in [0, 1) drawn from the hash of `keys` (SQL expressions) and a salt. */
function uniform(keys: string, salt: number): string {
  return `((hash(${keys}, ${salt}, ${SEED}) >> 11)::DOUBLE / 9007199254740992.0)`;
}

/** An integer in [0, n) drawn like uniform(). */
function below(keys: string, salt: number, n: number | string): string {
  return `floor(${uniform(keys, salt)} * (${n}))::BIGINT`;
}

/** A log index in a block. */
function logIndex(keys: string, salt: number): string {
  return `${below(keys, salt, LOGS_PER_BLOCK)}::INTEGER`;
}

/** A lowercase 0x address of 40 hex digits, from 160 bits of hashes. */
function address(key: string, salt: number): string {
  return `printf('0x%016x%016x%08x', hash(${key}, ${salt}, 1, ${SEED}), hash(${key}, ${salt}, 2, ${SEED}), hash(${key}, ${salt}, 3, ${SEED}) >> 32)`;
}

/**
 * The strategy a deposit goes to, by popularity, from a uniform `draw` (a column, so that
 * it is hashed once); a small share goes to unlisted ones.
 */
function strategyChoice(draw: string): string {
  const all = [...DEMO_STRATEGIES, ...UNLISTED_STRATEGIES];
  let cumulative = 0;
  const branches = all.slice(0, -1).map((entry) => {
    cumulative += entry.weight;
    return `WHEN ${draw} < ${cumulative.toFixed(6)} THEN ${quoteLiteral(entry.strategy)}`;
  });
  return `CASE ${branches.join(' ')} ELSE ${quoteLiteral(all[all.length - 1]?.strategy ?? '')} END`;
}

const NATIVE_STRATEGY = DEMO_STRATEGIES.find((s) => s.token === 'beacon_chain_ETH')?.strategy ?? '';

/**
 * A deposit in wei-like units (HUGEINT, exact): nine significant digits times a power of
 * ten, between 1e15 and 1e22, each power of ten about e times rarer than the one below
 * (most stakers hold a few ETH, a few hold thousands); native restaking in whole
 * validators of 32 ETH, now and then a staking operation's dozens of them.
 */
function depositAmount(keys: string, salt: number): string {
  const lst = `(100000000 + hash(${keys}, ${salt}, ${SEED}) % 900000000)::HUGEINT
      * (10::DOUBLE ** (7 + least(6, floor(-ln(1 - ${uniform(keys, salt + 1)})))))::HUGEINT`;
  const native = `(32 * (1 + hash(${keys}, ${salt + 2}, ${SEED}) % 4)
      * CASE WHEN ${uniform(keys, salt + 3)} < 0.01 THEN 20 ELSE 1 END)::HUGEINT * 1000000000000000000::HUGEINT`;
  return `CASE WHEN strategy = ${quoteLiteral(NATIVE_STRATEGY)} THEN ${native} ELSE ${lst} END`;
}

export function createAvsSql(sizes: DemoSizes): string {
  return `CREATE OR REPLACE TEMP TABLE demo_avs AS
    SELECT i AS avs_index,
      CASE WHEN i = 0 THEN ${quoteLiteral(EIGEN_DA.address)} ELSE ${address('i', 11)} END AS avs_contract_address,
      CASE WHEN i = 0 THEN ${quoteLiteral(EIGEN_DA.name)} ELSE ${inventedAvsNameSql('i - 1')} END AS avs_name
    FROM range(${sizes.avs}) t(i)`;
}

export function insertAvsSql(): string {
  return `INSERT INTO ${table('avs')} SELECT avs_contract_address, avs_name FROM demo_avs ORDER BY avs_index`;
}

export function insertStrategiesSql(): { sql: string; params: (string | number)[] } {
  return {
    sql: `INSERT INTO ${table('strategies')} VALUES ${DEMO_STRATEGIES.map(() => '(?, ?, ?)').join(', ')}`,
    params: DEMO_STRATEGIES.flatMap((s) => [s.strategy, s.token, s.sharesToUnderlying]),
  };
}

export function createOperatorsSql(sizes: DemoSizes): string {
  return `CREATE OR REPLACE TEMP TABLE demo_operators AS
    SELECT i AS operator_index, ${address('i', 21)} AS operator FROM range(${sizes.operators}) t(i)`;
}

/**
 * Each operator picks one to eight AVSs, skewed towards the first ones (EigenDA is the
 * most popular). A fifth of the registrations end; half of those come back later, and a
 * tenth of those in the same block right after (a key rotation).
 */
export function insertRegistrationsSql(sizes: DemoSizes): string {
  const pair = 'operator_index, avs_index';
  return `INSERT INTO ${table('operator_avs_registrations')}
    WITH slots AS (
      SELECT operator_index, unnest(range(1 + ${below('operator_index', 101, 8)})) AS slot FROM demo_operators
    ), pairs AS (
      SELECT DISTINCT operator_index,
        least(floor(${sizes.avs} * pow(${uniform('operator_index, slot', 102)}, 2.2))::BIGINT, ${sizes.avs - 1}) AS avs_index
      FROM slots
    ), timed AS (
      SELECT operator_index, avs_index,
        ${FIRST_BLOCK} + ${below(pair, 103, 1_200_000)} AS registered_at,
        ${logIndex(pair, 104)} AS registered_log,
        ${uniform(pair, 105)} < 0.2 AS deregisters,
        registered_at + 10000 + ${below(pair, 106, 400_000)} AS deregistered_at,
        ${logIndex(pair, 107)} AS deregistered_log,
        ${uniform(pair, 108)} < 0.5 AS returns,
        ${uniform(pair, 109)} < 0.1 AS rotates_key,
        CASE WHEN rotates_key THEN deregistered_at ELSE deregistered_at + 1 + ${below(pair, 110, 200_000)} END
          AS returned_at,
        CASE WHEN rotates_key THEN deregistered_log + 1 ELSE ${logIndex(pair, 111)} END AS returned_log
      FROM pairs
    ), events AS (
      SELECT registered_at AS block_number, registered_log AS log_index, operator_index, avs_index, 1 AS status
        FROM timed
      UNION ALL
      SELECT deregistered_at, deregistered_log, operator_index, avs_index, 0 FROM timed WHERE deregisters
      UNION ALL
      SELECT returned_at, returned_log, operator_index, avs_index, 1 FROM timed WHERE deregisters AND returns
    )
    SELECT e.block_number, e.log_index, o.operator, a.avs_contract_address, e.status
    FROM events e JOIN demo_operators o USING (operator_index) JOIN demo_avs a USING (avs_index)
    ORDER BY e.block_number, e.log_index, o.operator, a.avs_contract_address`;
}

/**
 * One row per staker in [from, to): whom they delegate to, when, and what happens next.
 * Three in ten undelegate; six in ten of those re-delegate to another operator; one in
 * twenty of the rest withdraw everything while staying delegated.
 */
export function insertStakersSql(sizes: DemoSizes, from: number, to: number, create: boolean): string {
  const head = create ? 'CREATE OR REPLACE TEMP TABLE demo_stakers AS' : 'INSERT INTO demo_stakers';
  return `${head}
    WITH drawn AS (
      SELECT i AS staker_index,
        ${address('i', 31)} AS staker,
        least(floor(${sizes.operators} * pow(${uniform('i', 201)}, 3))::BIGINT, ${sizes.operators - 1}) AS operator_index,
        (operator_index + 1 + floor(${sizes.operators - 1} * pow(${uniform('i', 202)}, 2))::BIGINT) % ${sizes.operators}
          AS next_operator_index,
        ${FIRST_BLOCK} + ${below('i', 203, 1_400_000)} AS delegated_at,
        ${logIndex('i', 204)} AS delegated_log,
        ${uniform('i', 205)} < 0.3 AS undelegates,
        delegated_at + 300000 + ${below('i', 206, 250_000)} AS undelegated_at,
        ${logIndex('i', 207)} AS undelegated_log,
        undelegates AND ${uniform('i', 208)} < 0.6 AS redelegates,
        undelegated_at + 1 + ${below('i', 209, 50_000)} AS redelegated_at,
        ${logIndex('i', 210)} AS redelegated_log,
        NOT undelegates AND ${uniform('i', 211)} < 0.05 AS exits,
        CASE WHEN ${uniform('i', 212)} < 0.82 THEN 1 WHEN ${uniform('i', 212)} < 0.96 THEN 2 ELSE 3 END AS positions
      FROM range(${from}, ${to}) t(i)
    )
    SELECT d.*, o.operator, n.operator AS next_operator
    FROM drawn d
      JOIN demo_operators o ON o.operator_index = d.operator_index
      JOIN demo_operators n ON n.operator_index = d.next_operator_index`;
}

/**
 * One row per staker and strategy position: its deposits, partial withdrawal and net, and
 * when each of its share changes happens: deposits in the months after the delegation,
 * then the withdrawals, then shares leaving with an undelegation (in its block, right
 * after its log) and arriving with the re-delegation.
 */
export function insertPositionsSql(from: number, to: number, create: boolean): string {
  const head = create ? 'CREATE OR REPLACE TEMP TABLE demo_positions AS' : 'INSERT INTO demo_positions';
  const k = 'staker_index, slot';
  return `${head}
    WITH slots AS (
      SELECT *, unnest(range(positions)) AS slot
      FROM demo_stakers WHERE staker_index >= ${from} AND staker_index < ${to}
    ), drawn AS (
      SELECT *, ${uniform(k, 301)} AS strategy_draw FROM slots
    ), amounts AS (
      SELECT *,
        ${strategyChoice('strategy_draw')} AS strategy,
        ${depositAmount(k, 310)} AS first_deposit,
        CASE WHEN ${uniform(k, 302)} < 0.3 THEN ${depositAmount(k, 320)} ELSE 0::HUGEINT END AS second_deposit,
        CASE WHEN ${uniform(k, 303)} < 0.2 THEN first_deposit * (10 + hash(${k}, 304, ${SEED}) % 81) // 100
          ELSE 0::HUGEINT END AS withdrawal
      FROM drawn
    )
    SELECT staker_index, slot, staker, operator, next_operator, strategy,
      first_deposit, second_deposit, withdrawal, first_deposit + second_deposit - withdrawal AS net,
      delegated_at + 1 + ${below(k, 401, 49_999)} AS first_deposit_at, ${logIndex(k, 402)} AS first_deposit_log,
      CASE WHEN second_deposit > 0 THEN delegated_at + 50000 + ${below(k, 403, 100_000)} END AS second_deposit_at,
      ${logIndex(k, 404)} AS second_deposit_log,
      CASE WHEN withdrawal > 0 THEN delegated_at + 150000 + ${below(k, 405, 100_000)} END AS withdrawal_at,
      ${logIndex(k, 406)} AS withdrawal_log,
      CASE WHEN exits THEN delegated_at + 250000 + ${below(k, 407, 50_000)} END AS exit_at,
      ${logIndex(k, 408)} AS exit_log,
      CASE WHEN undelegates THEN undelegated_at END AS undelegated_at,
      undelegated_log + 1 + slot::INTEGER AS undelegated_log,
      CASE WHEN redelegates THEN redelegated_at END AS redelegated_at,
      redelegated_log + 1 + slot::INTEGER AS redelegated_log
    FROM amounts`;
}

export function insertDelegationsSql(): string {
  return `INSERT INTO ${table('staker_delegations')}
    SELECT block_number, log_index, staker, operator, delegated FROM (
      SELECT delegated_at AS block_number, delegated_log AS log_index, staker_index, 0 AS kind, staker, operator,
        true AS delegated
      FROM demo_stakers
      UNION ALL
      SELECT undelegated_at, undelegated_log, staker_index, 1, staker, operator, false FROM demo_stakers WHERE undelegates
      UNION ALL
      SELECT redelegated_at, redelegated_log, staker_index, 2, staker, next_operator, true FROM demo_stakers WHERE redelegates
    ) ORDER BY block_number, log_index, staker_index, kind`;
}

/**
 * The share changes a position makes, as its (block, log index, operator, delta) columns;
 * a position's column is NULL when it makes no such change. The index is the change's kind.
 */
const SHARE_CHANGES = [
  ['first_deposit_at', 'first_deposit_log', 'operator', 'first_deposit'],
  ['second_deposit_at', 'second_deposit_log', 'operator', 'second_deposit'],
  ['withdrawal_at', 'withdrawal_log', 'operator', '-withdrawal'],
  ['exit_at', 'exit_log', 'operator', '-net'],
  ['undelegated_at', 'undelegated_log', 'operator', '-net'],
  ['redelegated_at', 'redelegated_log', 'next_operator', 'net'],
] as const;

/**
 * Appends the share changes of the blocks [fromBlock, toBlock) in chain order, the way an
 * indexer appends them; a slice at a time keeps each sort small.
 */
export function insertShareChangesSql(fromBlock: number, toBlock: number): string {
  const parts = SHARE_CHANGES.map(
    ([at, log, operator, delta], kind) =>
      `SELECT ${at} AS block_number, ${log} AS log_index, staker_index, slot, ${kind} AS kind,
         ${operator} AS operator, staker, strategy, ${delta} AS shares_delta
       FROM demo_positions WHERE ${at} >= ${fromBlock} AND ${at} < ${toBlock}`,
  );
  return `INSERT INTO ${table('operator_share_changes')}
    SELECT block_number, log_index, operator, staker, strategy, shares_delta::BIGNUM
    FROM (${parts.join(' UNION ALL ')})
    ORDER BY block_number, log_index, staker_index, slot, kind`;
}

/** The blocks the generated events fall in: [FIRST_BLOCK, lastBlockExclusive). */
export const BLOCK_RANGE = { first: FIRST_BLOCK, lastExclusive: FIRST_BLOCK + 2_000_001 } as const;
