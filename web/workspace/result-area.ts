import type { Api } from '../shared/api.js';
import { type ExecutionStatus, STATES } from '../shared/api-types.js';
import { h } from '../shared/dom.js';
import { type DownloadFormat, download } from './downloads.js';
import { sqlErrorPosition } from './error-position.js';
import type { ResultChart } from './result-chart.js';
import type { ResultsGrid } from './results-grid.js';
import type { SqlEditor } from './sql-editor.js';
import type { StatusLine } from './status-line.js';

/**
 * The results section: a finished execution's rows (grid, chart, downloads), or why there
 * are none; a refused or failed run's message, also marked in the SQL where it points.
 */

export interface ResultParts {
  /** Says why there is no result. */
  empty: HTMLElement;
  /** The grid and the chart, with their tabs. */
  body: HTMLElement;
  downloads: HTMLElement;
  runError: HTMLElement;
}

export class ResultArea {
  constructor(
    private readonly api: () => Api,
    private readonly parts: ResultParts,
    private readonly grid: ResultsGrid,
    private readonly chart: ResultChart,
    private readonly editor: SqlEditor,
    private readonly status: StatusLine,
  ) {}

  /** Shows a finished execution's result in the grid (and chart), or why it has none. */
  async showFinished(executionId: string, known?: ExecutionStatus): Promise<void> {
    const status =
      known ??
      (await this.api().get<ExecutionStatus>(`/v1/execution/${encodeURIComponent(executionId)}/status`));
    if (status.state !== STATES.completed && status.state !== STATES.completedPartial) {
      this.showNone(status.error?.message ?? `This execution has no result (${status.state}).`);
      return;
    }
    this.parts.empty.hidden = true;
    this.parts.body.hidden = false;
    this.parts.downloads.hidden = false;
    await this.grid.show(status);
  }

  showNone(message: string): void {
    this.clear();
    this.parts.body.hidden = true;
    this.parts.downloads.hidden = true;
    this.parts.empty.hidden = false;
    this.parts.empty.textContent = message;
  }

  /** A refusal or a failure: the message, marked in the SQL; the last result is gone with it. */
  showRunError(title: string, message: string): void {
    this.parts.runError.replaceChildren(h('p', { class: 'run-error-title' }, title), h('pre', {}, message));
    this.parts.runError.hidden = false;
    this.editor.showError(message, sqlErrorPosition(message, this.editor.text));
    this.showNone('No result: the query did not complete.');
  }

  clearRunError(): void {
    this.parts.runError.hidden = true;
    this.parts.runError.replaceChildren();
    this.editor.clearError();
  }

  clear(): void {
    this.grid.clear();
    this.chart.clear();
  }

  /** The result as the grid shows it (filters, sort), every row, as a file. */
  async download(format: DownloadFormat, button: HTMLButtonElement): Promise<void> {
    const view = this.grid.current;
    if (!view) return;
    const name = format === 'csv' ? 'CSV' : 'Parquet';
    button.disabled = true;
    this.status.announce(`Preparing the ${name} file…`);
    try {
      await download(this.api(), view, format);
      this.status.announce(`Downloaded the result as ${name}.`);
    } catch (error) {
      this.status.failed(error, 'The download failed');
    } finally {
      button.disabled = false;
    }
  }
}
