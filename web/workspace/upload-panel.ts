import type { Api } from '../shared/api.js';
import { withQuery } from '../shared/api-path.js';
import type { UploadAnswer } from '../shared/api-types.js';
import { h } from '../shared/dom.js';
import { numberFormat, plural } from '../shared/format.js';

/**
 * Upload a file from the tables panel (issue 24): drop or choose a .csv, .parquet, .ndjson or
 * .jsonl file, see the typed columns (and the columns a few values would make text) from a dry
 * run of the upload, then confirm to store it. The file is sent as the body itself, twice: the
 * dry run types everything and stores nothing, so what is shown is exactly what will be stored.
 */

const CONTENT_TYPES: Record<string, string> = {
  csv: 'text/csv',
  parquet: 'application/vnd.apache.parquet',
  ndjson: 'application/x-ndjson',
  jsonl: 'application/x-ndjson',
};

export interface UploadElements {
  form: HTMLFormElement;
  dropZone: HTMLElement;
  file: HTMLInputElement;
  table: HTMLInputElement;
  tableShown: HTMLElement;
  isPrivate: HTMLInputElement;
  strict: HTMLInputElement;
  check: HTMLButtonElement;
  preview: HTMLElement;
  summary: HTMLElement;
  widened: HTMLElement;
  columns: HTMLTableSectionElement;
  confirm: HTMLButtonElement;
  cancel: HTMLButtonElement;
  status: HTMLElement;
  error: HTMLElement;
}

/** A table name from a file's name: `Trades 2024.csv` is `trades_2024`. */
export function tableNameOf(fileName: string): string {
  const base = fileName
    .replace(/\.[^.]*$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_');
  return /^[a-z]/.test(base) ? base : `t_${base}`;
}

export class UploadPanel {
  private chosen: File | undefined;

  constructor(
    private readonly api: () => Api,
    private readonly el: UploadElements,
    private readonly stored: (answer: UploadAnswer) => void,
  ) {
    el.file.addEventListener('change', () => this.choose(el.file.files?.[0]));
    el.dropZone.addEventListener('dragover', (event) => {
      event.preventDefault();
      el.dropZone.classList.add('dragging');
    });
    el.dropZone.addEventListener('dragleave', () => el.dropZone.classList.remove('dragging'));
    el.dropZone.addEventListener('drop', (event) => {
      event.preventDefault();
      el.dropZone.classList.remove('dragging');
      this.choose(event.dataTransfer?.files[0]);
    });
    el.table.addEventListener('input', () => this.nameChanged());
    el.form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.send(true);
    });
    el.confirm.addEventListener('click', () => void this.send(false));
    el.cancel.addEventListener('click', () => this.reset('Nothing was stored.'));
  }

  private choose(file: File | undefined): void {
    this.chosen = file;
    this.el.preview.hidden = true;
    this.el.error.textContent = '';
    if (!file) return;
    this.el.table.value = tableNameOf(file.name);
    this.nameChanged();
    this.el.status.textContent = `${file.name}, ${numberFormat.format(file.size)} bytes: check the types, then upload.`;
  }

  private nameChanged(): void {
    this.el.tableShown.textContent = this.el.table.value || '…';
    this.el.preview.hidden = true;
  }

  private reset(message: string): void {
    this.el.preview.hidden = true;
    this.el.status.textContent = message;
  }

  /** Sends the file: a dry run first (`dryRun`), then for real. */
  private async send(dryRun: boolean): Promise<void> {
    const file = this.chosen;
    this.el.error.textContent = '';
    if (!file) {
      this.el.error.textContent = 'Choose a file first.';
      return;
    }
    const type = CONTENT_TYPES[file.name.split('.').pop()?.toLowerCase() ?? ''];
    if (!type) {
      this.el.error.textContent =
        'Name the file .csv, .parquet, .ndjson or .jsonl: its extension says its format.';
      return;
    }
    const path = withQuery('/v1/table/upload/csv', {
      table_name: this.el.table.value,
      is_private: this.el.isPrivate.checked ? 'true' : undefined,
      strict: this.el.strict.checked ? 'true' : undefined,
      dry_run: dryRun ? 'true' : undefined,
    });
    this.busy(true, dryRun ? 'Checking the types…' : 'Uploading…');
    try {
      const answer = await this.api().postFile<UploadAnswer>(path, file, type);
      this.show(answer);
      if (dryRun) {
        this.el.status.textContent = 'Nothing is stored yet: upload to keep it.';
      } else {
        this.el.preview.hidden = true;
        this.el.status.textContent = `Stored ${answer.table_name}: ${plural(answer.row_count, 'row')}.`;
        this.stored(answer);
      }
    } catch (error) {
      this.el.preview.hidden = true;
      this.el.status.textContent = '';
      this.el.error.textContent = (error as Error).message;
    } finally {
      this.busy(false);
    }
  }

  private busy(on: boolean, message = ''): void {
    this.el.check.disabled = on;
    this.el.confirm.disabled = on;
    if (on) this.el.status.textContent = message;
  }

  private show(answer: UploadAnswer): void {
    this.el.summary.textContent = `${answer.table_name}: ${plural(answer.row_count, 'row')}, ${plural(answer.columns.length, 'column')}.`;
    this.el.widened.replaceChildren(...answer.widened.map((w) => h('li', { class: 'warning' }, w.message)));
    this.el.columns.replaceChildren(
      ...answer.columns.map((column) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row', class: 'upload-cell' }, column.name),
          h('td', { class: 'upload-cell' }, h('code', {}, column.type)),
        ),
      ),
    );
    this.el.confirm.textContent = `Upload as ${answer.table_name}`;
    this.el.preview.hidden = false;
  }
}
