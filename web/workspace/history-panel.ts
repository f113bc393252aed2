import type { Api } from '../shared/api.js';
import { type HistoryEntry, type HistoryList, STATES } from '../shared/api-types.js';
import { h } from '../shared/dom.js';
import { plural, when } from '../shared/format.js';

/**
 * The caller's execution history (GET /v1/executions, newest first): open a result again, or
 * run its SQL again (an ad-hoc run's own SQL, or the saved query).
 */

const PAGE = 100;

const SHORT_STATES: Record<string, string> = {
  [STATES.pending]: 'pending',
  [STATES.executing]: 'running',
  [STATES.completed]: 'completed',
  [STATES.completedPartial]: 'partial',
  [STATES.failed]: 'failed',
  [STATES.cancelled]: 'cancelled',
  [STATES.expired]: 'expired',
};

export class HistoryPanel {
  constructor(
    private readonly list: HTMLElement,
    private readonly status: HTMLElement,
    private readonly actions: {
      openResult: (executionId: string) => void;
      runSql: (sql: string) => void;
      openQuery: (queryId: number) => void;
    },
  ) {}

  async load(api: Api): Promise<void> {
    this.status.textContent = 'Loading your history…';
    const answer = await api.get<HistoryList>(`/v1/executions?limit=${PAGE}`);
    this.list.replaceChildren(...answer.executions.map((entry) => this.item(entry)));
    this.status.textContent =
      answer.total === 0
        ? 'Nothing run yet.'
        : `${plural(answer.total, 'execution')}${answer.total > PAGE ? `, the latest ${PAGE} shown` : ''}`;
  }

  private item(entry: HistoryEntry): HTMLElement {
    const state = SHORT_STATES[entry.state] ?? entry.state;
    const title =
      entry.query_name ??
      (entry.query_sql ? entry.query_sql.replace(/\s+/g, ' ').slice(0, 80) : `query #${entry.query_id}`);
    const hasResult = entry.state === STATES.completed || entry.state === STATES.completedPartial;
    const sql = entry.query_sql;
    return h(
      'li',
      { class: 'query-item history-item' },
      h('p', { class: 'history-title', title: sql ?? title }, title),
      h(
        'p',
        { class: 'table-facts' },
        h('span', { class: `badge state-${state}` }, state),
        ` ${when(entry.submitted_at)}`,
        entry.result_metadata ? ` · ${plural(entry.result_metadata.total_row_count, 'row')}` : null,
      ),
      h(
        'div',
        { class: 'history-actions' },
        hasResult
          ? h(
              'button',
              {
                type: 'button',
                class: 'secondary small',
                onclick: () => this.actions.openResult(entry.execution_id),
              },
              'Open result',
            )
          : null,
        sql !== undefined
          ? h(
              'button',
              { type: 'button', class: 'secondary small', onclick: () => this.actions.runSql(sql) },
              'Run again',
            )
          : entry.query_id !== 0
            ? h(
                'button',
                {
                  type: 'button',
                  class: 'secondary small',
                  onclick: () => this.actions.openQuery(entry.query_id),
                },
                'Open query',
              )
            : null,
      ),
    );
  }
}
