import type { Api } from '../shared/api.js';
import type { Account, TableEntry } from '../shared/api-types.js';
import { h } from '../shared/dom.js';
import { formatBytes, numberFormat } from '../shared/format.js';
import { allTables } from '../shared/table-list.js';

/**
 * The data page's list of the account's own tables (GET /v1/tables also lists other accounts'
 * public ones), each with a Delete button that asks in a dialog before DELETE /v1/table/….
 */

export interface OwnTablesParts {
  heading: HTMLElement;
  status: HTMLElement;
  empty: HTMLElement;
  table: HTMLTableElement;
  dialog: HTMLDialogElement;
  dialogText: HTMLElement;
  cancel: HTMLButtonElement;
  confirm: HTMLButtonElement;
}

/** Requests made while signed in; a rejected key signs the page out. */
export interface OwnTablesSession {
  readonly current: { api: Api; account: Account } | undefined;
  signedOutBy(error: unknown): boolean;
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

const cell = (content: Node | string, className?: string) => h('td', { class: className }, content);

export class OwnTables {
  private readonly body: HTMLTableSectionElement;
  /** The table the open dialog is about, and the button that opened it (focus returns there). */
  private pending: { entry: TableEntry; opener: HTMLButtonElement | undefined } | undefined;

  constructor(
    private readonly parts: OwnTablesParts,
    private readonly session: OwnTablesSession,
  ) {
    this.body = parts.table.tBodies[0] as HTMLTableSectionElement;
    parts.dialog.addEventListener('close', () => {
      const opener = this.pending?.opener;
      this.pending = undefined;
      if (opener?.isConnected) opener.focus();
    });
    parts.cancel.addEventListener('click', () => this.closeDialog());
    parts.confirm.addEventListener('click', () => void this.deletePending());
  }

  async load(): Promise<void> {
    const signedIn = this.session.current;
    if (!signedIn) return;
    this.setStatus('Loading your tables…');
    let tables: TableEntry[];
    try {
      tables = (await allTables(signedIn.api)).filter((t) => t.namespace === signedIn.account.handle);
    } catch (error) {
      if (!this.session.signedOutBy(error))
        this.setStatus(`Your tables could not be loaded: ${(error as Error).message}`, true);
      return;
    }
    this.render(tables);
    this.setStatus(tables.length === 1 ? '1 table.' : `${tables.length} tables.`);
  }

  clear(): void {
    this.body.replaceChildren();
  }

  private setStatus(message: string, isError = false): void {
    this.parts.status.textContent = message;
    this.parts.status.classList.toggle('error', isError);
  }

  private render(tables: TableEntry[]): void {
    this.parts.table.hidden = tables.length === 0;
    this.parts.empty.hidden = tables.length > 0;
    this.body.replaceChildren(...tables.map((entry) => this.row(entry)));
  }

  private row(entry: TableEntry): HTMLTableRowElement {
    const remove = h(
      'button',
      { type: 'button', class: 'danger', 'aria-label': `Delete table ${entry.full_name}` },
      'Delete',
    );
    remove.addEventListener('click', () => this.askToDelete(entry, remove));
    const updated = h('time', { datetime: entry.updated_at }, dateFormat.format(new Date(entry.updated_at)));
    return h(
      'tr',
      {},
      h('th', { scope: 'row', title: entry.description || undefined }, entry.table_name),
      cell(numberFormat.format(entry.row_count), 'number'),
      cell(formatBytes(entry.table_size_bytes), 'number'),
      cell(entry.is_private ? 'Yes' : 'No'),
      cell(updated),
      cell(remove),
    );
  }

  private askToDelete(entry: TableEntry, opener: HTMLButtonElement): void {
    this.pending = { entry, opener };
    const rows = entry.row_count === 1 ? '1 row' : `${numberFormat.format(entry.row_count)} rows`;
    this.parts.dialogText.textContent = `${entry.full_name} and its ${rows} will be removed for good. This cannot be undone.`;
    this.parts.confirm.disabled = false;
    this.parts.dialog.showModal();
    // The safe choice has the focus: Enter on an accidental open cancels.
    this.parts.cancel.focus();
  }

  private closeDialog(): void {
    if (this.parts.dialog.open) this.parts.dialog.close();
  }

  private async deletePending(): Promise<void> {
    const pending = this.pending;
    const api = this.session.current?.api;
    if (!pending || !api) return;
    const { entry } = pending;
    this.parts.confirm.disabled = true;
    try {
      await api.delete(
        `/v1/table/${encodeURIComponent(entry.namespace)}/${encodeURIComponent(entry.table_name)}`,
      );
    } catch (error) {
      this.closeDialog();
      if (!this.session.signedOutBy(error))
        this.setStatus(`${entry.full_name} could not be deleted: ${(error as Error).message}`, true);
      return;
    }
    // The row and its button are gone: the focus goes to the list's heading instead.
    pending.opener = undefined;
    this.closeDialog();
    await this.load();
    this.setStatus(`Table ${entry.full_name} deleted.`);
    this.parts.heading.focus();
  }
}
