import { type Api, ApiError } from '../shared/api.js';
import { withQuery } from '../shared/api-path.js';
import { type CellValue, type ExecutionStatus, type ResultsPage, STATES } from '../shared/api-types.js';
import { h } from '../shared/dom.js';
import { formatDuration, numberFormat, plural } from '../shared/format.js';
import { messagePosition } from './error-position.js';
import { cellText, isNumericType } from './result-values.js';
import { nextSort, type ResultView, type Sort, viewParameters } from './result-view.js';

/**
 * The results grid: one page at a time from GET /execution/{id}/results (limit, offset and
 * next_uri), sorted by a column header (sort_by) and narrowed by the filter box (filters, in
 * the results' filter language). Values are shown as the API renders them.
 */

export const PAGE_SIZES = [25, 100, 500, 1000] as const;

export class ResultsGrid {
  private view: ResultView | undefined;
  private limit = 100;
  private offset = 0;
  /** Answers to older requests are dropped: the newest request wins. */
  private generation = 0;
  /** A new result is shown from its first row and column, not where the last one was scrolled to. */
  private scrollToStart = false;
  private readonly table: HTMLTableElement;

  constructor(
    private readonly api: () => Api,
    private readonly parts: {
      container: HTMLElement;
      meta: HTMLElement;
      filterForm: HTMLFormElement;
      filterInput: HTMLInputElement;
      filterError: HTMLElement;
      pager: HTMLElement;
      pageSize: HTMLSelectElement;
    },
    private readonly changed: (view: ResultView) => void,
  ) {
    this.table = h('table', { class: 'grid', 'aria-label': 'Result rows' });
    parts.container.append(this.table);
    parts.filterForm.addEventListener('submit', (event) => {
      event.preventDefault();
      this.setFilters(parts.filterInput.value.trim());
    });
    parts.filterForm.addEventListener('reset', () => {
      // After the form has emptied the box.
      queueMicrotask(() => this.setFilters(''));
    });
    for (const size of PAGE_SIZES) {
      parts.pageSize.append(
        h('option', { value: String(size), selected: size === this.limit }, String(size)),
      );
    }
    parts.pageSize.addEventListener('change', () => {
      this.limit = Number(parts.pageSize.value);
      this.offset = 0;
      void this.load();
    });
  }

  get current(): ResultView | undefined {
    return this.view;
  }

  /** Shows a finished execution that has a result, from its first page. */
  show(status: ExecutionStatus): Promise<void> {
    this.view = { status, filters: '', sort: undefined };
    this.offset = 0;
    this.scrollToStart = true;
    this.parts.filterInput.value = '';
    this.parts.filterError.textContent = '';
    this.parts.filterInput.removeAttribute('aria-invalid');
    this.changed(this.view);
    return this.load();
  }

  clear(): void {
    this.view = undefined;
    this.generation++;
    this.table.replaceChildren();
    this.parts.meta.textContent = '';
    this.parts.pager.replaceChildren();
  }

  private setFilters(filters: string): void {
    if (!this.view) return;
    this.view = { ...this.view, filters };
    this.offset = 0;
    void this.load();
  }

  private setSort(column: string): void {
    if (!this.view) return;
    this.view = { ...this.view, sort: nextSort(this.view.sort, column) };
    this.offset = 0;
    void this.load(column);
  }

  private async load(focusColumn?: string, path?: string): Promise<void> {
    const view = this.view;
    if (!view) return;
    const generation = ++this.generation;
    const url =
      path ??
      withQuery(`/v1/execution/${encodeURIComponent(view.status.execution_id)}/results`, {
        limit: this.limit,
        offset: this.offset,
        ...viewParameters(view),
      });
    this.parts.container.setAttribute('aria-busy', 'true');
    let page: ResultsPage;
    let arrivedAt: number;
    try {
      ({ value: page, arrivedAt } = await this.api().getTimed<ResultsPage>(url));
    } catch (error) {
      if (generation !== this.generation) return;
      this.parts.container.removeAttribute('aria-busy');
      this.showLoadError(error);
      return;
    } finally {
      if (generation === this.generation) this.parts.container.removeAttribute('aria-busy');
    }
    if (generation !== this.generation) return;
    this.parts.filterError.textContent = '';
    this.parts.filterInput.removeAttribute('aria-invalid');
    this.offset = pageOffset(url);
    this.render(page, view, focusColumn);
    // Read by the benchmark (bench/workspace-page.ts): from the answer's arrival to the grid laid out.
    void this.table.offsetHeight;
    performance.measure('results-rendered', { start: arrivedAt });
    this.changed(view);
  }

  private showLoadError(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof ApiError && error.status === 400 && /^(filters|sort_by):/.test(message)) {
      this.parts.filterError.textContent = message;
      this.parts.filterInput.setAttribute('aria-invalid', 'true');
      const position = messagePosition(message);
      if (message.startsWith('filters:') && position !== undefined) {
        this.parts.filterInput.focus();
        this.parts.filterInput.setSelectionRange(position, this.parts.filterInput.value.length);
      }
      return;
    }
    this.parts.filterError.textContent = `The rows could not be loaded: ${message}`;
  }

  private render(page: ResultsPage, view: ResultView, focusColumn?: string): void {
    const result = page.result;
    if (!result) {
      this.table.replaceChildren();
      this.parts.meta.textContent = page.error?.message ?? `This execution has no result (${page.state}).`;
      this.parts.pager.replaceChildren();
      return;
    }
    const { column_names: names, column_types: types } = result.metadata;
    const numeric = types.map(isNumericType);
    this.table.replaceChildren(
      headRow(names, types, numeric, view.sort, (name) => this.setSort(name)),
      bodyRows(result.rows, names, numeric, this.offset + 1),
    );
    if (this.scrollToStart) {
      this.scrollToStart = false;
      this.parts.container.scrollTo(0, 0);
    }
    if (focusColumn) {
      this.table
        .querySelector<HTMLButtonElement>(`button.sort[data-column="${CSS.escape(focusColumn)}"]`)
        ?.focus();
    }
    this.renderMeta(page, view);
    this.renderPager(page);
  }

  private renderMeta(page: ResultsPage, view: ResultView): void {
    const metadata = page.result?.metadata;
    if (!metadata) return;
    const whole = view.status.result_metadata?.total_row_count ?? metadata.total_row_count;
    const rows = view.filters
      ? `${numberFormat.format(metadata.total_row_count)} of ${plural(whole, 'row')} match`
      : plural(whole, 'row');
    const parts = [
      rows,
      `${plural(metadata.column_names.length, 'column')}`,
      `ran in ${formatDuration(metadata.execution_time_millis)}`,
    ];
    if (view.status.state === STATES.completedPartial)
      parts.push('truncated: the result was larger than the service keeps');
    this.parts.meta.textContent = parts.join(' · ');
  }

  private renderPager(page: ResultsPage): void {
    const total = page.result?.metadata.total_row_count ?? 0;
    const shown = page.result?.rows.length ?? 0;
    const from = shown === 0 ? 0 : this.offset + 1;
    const to = this.offset + shown;
    const lastOffset = Math.max(0, Math.floor((total - 1) / this.limit) * this.limit);
    const go = (offset: number) => () => {
      this.offset = offset;
      void this.load();
    };
    const button = (label: string, text: string, enabled: boolean, action: () => void) =>
      h(
        'button',
        {
          type: 'button',
          class: 'secondary small',
          'aria-label': label,
          disabled: !enabled,
          onclick: action,
        },
        text,
      );
    const next = page.next_uri;
    this.parts.pager.replaceChildren(
      button('First page', '⇤', this.offset > 0, go(0)),
      button('Previous page', '←', this.offset > 0, go(Math.max(0, this.offset - this.limit))),
      h(
        'span',
        { class: 'page-position' },
        shown === 0
          ? 'No rows'
          : `Rows ${numberFormat.format(from)}–${numberFormat.format(to)} of ${numberFormat.format(total)}`,
      ),
      // Next follows next_uri, as the API intends: it pins the execution and every parameter.
      button('Next page', '→', next !== undefined, () => {
        if (next) void this.load(undefined, samePath(next));
      }),
      button('Last page', '⇥', next !== undefined, go(lastOffset)),
    );
  }
}

/** The header: a button per column that sorts by it, marked with the current sort. */
function headRow(
  names: string[],
  types: string[],
  numeric: boolean[],
  sort: Sort | undefined,
  sortBy: (name: string) => void,
): HTMLTableSectionElement {
  const row = h(
    'tr',
    {},
    h('th', { scope: 'col', class: 'row-number' }, h('span', { class: 'visually-hidden' }, 'Row'), '#'),
  );
  names.forEach((name, i) => {
    const sorted = sort?.column === name ? (sort.descending ? 'descending' : 'ascending') : undefined;
    const button = h(
      'button',
      {
        type: 'button',
        class: 'sort',
        'data-column': name,
        title: `Sort by ${name}`,
        onclick: () => sortBy(name),
      },
      h('span', { class: 'column-title' }, name),
      h('span', { class: 'column-type' }, types[i] ?? ''),
      h(
        'span',
        { class: 'sort-mark', 'aria-hidden': 'true' },
        sorted === 'ascending' ? '▲' : sorted === 'descending' ? '▼' : '',
      ),
    );
    row.append(h('th', { scope: 'col', 'aria-sort': sorted, class: numeric[i] ? 'num' : undefined }, button));
  });
  row.append(filler());
  return h('thead', {}, row);
}

/**
 * An empty last column takes the room the data does not need, so that narrow results keep
 * their columns as wide as their values rather than spread over the page.
 */
function filler(): HTMLTableCellElement {
  const td = document.createElement('td');
  td.className = 'filler';
  td.setAttribute('aria-hidden', 'true');
  return td;
}

/** The page's rows, numbered from `first`, as one fragment: a 1,000-row page lays out once. */
function bodyRows(
  rows: Record<string, CellValue>[],
  names: string[],
  numeric: boolean[],
  first: number,
): HTMLTableSectionElement {
  const body = document.createElement('tbody');
  rows.forEach((row, r) => {
    const tr = document.createElement('tr');
    const number = document.createElement('td');
    number.className = 'row-number';
    number.textContent = String(first + r);
    tr.append(number);
    names.forEach((name, i) => {
      const td = document.createElement('td');
      const value = row[name] as CellValue;
      const text = cellText(value);
      td.textContent = text;
      if (value === null) td.className = 'null';
      else if (numeric[i]) td.className = 'num';
      if (text.length > 40) td.title = text;
      tr.append(td);
    });
    tr.append(filler());
    body.append(tr);
  });
  return body;
}

/** next_uri is absolute (PUBLIC_BASE_URL); the page only ever calls its own origin. */
function samePath(uri: string): string {
  const url = new URL(uri, location.href);
  return `${url.pathname}${url.search}`;
}

function pageOffset(path: string): number {
  const offset = new URL(path, location.href).searchParams.get('offset');
  return offset ? Number(offset) : 0;
}
