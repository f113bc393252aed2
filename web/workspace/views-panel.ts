import type { Api } from '../shared/api.js';
import type { MaterializedView, ViewList } from '../shared/api-types.js';
import { h } from '../shared/dom.js';
import { plural, when } from '../shared/format.js';

/**
 * The caller's materialized views (GET /v1/materialized-views): name, the query it keeps,
 * schedule, last refresh, next run, why the last refresh failed; refresh one now.
 */

export class ViewsPanel {
  private api: Api | undefined;

  constructor(
    private readonly list: HTMLElement,
    private readonly status: HTMLElement,
    private readonly actions: { openQuery: (queryId: number) => void; announce: (message: string) => void },
  ) {}

  async load(api: Api): Promise<void> {
    this.api = api;
    this.status.textContent = 'Loading your views…';
    const answer = await api.get<ViewList>('/v1/materialized-views?limit=1000');
    this.render(answer.materialized_views);
  }

  private render(views: MaterializedView[]): void {
    this.list.replaceChildren(...views.map((view) => this.item(view)));
    this.status.textContent =
      views.length === 0
        ? 'No materialized views yet: open a saved query and choose “Materialize on a schedule…”.'
        : plural(views.length, 'view');
  }

  private item(view: MaterializedView): HTMLElement {
    return h(
      'li',
      { class: 'query-item view-item' },
      h(
        'p',
        { class: 'view-name' },
        view.id,
        view.is_private ? h('span', { class: 'badge' }, 'private') : null,
      ),
      h(
        'p',
        { class: 'table-facts' },
        h(
          'button',
          { type: 'button', class: 'link-button', onclick: () => this.actions.openQuery(view.query_id) },
          `query #${view.query_id}`,
        ),
        ` · ${view.cron_expression ? `schedule ${view.cron_expression}` : 'no schedule'} · ${plural(view.row_count, 'row')}`,
      ),
      h('p', { class: 'table-facts view-times' }, `last refresh ${when(view.last_refreshed_at)}`),
      h('p', { class: 'table-facts view-times' }, `next run ${when(view.next_refresh_at)}`),
      view.last_error
        ? h('p', { class: 'table-facts error' }, `last refresh failed: ${view.last_error}`)
        : null,
      h(
        'button',
        {
          type: 'button',
          class: 'secondary small',
          'aria-label': `Refresh ${view.id} now`,
          onclick: (event: Event) => void this.refresh(view, event.currentTarget as HTMLButtonElement),
        },
        'Refresh now',
      ),
    );
  }

  private async refresh(view: MaterializedView, button: HTMLButtonElement): Promise<void> {
    if (!this.api) return;
    button.disabled = true;
    try {
      const answer = await this.api.post<{ execution_id: string }>(
        `/v1/materialized-views/${encodeURIComponent(view.id)}/refresh`,
      );
      this.actions.announce(`Refreshing ${view.id} (execution ${answer.execution_id}).`);
      await this.follow(view, answer.execution_id);
    } catch (error) {
      this.actions.announce(`${view.id} could not be refreshed: ${(error as Error).message}`);
    } finally {
      button.disabled = false;
    }
  }

  /** Polls the view until its refresh has ended, then shows the list again. */
  private async follow(view: MaterializedView, executionId: string): Promise<void> {
    const api = this.api;
    if (!api) return;
    for (let wait = 100; ; wait = Math.min(1000, wait * 1.5)) {
      await new Promise((resolve) => setTimeout(resolve, wait));
      const now = await api.get<MaterializedView>(`/v1/materialized-views/${encodeURIComponent(view.id)}`);
      const ended = now.last_refreshed_at !== view.last_refreshed_at || now.last_error !== view.last_error;
      if (ended || now.last_execution_ids[0] !== executionId) break;
    }
    await this.load(api);
    this.actions.announce(`Refreshed ${view.id}.`);
  }
}
