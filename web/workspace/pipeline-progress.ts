import type { Api } from '../shared/api.js';
import type { PipelineStatus } from '../shared/api-types.js';
import { h } from '../shared/dom.js';

/**
 * A query's pipeline as it runs (POST /v1/query/{id}/pipeline/execute, then its status): each
 * node, what it refreshes or runs, and its state, until the pipeline has ended.
 */

const SHORT: Record<string, string> = {
  QUERY_STATE_PENDING: 'waiting',
  QUERY_STATE_EXECUTING: 'running',
  QUERY_STATE_COMPLETED: 'completed',
  QUERY_STATE_COMPLETED_PARTIAL: 'completed (partial)',
  QUERY_STATE_FAILED: 'failed',
  QUERY_STATE_CANCELLED: 'cancelled',
};

export class PipelineProgress {
  constructor(
    private readonly section: HTMLElement,
    private readonly summary: HTMLElement,
    private readonly list: HTMLElement,
  ) {}

  /** Runs the query's pipeline and shows it until it ends; resolves with its last status. */
  async run(api: Api, queryId: number): Promise<PipelineStatus> {
    this.section.hidden = false;
    this.list.replaceChildren();
    this.summary.textContent = 'Planning the pipeline…';
    const started = await api.post<{ pipeline_execution_id: string }>(
      `/v1/query/${queryId}/pipeline/execute`,
      {
        performance: 'medium',
      },
    );
    for (let wait = 100; ; wait = Math.min(1000, wait * 1.5)) {
      const status = await api.get<PipelineStatus>(
        `/v1/pipelines/executions/${encodeURIComponent(started.pipeline_execution_id)}/status`,
      );
      this.show(status);
      if (status.status === 'completed' || status.status === 'failed') return status;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  hide(): void {
    this.section.hidden = true;
  }

  private show(status: PipelineStatus): void {
    const nodes = status.node_executions;
    const done = nodes.filter((n) => n.query_execution_status.status === 'QUERY_STATE_COMPLETED').length;
    this.summary.textContent = `Pipeline ${status.status}: ${done} of ${nodes.length} nodes completed${status.error ? ` — ${status.error}` : ''}`;
    this.list.replaceChildren(
      ...nodes.map((node) => {
        const run = node.query_execution_status;
        const state = SHORT[run.status] ?? run.status;
        const what = node.materialized_view_refresh_status
          ? `refresh ${node.materialized_view_refresh_status.name}`
          : `run query #${run.query_id}`;
        return h(
          'li',
          { class: `pipeline-node state-${state.split(' ')[0]}` },
          h('span', { class: 'node-id' }, `${node.id}.`),
          ` ${what}`,
          node.dependencies.length > 0
            ? h('span', { class: 'node-deps' }, ` after ${node.dependencies.join(', ')}`)
            : null,
          ' — ',
          h('span', { class: 'node-state' }, state),
          run.error ? h('span', { class: 'node-error' }, `: ${run.error}`) : null,
        );
      }),
    );
  }
}
