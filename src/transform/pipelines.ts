import { monotonicFactory } from 'ulid';
import type { Account } from '../auth/account.js';
import { notFound } from '../errors.js';
import { type Execution, hasResult, isFinished } from '../executions/execution.js';
import type { Executions } from '../executions/executions.js';
import type { Logger } from '../log.js';
import type { Queries } from '../queries/queries.js';
import { assertNotArchived } from '../queries/query-access.js';
import type { ExecuteQueryRequest } from '../queries/query-request.js';
import type { Database } from '../storage/database.js';
import type { MaterializedViews } from './materialized-views.js';
import { type PlannedNode, planPipeline } from './pipeline-plan.js';
import {
  findPipeline,
  type PipelineNode,
  type PipelineRecord,
  savePipeline,
  unfinishedPipelines,
} from './pipeline-store.js';
import { viewFullName } from './view-name.js';

/**
 * Query pipelines (`POST /v1/query/{id}/pipeline/execute`): the query's pipeline
 * (pipeline-plan.ts) run in dependency order, each node as soon as every node it depends on has
 * completed, siblings side by side. A node is an ordinary run under the pipeline's runner's key
 * (users' lane, its slots and queue bound): a query's execution, or a materialized view's refresh,
 * which completes once the view's table has the new rows. A node that fails fails the nodes that
 * depend on it, which never run; its siblings go on. The record is written as nodes progress and
 * survives a restart; a pipeline a restart cut short reads as failed.
 */

const nextId = monotonicFactory();

/** Nodes of one pipeline running at once (the key's own lane bounds them further). */
const NODES_AT_ONCE = 4;

export const pipelineNotFound = (id: string) =>
  notFound(`no pipeline execution with id ${JSON.stringify(id.slice(0, 64))}`);

export class Pipelines {
  /** Pipelines running now, by id (their record in memory is the latest). */
  private readonly running = new Map<string, PipelineRecord>();
  private readonly waiters = new Map<string, (execution: Execution) => void>();

  constructor(
    private readonly database: Database,
    private readonly executions: Executions,
    private readonly queries: Queries,
    private readonly views: MaterializedViews,
    private readonly logger: Logger,
  ) {
    executions.onFinished((execution) => {
      const waiter = this.waiters.get(execution.id);
      if (!waiter) return;
      this.waiters.delete(execution.id);
      waiter(execution);
    });
  }

  /** Pipelines a stop cut short are recorded as failed; their nodes' runs were marked failed too. */
  async open(): Promise<void> {
    const now = new Date();
    for (const record of await unfinishedPipelines(this.database)) {
      for (const node of record.nodes) {
        if (node.state !== 'pending' && node.state !== 'running') continue;
        node.state = 'failed';
        node.error = 'the service stopped before this node finished';
      }
      const finished = record.nodes.every((node) => node.state === 'completed');
      await savePipeline(this.database, {
        ...record,
        status: finished ? 'completed' : 'failed',
        endedAt: now,
        ...(finished ? {} : { error: 'the service stopped before this pipeline finished' }),
      });
    }
  }

  /** The pipeline of a query the account may see, planned without running it. */
  async plan(
    account: Account,
    queryId: number,
    values: ReadonlyMap<string, unknown>,
  ): Promise<PlannedNode[]> {
    const root = await this.queries.visible(account, queryId);
    return planPipeline({ queries: this.queries, views: this.views }, account, root, values);
  }

  /** Plans the query's pipeline and starts it; answers once it is recorded. */
  async execute(account: Account, queryId: number, request: ExecuteQueryRequest): Promise<PipelineRecord> {
    const root = await this.queries.visible(account, queryId);
    assertNotArchived(root, 'executed');
    const planned = await planPipeline(
      { queries: this.queries, views: this.views },
      account,
      root,
      request.values,
    );
    const record: PipelineRecord = {
      id: nextId(),
      owner: account.handle,
      queryId,
      status: 'executing',
      submittedAt: new Date(),
      nodes: planned.map((node) => ({ ...node, state: 'pending' })),
    };
    await savePipeline(this.database, record);
    this.running.set(record.id, record);
    this.run(record, account, request)
      .catch((error: unknown) =>
        this.logger.error({ err: error, pipeline: record.id }, 'pipeline bookkeeping failed'),
      )
      .finally(() => this.running.delete(record.id));
    return record;
  }

  /** A pipeline execution its runner (or an admin) asks about; for anyone else the 404 of one that does not exist. */
  async status(account: Account, id: string): Promise<PipelineRecord> {
    const record = this.running.get(id) ?? (await findPipeline(this.database, id));
    if (!record || (record.owner !== account.handle && !account.admin)) throw pipelineNotFound(id);
    return record;
  }

  private async run(record: PipelineRecord, account: Account, request: ExecuteQueryRequest): Promise<void> {
    const inFlight = new Map<number, Promise<void>>();
    for (;;) {
      for (const node of record.nodes) {
        if (node.state !== 'pending') continue;
        const dependencies = node.dependencies.map((id) => record.nodes[id - 1] as PipelineNode);
        const failed = dependencies.find((d) => d.state === 'failed');
        if (failed) {
          node.state = 'failed';
          node.error = `not run: node ${failed.id} (${describe(failed)}), which it depends on, failed`;
        } else if (dependencies.every((d) => d.state === 'completed') && inFlight.size < NODES_AT_ONCE) {
          node.state = 'running';
          const running = this.runNode(record, node, account, request).finally(() =>
            inFlight.delete(node.id),
          );
          inFlight.set(node.id, running);
        }
      }
      // Taken before the save: a node may end while it is written, and is then seen next pass.
      const active = [...inFlight.values()];
      await this.save(record);
      if (active.length === 0) break;
      await Promise.race(active);
    }
    const failed = record.nodes.filter((node) => node.state === 'failed');
    record.status = failed.length === 0 ? 'completed' : 'failed';
    if (failed.length > 0)
      record.error = `${failed.length} of ${record.nodes.length} nodes failed; node ${failed[0]?.id}: ${failed[0]?.error}`;
    record.endedAt = new Date();
    await this.save(record);
  }

  /** Runs one node to its end; a failure is the node's, never thrown. */
  private async runNode(
    record: PipelineRecord,
    node: PipelineNode,
    account: Account,
    request: ExecuteQueryRequest,
  ): Promise<void> {
    try {
      const target = node.target;
      if (target.kind === 'view') {
        const view = this.views.at(target.view);
        if (!view) throw new Error(`materialized view ${viewFullName(target.view)} no longer exists`);
        const refresh = await this.views.refresh(account, view, request.performance);
        node.executionId = refresh.execution.id;
        await this.save(record);
        const outcome = await refresh.done;
        if (!outcome.replaced) throw new Error(outcome.error ?? 'the view was not refreshed');
      } else {
        const own = node.id === record.nodes.length;
        const execution = await this.queries.execute(account, target.queryId, {
          values: own ? request.values : new Map(),
          performance: request.performance,
        });
        node.executionId = execution.id;
        await this.save(record);
        const ended = await this.ended(execution);
        if (!hasResult(ended)) throw new Error(ended.error?.message ?? `the execution ended ${ended.state}`);
      }
      node.state = 'completed';
    } catch (error) {
      node.state = 'failed';
      node.error = (error as Error).message.split('\n')[0] ?? String(error);
    }
  }

  /** Resolves with the execution once it has finished. */
  private ended(execution: Execution): Promise<Execution> {
    return new Promise((resolve) => {
      this.waiters.set(execution.id, resolve);
      const now = this.executions.get(execution.id);
      if (now && isFinished(now)) {
        this.waiters.delete(execution.id);
        resolve(now);
      }
    });
  }

  private async save(record: PipelineRecord): Promise<void> {
    await savePipeline(this.database, record).catch((error: unknown) =>
      this.logger.warn({ err: error, pipeline: record.id }, 'could not record a pipeline’s progress'),
    );
  }
}

function describe(node: PipelineNode): string {
  return node.target.kind === 'view'
    ? `materialized view ${viewFullName(node.target.view)}`
    : `query ${node.target.queryId}`;
}
