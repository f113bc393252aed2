import type { Database, Session } from '../storage/database.js';
import { SERVICE_SCHEMA } from '../storage/service-schema.js';
import type { Execution, ExecutionState, SnapshotColumn } from './execution.js';

/**
 * Execution records, kept in memory (they are few and small, and every results request
 * needs one) and written through to `_service.executions` so they survive a restart.
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
}

function fromRow(row: ExecutionRow): Execution {
  return {
    id: row.execution_id,
    queryId: Number(row.query_id),
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

export class ExecutionStore {
  private readonly byId = new Map<string, Execution>();

  constructor(private readonly database: Database) {}

  async load(): Promise<Execution[]> {
    const rows = await this.database.read((s) =>
      s.all<ExecutionRow>(`SELECT * FROM ${SERVICE_SCHEMA}.executions ORDER BY submitted_at, execution_id`),
    );
    for (const row of rows) {
      const execution = fromRow(row);
      this.byId.set(execution.id, execution);
    }
    return [...this.byId.values()];
  }

  get(id: string): Execution | undefined {
    return this.byId.get(id);
  }

  all(): Execution[] {
    return [...this.byId.values()];
  }

  /** Records the execution's new state; memory changes only once the database has it. */
  async save(execution: Execution): Promise<void> {
    await this.database.write(async (s: Session) => {
      await s.run(`DELETE FROM ${SERVICE_SCHEMA}.executions WHERE execution_id = ?`, [execution.id]);
      await s.run(`INSERT INTO ${SERVICE_SCHEMA}.executions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
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
      ]);
    });
    this.byId.set(execution.id, { ...execution });
  }

  async remove(id: string, session: Session): Promise<void> {
    await session.run(`DELETE FROM ${SERVICE_SCHEMA}.executions WHERE execution_id = ?`, [id]);
    this.byId.delete(id);
  }
}
