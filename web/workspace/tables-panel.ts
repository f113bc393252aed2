import type { Api } from '../shared/api.js';
import type { Account, TableEntry } from '../shared/api-types.js';
import { append, h } from '../shared/dom.js';
import { formatBytes, numberFormat, plural } from '../shared/format.js';
import { allTables } from '../shared/table-list.js';
import { sqlName } from './result-values.js';

/**
 * The tables panel: the caller's tables and other accounts' public ones (what GET /v1/tables
 * lists), with columns, types, rows and size, filtered by name as one types. Choosing a
 * table hands `namespace.table` to the editor; choosing a column, its name.
 */

export interface TablesEvents {
  chooseTable(table: TableEntry, reference: string): void;
  chooseColumn(name: string): void;
  loaded(tables: TableEntry[]): void;
}

export class TablesPanel {
  private tables: TableEntry[] = [];
  private readonly expanded = new Set<string>();

  constructor(
    private readonly list: HTMLElement,
    private readonly filterInput: HTMLInputElement,
    private readonly status: HTMLElement,
    private readonly events: TablesEvents,
  ) {
    filterInput.addEventListener('input', () => this.render());
  }

  async load(api: Api, account: Account): Promise<void> {
    this.status.textContent = 'Loading tables…';
    const tables = await allTables(api);
    // The caller's own first, then the rest by name.
    const own = (t: TableEntry) => (t.namespace === account.handle ? 0 : 1);
    tables.sort((a, b) => own(a) - own(b) || a.full_name.localeCompare(b.full_name));
    this.tables = tables;
    this.render();
    this.events.loaded(tables);
  }

  private render(): void {
    const wanted = this.filterInput.value.trim().toLowerCase();
    const shown = wanted
      ? this.tables.filter((t) => t.full_name.toLowerCase().includes(wanted))
      : this.tables;
    this.list.replaceChildren();
    for (const table of shown) this.list.append(this.item(table));
    if (this.tables.length === 0)
      this.status.textContent = 'No tables yet: upload a file below, or through the API.';
    else if (wanted)
      this.status.textContent = `${plural(shown.length, 'table')} of ${numberFormat.format(this.tables.length)} match.`;
    else this.status.textContent = plural(this.tables.length, 'table');
  }

  private item(table: TableEntry): HTMLLIElement {
    const open = this.expanded.has(table.full_name);
    const columnsId = `columns-${table.full_name.replace(/[^a-z0-9_]/gi, '-')}`;
    const reference = `${sqlName(table.namespace)}.${sqlName(table.table_name)}`;
    const toggle = h(
      'button',
      {
        type: 'button',
        class: 'disclosure',
        'aria-expanded': String(open),
        'aria-controls': columnsId,
        'aria-label': `Columns of ${table.full_name}`,
        title: open ? 'Hide columns' : 'Show columns',
        onclick: () => {
          if (this.expanded.has(table.full_name)) this.expanded.delete(table.full_name);
          else this.expanded.add(table.full_name);
          const item = this.item(table);
          toggle.closest('li')?.replaceWith(item);
          item.querySelector<HTMLButtonElement>('.disclosure')?.focus();
        },
      },
      open ? '▾' : '▸',
    );
    const choose = h(
      'button',
      {
        type: 'button',
        class: 'table-name',
        title: table.description
          ? `${table.description}\nInsert ${reference} into the editor`
          : `Insert ${reference} into the editor`,
        onclick: () => this.events.chooseTable(table, reference),
      },
      h('span', { class: 'namespace' }, `${table.namespace}.`),
      table.table_name,
    );
    const facts = h(
      'p',
      { class: 'table-facts' },
      `${plural(table.row_count, 'row')} · ${formatBytes(table.table_size_bytes)}`,
      table.is_private ? h('span', { class: 'badge' }, 'private') : null,
    );
    const item = h('li', { class: 'table-item' }, h('div', { class: 'table-line' }, toggle, choose), facts);
    if (open) {
      const columns = h('ul', { class: 'column-list', id: columnsId });
      for (const column of table.columns) {
        append(columns, [
          h(
            'li',
            {},
            h(
              'button',
              {
                type: 'button',
                class: 'column-name',
                title: `Insert ${sqlName(column.name)} into the editor`,
                onclick: () => this.events.chooseColumn(sqlName(column.name)),
              },
              column.name,
            ),
            h('span', { class: 'column-type' }, column.type),
          ),
        ]);
      }
      item.append(columns);
    }
    return item;
  }
}
