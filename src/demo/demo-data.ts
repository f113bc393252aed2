import type { Database, Session } from '../storage/database.js';
import { qualifiedName } from '../storage/sql.js';
import { saveTable } from '../tables/table-catalog.js';
import { createDeclaredTable } from '../tables/table-schema.js';
import { dropVersions } from '../tables/table-versions.js';
import {
  BLOCK_RANGE,
  createAvsSql,
  createOperatorsSql,
  demoSizes,
  insertAvsSql,
  insertDelegationsSql,
  insertPositionsSql,
  insertRegistrationsSql,
  insertShareChangesSql,
  insertStakersSql,
  insertStrategiesSql,
  TEMP_TABLES,
} from './event-log-sql.js';
import { RESTAKING_NAMESPACE, SOURCE_TABLES, type SourceTableName } from './source-tables.js';

/**
 * Loads the deterministic demo data set into the `restaking` source tables, replacing
 * what was there. It all happens in one write transaction, so readers (and a metrics run)
 * see the old data or the complete new data, never a half-loaded set.
 */

export const MAX_DEMO_SCALE = 1000;

export interface DemoSummary {
  scale: number;
  operators: number;
  stakers: number;
  /** Rows written per `restaking.*` table. */
  rows: Record<SourceTableName, number>;
}

export interface DemoOptions {
  /** A whole number from 1 to MAX_DEMO_SCALE; the AVS, operators, stakers and their events grow linearly with it. */
  scale: number;
  /**
   * Called before each step with the number of steps done, their total and what runs
   * next, and once more at the end with done = total.
   */
  onProgress?: (done: number, total: number, stage: string) => void;
}

/** Small enough that a step of a large scale takes a few seconds at most. */
const STAKERS_PER_BATCH = 200_000;
/** Share changes are appended in chain order, a slice of blocks at a time. */
const SHARE_CHANGES_PER_BATCH = 1_000_000;
/** About how many share changes a staker produces, to size the block slices. */
const SHARE_CHANGES_PER_STAKER = 2.5;

interface Step {
  stage: string;
  run: (session: Session) => Promise<void>;
}

function slices(start: number, end: number, count: number): [number, number][] {
  const size = Math.ceil((end - start) / count);
  const result: [number, number][] = [];
  for (let from = start; from < end; from += size) result.push([from, Math.min(end, from + size)]);
  return result;
}

export function validateScale(scale: number): void {
  if (!Number.isSafeInteger(scale) || scale < 1 || scale > MAX_DEMO_SCALE) {
    throw new RangeError(`the demo scale must be a whole number from 1 to ${MAX_DEMO_SCALE}, got ${scale}`);
  }
}

async function createSourceTables(session: Session): Promise<void> {
  for (const source of SOURCE_TABLES) {
    await createDeclaredTable(session, RESTAKING_NAMESPACE, source.name, source.columns, { replace: true });
  }
}

/** Drops the load's scratch tables and records each source table in the catalog, counting its rows into `rows`. */
async function catalogSourceTables(session: Session, rows: Record<SourceTableName, number>): Promise<void> {
  for (const name of TEMP_TABLES) await session.run(`DROP TABLE IF EXISTS temp.${name}`);
  const updatedAt = new Date();
  for (const source of SOURCE_TABLES) {
    const [count] = await session.all<{ n: bigint }>(
      `SELECT count(*) AS n FROM ${qualifiedName(RESTAKING_NAMESPACE, source.name)}`,
    );
    const rowCount = Number(count?.n ?? 0);
    rows[source.name] = rowCount;
    // The tables are new: versions of the ones they replace would undo into them.
    await dropVersions(session, { namespace: RESTAKING_NAMESPACE, tableName: source.name });
    await saveTable(session, {
      namespace: RESTAKING_NAMESPACE,
      tableName: source.name,
      description: source.description,
      isPrivate: false,
      updatedAt,
      rowCount,
      sizeBytes: rowCount * source.bytesPerRow,
      declaredColumns: [...source.columns],
    });
  }
}

function steps(scale: number, rows: Record<SourceTableName, number>): Step[] {
  const sizes = demoSizes(scale);
  const stakerBatches = slices(0, sizes.stakers, Math.ceil(sizes.stakers / STAKERS_PER_BATCH));
  const blockBatches = slices(
    BLOCK_RANGE.first,
    BLOCK_RANGE.lastExclusive,
    Math.ceil((sizes.stakers * SHARE_CHANGES_PER_STAKER) / SHARE_CHANGES_PER_BATCH),
  );
  const ofBatch = (name: string, i: number, count: number) =>
    count > 1 ? `${name} ${i + 1}/${count}` : name;
  return [
    { stage: 'tables', run: createSourceTables },
    {
      stage: 'avs',
      run: async (session) => {
        await session.run(createAvsSql(sizes));
        await session.run(insertAvsSql());
      },
    },
    {
      stage: 'strategies',
      run: async (session) => {
        const { sql, params } = insertStrategiesSql();
        await session.run(sql, params);
      },
    },
    {
      stage: 'registrations',
      run: async (session) => {
        await session.run(createOperatorsSql(sizes));
        await session.run(insertRegistrationsSql(sizes));
      },
    },
    ...stakerBatches.map(
      ([from, to], i): Step => ({
        stage: ofBatch('stakers', i, stakerBatches.length),
        run: async (session) => {
          await session.run(insertStakersSql(sizes, from, to, i === 0));
          await session.run(insertPositionsSql(from, to, i === 0));
        },
      }),
    ),
    { stage: 'delegations', run: (session) => session.run(insertDelegationsSql()) },
    ...blockBatches.map(
      ([from, to], i): Step => ({
        stage: ofBatch('share changes', i, blockBatches.length),
        run: (session) => session.run(insertShareChangesSql(from, to)),
      }),
    ),
    { stage: 'catalog', run: (session) => catalogSourceTables(session, rows) },
  ];
}

export async function loadDemoData(database: Database, options: DemoOptions): Promise<DemoSummary> {
  validateScale(options.scale);
  const rows = Object.fromEntries(SOURCE_TABLES.map((source) => [source.name, 0])) as Record<
    SourceTableName,
    number
  >;
  const plan = steps(options.scale, rows);
  const progress = options.onProgress ?? (() => undefined);
  await database.write(async (session) => {
    for (const [i, step] of plan.entries()) {
      progress(i, plan.length, step.stage);
      await step.run(session);
    }
  });
  progress(plan.length, plan.length, 'done');
  const sizes = demoSizes(options.scale);
  return { scale: options.scale, operators: sizes.operators, stakers: sizes.stakers, rows };
}
