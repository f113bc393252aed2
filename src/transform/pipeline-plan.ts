import type { Account } from '../auth/account.js';
import { badRequest } from '../errors.js';
import type { Queries, TableRead } from '../queries/queries.js';
import type { Query } from '../queries/query.js';
import type { MaterializedViews } from './materialized-views.js';
import { type ViewRef, viewFullName } from './view-name.js';

/**
 * A query's pipeline: the query, after every materialized view and `query_<id>` result it reads,
 * transitively, each refreshed first. What a query reads is what DuckDB's parser finds in its SQL
 * through the sandbox (Queries.tablesRead), never a pattern over the text. A view is a node when
 * the pipeline's runner owns it (only its owner refreshes a view); another's view is read as it
 * is. A cycle (a query that reads, through views and results, itself) is a 400 naming it.
 */

export type NodeTarget =
  | { kind: 'query'; queryId: number }
  | { kind: 'view'; queryId: number; view: ViewRef };

export interface PlannedNode {
  /** 1 and up, dependencies before dependents; the pipeline's own query is the last. */
  id: number;
  target: NodeTarget;
  dependencies: number[];
}

/** A pipeline larger than this is refused: planning and running stay bounded. */
export const MAX_PIPELINE_NODES = 100;

interface Planning {
  account: Account;
  queries: Queries;
  views: MaterializedViews;
  /** Parameter values of the pipeline's own query; the others run with their defaults. */
  rootValues: ReadonlyMap<string, unknown>;
  nodes: PlannedNode[];
  byKey: Map<string, number>;
  /** Keys on the path being walked, in order, to name a cycle. */
  path: string[];
  labels: Map<string, string>;
}

const targetKey = (target: NodeTarget) =>
  target.kind === 'query' ? `q:${target.queryId}` : `v:${target.view.namespace}.${target.view.name}`;

const label = (target: NodeTarget) =>
  target.kind === 'query'
    ? `query ${target.queryId}`
    : `${viewFullName(target.view)} (query ${target.queryId})`;

export async function planPipeline(
  deps: { queries: Queries; views: MaterializedViews },
  account: Account,
  root: Query,
  rootValues: ReadonlyMap<string, unknown>,
): Promise<PlannedNode[]> {
  const planning: Planning = {
    account,
    ...deps,
    rootValues,
    nodes: [],
    byKey: new Map(),
    path: [],
    labels: new Map(),
  };
  await visit(planning, { kind: 'query', queryId: root.id }, root);
  return planning.nodes;
}

/** Depth first: a node's id is given once its dependencies have theirs. */
async function visit(planning: Planning, target: NodeTarget, known?: Query): Promise<number> {
  const key = targetKey(target);
  const done = planning.byKey.get(key);
  if (done !== undefined) return done;
  planning.labels.set(key, label(target));
  const onPath = planning.path.indexOf(key);
  if (onPath >= 0) {
    const cycle = [...planning.path.slice(onPath), key].map((k) => planning.labels.get(k)).join(' → ');
    throw badRequest(
      `the pipeline has a cycle: ${cycle} (a query may not read, through views and results, itself)`,
    );
  }
  if (planning.nodes.length + planning.path.length >= MAX_PIPELINE_NODES)
    throw badRequest(`the pipeline has more than ${MAX_PIPELINE_NODES} nodes; split it`);
  planning.path.push(key);
  const query = known ?? (await planning.queries.visible(planning.account, target.queryId));
  const values = planning.path.length === 1 ? planning.rootValues : new Map<string, unknown>();
  const dependencies: number[] = [];
  for (const read of await planning.queries.tablesRead(planning.account, query, values)) {
    const upstream = dependencyOf(planning, read);
    if (!upstream) continue;
    const id = await visit(planning, upstream);
    if (!dependencies.includes(id)) dependencies.push(id);
  }
  planning.path.pop();
  const id = planning.nodes.length + 1;
  planning.nodes.push({ id, target, dependencies });
  planning.byKey.set(key, id);
  return id;
}

/** The node a read depends on: another query's result, or a view the runner owns. */
function dependencyOf(planning: Planning, read: TableRead): NodeTarget | undefined {
  if ('queryId' in read) return { kind: 'query', queryId: read.queryId };
  const view = planning.views.at({ namespace: read.namespace, name: read.tableName });
  if (!view || view.namespace !== planning.account.handle) return undefined;
  return { kind: 'view', queryId: view.queryId, view: { namespace: view.namespace, name: view.name } };
}
