import { listValue } from '@duckdb/node-api';
import type { Logger } from '../log.js';
import { type Database, DatabaseClosingError, reusable, type Session } from '../storage/database.js';
import { SERVICE_SCHEMA } from '../storage/service-schema.js';
import {
  type Execution,
  type ExecutionState,
  isFinished,
  NO_PARAMETERS,
  OPERATOR,
  type SnapshotColumn,
} from './execution.js';

/**
 * Execution records, kept in memory (every results and status request needs one) and
 * written through to `_service.executions` so they survive a restart. Records are appended,
 * one row per state an execution reaches, with a revision number (0 for PENDING, then 1 and
 * up); the highest revision is the record, whatever order the appends land in. Appending lets
 * a run write its final record on a connection of its own as it is announced (saveAfter),
 * while the writer connection appends others' records: appends never conflict. It also
 * replaced a DELETE + INSERT per state change (3.6 ms against 1.0 ms for an UPDATE, and an
 * append costs what an UPDATE does).
 */

interface ExecutionRow {
  execution_id: string;
  query_id: bigint;
  state: string;
  submitted_at: Date;
  started_at: Date | null;
  ended_at: Date | null;
  cancelled_at: Date | null;
  expires_at: Date | null;
  error_type: string | null;
  error_message: string | null;
  columns: string | null;
  row_count: bigint | null;
  result_bytes: bigint | null;
  owner: string | null;
  parameter_set: string | null;
  reads_private: boolean | null;
  revision: number | null;
}

function fromRow(row: ExecutionRow): Execution {
  return {
    id: row.execution_id,
    queryId: Number(row.query_id),
    // Records written before executions had owners are the scheduler's.
    owner: row.owner ?? OPERATOR,
    parameterSet: row.parameter_set ?? NO_PARAMETERS,
    readsPrivate: row.reads_private ?? false,
    state: row.state as ExecutionState,
    submittedAt: row.submitted_at,
    ...(row.started_at ? { startedAt: row.started_at } : {}),
    ...(row.ended_at ? { endedAt: row.ended_at } : {}),
    ...(row.cancelled_at ? { cancelledAt: row.cancelled_at } : {}),
    ...(row.expires_at ? { expiresAt: row.expires_at } : {}),
    ...(row.error_type ? { error: { type: row.error_type, message: row.error_message ?? '' } } : {}),
    ...(row.columns ? { columns: JSON.parse(row.columns) as SnapshotColumn[] } : {}),
    ...(row.row_count !== null ? { rowCount: Number(row.row_count) } : {}),
    ...(row.result_bytes !== null ? { resultBytes: Number(row.result_bytes) } : {}),
  };
}

const iso = (date: Date | undefined) => (date ? date.toISOString() : null);

const COLUMNS = [
  'execution_id',
  'query_id',
  'state',
  'submitted_at',
  'started_at',
  'ended_at',
  'cancelled_at',
  'expires_at',
  'error_type',
  'error_message',
  'columns',
  'row_count',
  'result_bytes',
  'owner',
  'parameter_set',
  'reads_private',
  'revision',
  'sql_text',
];

/** Kept prepared (`reusable`): every run appends its record, on a dedicated connection the next run reuses. */
const APPEND = reusable(
  `INSERT INTO ${SERVICE_SCHEMA}.executions (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`,
);

export class ExecutionStore {
  private readonly byId = new Map<string, Execution>();
  /** Each query's executions in submission order (ids are monotonic ULIDs). */
  private readonly byQuery = new Map<number, Execution[]>();
  /** Each owner's executions in submission order (for the quotas per key). */
  private readonly byOwner = new Map<string, Execution[]>();
  /** The last revision handed out per execution. */
  private readonly revisions = new Map<string, number>();
  /**
   * The user's SQL of ad-hoc runs not finished yet: written with the final record only (one
   * copy, in a transaction the run commits anyway), never kept in memory after it.
   */
  private readonly texts = new Map<string, string>();
  /** Records being written after their run's announcement (saveAfter), by execution id. */
  private readonly landing = new Map<
    string,
    { row: ReturnType<ExecutionStore['row']>; write: Promise<boolean> }
  >();

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
  ) {}

  async load(): Promise<Execution[]> {
    const rows = await this.database.read((s) =>
      s.all<ExecutionRow>(
        `SELECT * FROM ${SERVICE_SCHEMA}.executions
          QUALIFY row_number() OVER (PARTITION BY execution_id ORDER BY coalesce(revision, 0) DESC) = 1
          ORDER BY execution_id`,
      ),
    );
    for (const row of rows) {
      this.revisions.set(row.execution_id, row.revision ?? 0);
      this.remember(fromRow(row));
    }
    return [...this.byId.values()];
  }

  get(id: string): Execution | undefined {
    return this.byId.get(id);
  }

  all(): Execution[] {
    return [...this.byId.values()];
  }

  /** The query's executions, oldest first. */
  ofQuery(queryId: number): readonly Execution[] {
    return this.byQuery.get(queryId) ?? [];
  }

  /** The owner's executions, oldest first. */
  ofOwner(owner: string): readonly Execution[] {
    return this.byOwner.get(owner) ?? [];
  }

  /** Records the execution's new state; memory changes only once the database has it. */
  async save(execution: Execution): Promise<void> {
    const row = this.row(execution);
    await this.database.write((session) => session.run(APPEND, row));
    this.remember({ ...execution });
  }

  /**
   * Writes a new execution's PENDING record, revision 0: whenever it lands, a record the run
   * wrote (revision 1 and up) stays the latest.
   */
  savePending(execution: Execution): Promise<void> {
    const row = this.row(execution, 0);
    return this.database.write((session) => session.run(APPEND, row));
  }

  /**
   * Writes a finished run's record as the run is announced, on a connection of its own:
   * one INSERT, its own transaction. Not on the writer: every key's uploads and inserts wait
   * in the writer's queue, and a key flooding the service with runs would fill it with their
   * records (another key's one-row inserts took 185 ms at the median instead of 67 while a key
   * at its quota flooded `SELECT 1`, `npm run bench -- quota`, 2026-11-27). A change of the
   * execution that must follow it waits for it (`landed`: a quota's removal, key-quotas.ts).
   * The caller `remember`s the execution after this began (the record takes the SQL text that
   * `remember` lets go); a failure is logged, the execution stays as it is in memory, and the
   * next start forgets it (its table has no finished record). `also` writes what must land with
   * the record, in its transaction (a small result's table, small-result.ts). Resolves to
   * whether the record landed.
   */
  async saveAfter(execution: Execution, also?: (session: Session) => Promise<void>): Promise<boolean> {
    const row = this.row(execution);
    const write = this.database
      .dedicated(async (session) => {
        if (!also) return session.run(APPEND, row);
        await session.run('BEGIN TRANSACTION');
        try {
          await also(session);
          await session.run(APPEND, row);
          await session.run('COMMIT');
        } catch (error) {
          await session.run('ROLLBACK').catch(() => undefined);
          throw error;
        }
      })
      .then(
        () => true,
        (error: unknown) => {
          const level = error instanceof DatabaseClosingError ? 'debug' : 'error';
          this.logger[level](
            { err: error, executionId: execution.id },
            'could not record the end of an execution',
          );
          return false;
        },
      );
    this.landing.set(execution.id, { row, write });
    try {
      return await write;
    } finally {
      this.landing.delete(execution.id);
    }
  }

  /** Settles once the records of these executions (every one when not given) being written have landed. */
  async landed(ids?: readonly string[]): Promise<void> {
    const writes = ids
      ? ids.flatMap((id) => this.landing.get(id)?.write ?? [])
      : [...this.landing.values()].map((landing) => landing.write);
    await Promise.all(writes);
  }

  /** Appends the record in the caller's transaction; `remember` it once that commits. */
  async append(session: Session, execution: Execution): Promise<void> {
    await session.run(APPEND, this.row(execution));
  }

  /** Keeps the user's SQL of a new ad-hoc run until its final record is written. */
  holdText(id: string, text: string): void {
    this.texts.set(id, text);
  }

  /** The user's SQL of these finished ad-hoc executions, where it was kept. */
  async sqlTexts(ids: readonly string[]): Promise<Map<string, string>> {
    const texts = new Map<string, string>();
    // A record being written holds its text (saveAfter), as its last value.
    for (const id of ids) {
      const text = this.landing.get(id)?.row.at(-1);
      if (typeof text === 'string') texts.set(id, text);
    }
    const stored = ids.filter((id) => !texts.has(id));
    if (stored.length === 0) return texts;
    const rows = await this.database.read((s) =>
      s.all<{ execution_id: string; sql_text: string }>(
        `SELECT execution_id, any_value(sql_text) AS sql_text FROM ${SERVICE_SCHEMA}.executions
          WHERE sql_text IS NOT NULL AND execution_id IN (${stored.map(() => '?').join(', ')})
          GROUP BY execution_id`,
        stored,
      ),
    );
    for (const row of rows) texts.set(row.execution_id, row.sql_text);
    return texts;
  }

  /** The execution's state in memory only (EXECUTING; or a record `append`ed and committed). */
  remember(execution: Execution): void {
    if (isFinished(execution)) this.texts.delete(execution.id);
    const known = this.byId.has(execution.id);
    this.byId.set(execution.id, execution);
    place(this.byQuery, execution.queryId, execution, known);
    place(this.byOwner, execution.owner, execution, known);
  }

  async remove(id: string, session: Session): Promise<void> {
    await this.removeAll([id], session);
  }

  /** Removes the records of these executions, in one statement, and forgets them. */
  async removeAll(ids: readonly string[], session: Session): Promise<void> {
    if (ids.length === 0) return;
    await session.run(
      `DELETE FROM ${SERVICE_SCHEMA}.executions WHERE list_contains(?::VARCHAR[], execution_id)`,
      [listValue([...ids])],
    );
    for (const id of ids) this.forget(id);
  }

  /** Forgets the execution in memory only (its record is removed after: key-quotas.ts). */
  forget(id: string): void {
    const execution = this.byId.get(id);
    this.byId.delete(id);
    this.revisions.delete(id);
    this.texts.delete(id);
    if (!execution) return;
    unplace(this.byQuery, execution.queryId, id);
    unplace(this.byOwner, execution.owner, id);
  }

  /** The record's values, with the given revision or the execution's next (1 and up). */
  private row(execution: Execution, given?: number) {
    const revision = given ?? Math.max(1, (this.revisions.get(execution.id) ?? 0) + 1);
    this.revisions.set(execution.id, Math.max(revision, this.revisions.get(execution.id) ?? 0));
    return [
      execution.id,
      execution.queryId,
      execution.state,
      iso(execution.submittedAt),
      iso(execution.startedAt),
      iso(execution.endedAt),
      iso(execution.cancelledAt),
      iso(execution.expiresAt),
      execution.error?.type ?? null,
      execution.error?.message ?? null,
      execution.columns ? JSON.stringify(execution.columns) : null,
      execution.rowCount ?? null,
      execution.resultBytes ?? null,
      execution.owner,
      execution.parameterSet,
      execution.readsPrivate,
      revision,
      isFinished(execution) ? (this.texts.get(execution.id) ?? null) : null,
    ];
  }
}

/** Puts an execution into its group's list, kept in id (submission) order. */
function place<K>(groups: Map<K, Execution[]>, key: K, execution: Execution, known: boolean): void {
  const list = groups.get(key);
  if (!list) {
    groups.set(key, [execution]);
    return;
  }
  if (!known) {
    list.push(execution);
    // Loaded rows come in id order and new ids are monotonic; keep the order regardless.
    const last = list.length - 1;
    if (last > 0 && (list[last - 1] as Execution).id > execution.id)
      list.sort((a, b) => (a.id < b.id ? -1 : 1));
    return;
  }
  // The execution that changes is nearly always one of the group's latest.
  for (let i = list.length - 1; i >= 0; i--) {
    if ((list[i] as Execution).id === execution.id) {
      list[i] = execution;
      return;
    }
  }
}

function unplace<K>(groups: Map<K, Execution[]>, key: K, id: string): void {
  const list = groups.get(key) ?? [];
  // Purging goes oldest first, so the execution is found at the front.
  const index = list.findIndex((e) => e.id === id);
  if (index >= 0) list.splice(index, 1);
  if (list.length === 0) groups.delete(key);
}
