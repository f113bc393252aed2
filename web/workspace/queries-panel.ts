import type { Api } from '../shared/api.js';
import type { QueryList, SavedQuery } from '../shared/api-types.js';
import { h } from '../shared/dom.js';
import { plural } from '../shared/format.js';

/** The caller's saved queries (GET /v1/queries, newest first): open one, or see the archived. */

const PAGE = 100;

export class QueriesPanel {
  private queries: SavedQuery[] = [];

  constructor(
    private readonly list: HTMLElement,
    private readonly status: HTMLElement,
    private readonly showArchived: HTMLInputElement,
    private readonly open: (query: SavedQuery) => void,
  ) {
    showArchived.addEventListener('change', () => this.render());
  }

  async load(api: Api): Promise<void> {
    this.status.textContent = 'Loading your queries…';
    const queries: SavedQuery[] = [];
    let offset: number | undefined = 0;
    while (offset !== undefined && queries.length < 10 * PAGE) {
      const page: QueryList = await api.get<QueryList>(`/v1/queries?limit=${PAGE}&offset=${offset}`);
      queries.push(...page.queries);
      offset = page.next_offset;
    }
    this.queries = queries;
    this.render();
  }

  private render(): void {
    const archived = this.queries.filter((q) => q.is_archived).length;
    const shown = this.showArchived.checked ? this.queries : this.queries.filter((q) => !q.is_archived);
    this.list.replaceChildren(
      ...shown.map((query) =>
        h(
          'li',
          { class: query.is_archived ? 'query-item archived' : 'query-item' },
          h(
            'button',
            {
              type: 'button',
              class: 'query-name',
              title: query.description || query.name,
              onclick: () => this.open(query),
            },
            query.name,
          ),
          h(
            'p',
            { class: 'table-facts' },
            `#${query.query_id}`,
            query.is_private ? h('span', { class: 'badge' }, 'private') : null,
            query.is_archived ? h('span', { class: 'badge' }, 'archived') : null,
            query.parameters.length > 0 ? ` · ${plural(query.parameters.length, 'parameter')}` : null,
          ),
        ),
      ),
    );
    const active = this.queries.length - archived;
    this.status.textContent =
      this.queries.length === 0
        ? 'No saved queries yet: write one and press Save.'
        : `${plural(active, 'query', 'queries')}${archived ? `, ${archived} archived` : ''}`;
  }
}
