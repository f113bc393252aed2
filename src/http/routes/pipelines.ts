import type { Request, Response, Router } from 'express';
import { STATES } from '../../executions/execution.js';
import type { Executions } from '../../executions/executions.js';
import { parseExecuteQuery } from '../../queries/query-request.js';
import type { PlannedNode } from '../../transform/pipeline-plan.js';
import type { PipelineNode, PipelineRecord } from '../../transform/pipeline-store.js';
import { viewFullName } from '../../transform/view-name.js';
import type { AppDeps } from '../app-deps.js';
import { accountOf, authenticate } from '../authenticate.js';
import { readJsonBody } from '../json-body.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { readQueryParams } from '../query-params.js';
import { parseQueryId } from './results.js';

const MAX_BODY = 1024 * 1024;

/** A node's state as Dune's node statuses say it: its execution's state once it has one. */
function nodeState(node: PipelineNode, executions: Executions): string {
  const execution = node.executionId ? executions.get(node.executionId) : undefined;
  if (node.state === 'pending') return STATES.pending;
  if (node.state === 'running') return execution?.state ?? STATES.pending;
  if (node.state === 'completed')
    return node.target.kind === 'view' ? STATES.completed : (execution?.state ?? STATES.completed);
  const ended = execution?.state;
  return ended === STATES.cancelled || ended === STATES.failed ? ended : STATES.failed;
}

/** The status answer: Dune's `status` and `node_executions`, each node's dependencies beside. */
export function pipelineToApi(record: PipelineRecord, executions: Executions): Record<string, unknown> {
  return {
    pipeline_execution_id: record.id,
    query_id: record.queryId,
    status: record.status,
    submitted_at: record.submittedAt.toISOString(),
    ended_at: record.endedAt?.toISOString() ?? null,
    ...(record.error ? { error: record.error } : {}),
    node_executions: record.nodes.map((node) => {
      const status = nodeState(node, executions);
      const run = {
        status,
        ...(node.executionId ? { execution_id: node.executionId } : {}),
        ...(node.error ? { error: node.error } : {}),
      };
      return {
        id: node.id,
        dependencies: node.dependencies,
        query_execution_status: { ...run, query_id: node.target.queryId },
        ...(node.target.kind === 'view'
          ? { materialized_view_refresh_status: { ...run, name: viewFullName(node.target.view) } }
          : {}),
      };
    }),
  };
}

/** A pipeline as Dune's `GET /v1/query/{id}/pipeline` shows it. */
function planToApi(nodes: readonly PlannedNode[], performance: string): Record<string, unknown> {
  return {
    pipeline: {
      nodes: nodes.map((node) => ({
        id: node.id,
        dependencies: node.dependencies,
        ...(node.target.kind === 'view'
          ? { materialized_view_refresh: { name: viewFullName(node.target.view), performance } }
          : { query_execution: { query_id: node.target.queryId, performance } }),
      })),
    },
  };
}

/** Query pipelines: plan, execute, status. */
export function pipelineRoutes(router: Router, deps: AppDeps): void {
  const auth = authenticate(deps.keys);
  const { pipelines, executions } = deps;
  const idOf = (req: Request) => parseQueryId(String(req.params.queryId), 'query id');

  router
    .route('/query/:queryId/pipeline')
    .get(auth, async (req: Request, res: Response) => {
      const params = readQueryParams(req, ['performance']);
      const performance = params.get('performance') ?? 'medium';
      const request = parseExecuteQuery({ performance });
      const nodes = await pipelines.plan(accountOf(res), idOf(req), new Map());
      res.json(planToApi(nodes, request.performance));
    })
    .all(methodNotAllowed('GET'));

  router
    .route('/query/:queryId/pipeline/execute')
    .post(auth, async (req: Request, res: Response) => {
      readQueryParams(req, []);
      const id = idOf(req);
      const request = parseExecuteQuery(await readJsonBody(req, MAX_BODY));
      const record = await pipelines.execute(accountOf(res), id, request);
      res.json({ pipeline_execution_id: record.id });
    })
    .all(methodNotAllowed('POST'));

  router
    .route('/pipelines/executions/:pipelineId/status')
    .get(auth, async (req: Request, res: Response) => {
      readQueryParams(req, []);
      const record = await pipelines.status(accountOf(res), String(req.params.pipelineId));
      res.json(pipelineToApi(record, executions));
    })
    .all(methodNotAllowed('GET'));
}
