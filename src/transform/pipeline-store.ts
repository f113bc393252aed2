import type { Database } from '../storage/database.js';
import { SERVICE_SCHEMA } from '../storage/service-schema.js';
import type { NodeTarget } from './pipeline-plan.js';

/**
 * Pipeline executions' records in `_service.pipeline_executions`: one row each, its nodes as
 * JSON, written again as they progress, so that a pipeline's status survives a restart.
 */

export type PipelineStatus = 'pending' | 'executing' | 'completed' | 'failed';
export type NodeState = 'pending' | 'running' | 'completed' | 'failed';

export interface PipelineNode {
  id: number;
  target: NodeTarget;
  dependencies: number[];
  state: NodeState;
  executionId?: string;
  error?: string;
}

export interface PipelineRecord {
  id: string;
  owner: string;
  queryId: number;
  status: PipelineStatus;
  submittedAt: Date;
  endedAt?: Date;
  error?: string;
  nodes: PipelineNode[];
}

interface PipelineRow {
  pipeline_execution_id: string;
  owner: string;
  query_id: bigint;
  status: string;
  submitted_at: Date;
  ended_at: Date | null;
  error: string | null;
  nodes: string;
}

function fromRow(row: PipelineRow): PipelineRecord {
  return {
    id: row.pipeline_execution_id,
    owner: row.owner,
    queryId: Number(row.query_id),
    status: row.status as PipelineStatus,
    submittedAt: row.submitted_at,
    ...(row.ended_at ? { endedAt: row.ended_at } : {}),
    ...(row.error !== null ? { error: row.error } : {}),
    nodes: JSON.parse(row.nodes) as PipelineNode[],
  };
}

export async function findPipeline(database: Database, id: string): Promise<PipelineRecord | undefined> {
  const [row] = await database.read((s) =>
    s.all<PipelineRow>(
      `SELECT * FROM ${SERVICE_SCHEMA}.pipeline_executions WHERE pipeline_execution_id = ?`,
      [id],
    ),
  );
  return row ? fromRow(row) : undefined;
}

export async function unfinishedPipelines(database: Database): Promise<PipelineRecord[]> {
  const rows = await database.read((s) =>
    s.all<PipelineRow>(
      `SELECT * FROM ${SERVICE_SCHEMA}.pipeline_executions WHERE status IN ('pending', 'executing')`,
    ),
  );
  return rows.map(fromRow);
}

export async function savePipeline(database: Database, record: PipelineRecord): Promise<void> {
  await database.write(async (s) => {
    await s.run(`DELETE FROM ${SERVICE_SCHEMA}.pipeline_executions WHERE pipeline_execution_id = ?`, [
      record.id,
    ]);
    await s.run(`INSERT INTO ${SERVICE_SCHEMA}.pipeline_executions VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [
      record.id,
      record.owner,
      record.queryId,
      record.status,
      record.submittedAt.toISOString(),
      record.endedAt?.toISOString() ?? null,
      record.error ?? null,
      JSON.stringify(record.nodes),
    ]);
  });
}
