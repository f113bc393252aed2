import type { ExecutionStatus, TableEntry } from '../shared/api-types.js';
import { byId } from '../shared/dom.js';
import { KeySession, type SignedIn } from '../shared/key-session.js';
import { readAddress } from './address.js';
import { showAddress } from './address-bar.js';
import { HistoryPanel } from './history-panel.js';
import { MaterializeDialog } from './materialize-dialog.js';
import { OpenQuery } from './open-query.js';
import { ParametersForm } from './parameters-form.js';
import { PipelineProgress } from './pipeline-progress.js';
import { QueriesPanel } from './queries-panel.js';
import { ResultArea } from './result-area.js';
import { ResultChart } from './result-chart.js';
import { ResultsGrid } from './results-grid.js';
import { Runner } from './runner.js';
import { SaveDialog } from './save-dialog.js';
import { SqlEditor } from './sql-editor.js';
import { StatusLine } from './status-line.js';
import { TablesPanel } from './tables-panel.js';
import { Tabs } from './tabs.js';
import { UploadPanel } from './upload-panel.js';
import { ViewsPanel } from './views-panel.js';

/**
 * The workspace page (issue 15): the person's key, then tables, editor, run, results, chart,
 * saved queries and downloads, all through the service's public API (DESIGN §5, §10).
 * This file builds the page's parts and wires them together; each keeps its own state:
 * the key (shared/key-session.ts), the query in the editor (open-query.ts), the execution
 * being run (runner.ts), the result shown (result-area.ts).
 */

const workspace = byId('workspace');
const accountBar = byId('account-bar');
const heading = byId('editor-heading');

const session = new KeySession(
  {
    section: byId('key-section'),
    form: byId<HTMLFormElement>('key-form'),
    input: byId<HTMLInputElement>('api-key'),
    error: byId('key-error'),
    forget: byId<HTMLButtonElement>('forget-key'),
  },
  { signedIn: (signedIn) => showWorkspace(signedIn), signedOut: () => hideWorkspace() },
);
const api = () => session.api;
const status = new StatusLine(byId('run-status'), session);

const editor = new SqlEditor(byId('editor'), {
  run: () => void runner.run(),
  change: () => openQuery.editorChanged(),
});
const parameters = new ParametersForm(byId('parameters'), byId('parameter-fields'));

// --- The sidebar: tables, upload, saved queries, views, history -----------------------------

const tables = new TablesPanel(
  byId('table-list'),
  byId<HTMLInputElement>('table-filter'),
  byId('tables-status'),
  {
    chooseTable: (table: TableEntry, reference: string) => {
      // An empty editor gets a whole query to run; otherwise the name goes where the cursor is.
      if (editor.text.trim() === '') {
        editor.text = `SELECT *\nFROM ${reference}\nLIMIT 100`;
        editor.focus();
      } else editor.insert(reference);
      status.announce(`Inserted ${table.full_name}.`);
    },
    chooseColumn: (name: string) => editor.insert(name),
    loaded: (list: TableEntry[]) => editor.setTables(list),
  },
);

new UploadPanel(
  api,
  {
    form: byId<HTMLFormElement>('upload-form'),
    dropZone: byId('drop-zone'),
    file: byId<HTMLInputElement>('upload-file'),
    table: byId<HTMLInputElement>('upload-table'),
    tableShown: byId('upload-table-shown'),
    isPrivate: byId<HTMLInputElement>('upload-private'),
    strict: byId<HTMLInputElement>('upload-strict'),
    check: byId<HTMLButtonElement>('upload-check'),
    preview: byId('upload-preview'),
    summary: byId('upload-summary'),
    widened: byId('upload-widened'),
    columns: byId<HTMLTableElement>('upload-columns').tBodies[0] as HTMLTableSectionElement,
    confirm: byId<HTMLButtonElement>('upload-confirm'),
    cancel: byId<HTMLButtonElement>('upload-cancel'),
    status: byId('upload-status'),
    error: byId('upload-error'),
  },
  () => void loadTables(),
);

const queries = new QueriesPanel(
  byId('query-list'),
  byId('queries-status'),
  byId<HTMLInputElement>('show-archived'),
  (query) => void openQuery.open(query.query_id),
);

const views = new ViewsPanel(byId('view-list'), byId('views-status'), {
  openQuery: (queryId) => void openQuery.open(queryId),
  announce: (message) => status.announce(message),
});

const historyPanel = new HistoryPanel(byId('history-list'), byId('history-status'), {
  openResult: (executionId) => void openResult(executionId),
  runSql: (sql) => void runAgain(sql),
  openQuery: (queryId) => void openQuery.open(queryId),
});

const sidebarTabs = new Tabs(byId('sidebar-tabs'), (panel) => {
  if (panel === 'queries-panel') void loadQueries();
  if (panel === 'views-panel') void loadPanel(({ api }) => views.load(api), 'views-status', 'Your views');
  if (panel === 'history-panel')
    void loadPanel(({ api }) => historyPanel.load(api), 'history-status', 'Your history');
});

/** Fills a sidebar list; a failure is said in its status line. */
async function loadPanel(
  load: (signedIn: SignedIn) => Promise<void>,
  statusId: string,
  what: string,
): Promise<void> {
  const current = session.current;
  if (!current) return;
  try {
    await load(current);
  } catch (error) {
    if (!session.signedOutBy(error))
      byId(statusId).textContent = `${what} could not be loaded: ${(error as Error).message}`;
  }
}

const loadQueries = () => loadPanel(({ api }) => queries.load(api), 'queries-status', 'Your queries');
const loadTables = () =>
  loadPanel(({ api, account }) => tables.load(api, account), 'tables-status', 'Your tables');

// --- Results: grid, chart, downloads --------------------------------------------------------

const chart = new ResultChart(
  api,
  {
    kind: byId<HTMLSelectElement>('chart-kind'),
    x: byId<HTMLSelectElement>('chart-x'),
    y: byId<HTMLFieldSetElement>('chart-y'),
    note: byId('chart-note'),
    figure: byId('chart'),
  },
  () => resultTabs.isSelected('chart-panel'),
);

const grid = new ResultsGrid(
  api,
  {
    container: byId('grid-container'),
    meta: byId('results-meta'),
    filterForm: byId<HTMLFormElement>('filter-form'),
    filterInput: byId<HTMLInputElement>('filter-input'),
    filterError: byId('filter-error'),
    pager: byId('pager'),
    pageSize: byId<HTMLSelectElement>('page-size'),
  },
  (view) => {
    const metadata = view.status.result_metadata;
    const columns = (metadata?.column_names ?? []).map((name, i) => ({
      name,
      type: metadata?.column_types[i] ?? '',
    }));
    chart.setView(view, columns);
  },
);

const resultTabs = new Tabs(byId('result-tabs'), (panel) => {
  if (panel === 'chart-panel') void chart.draw();
});

const results = new ResultArea(
  api,
  {
    empty: byId('results-empty'),
    body: byId('results-body'),
    downloads: byId('downloads'),
    runError: byId('run-error'),
  },
  grid,
  chart,
  editor,
  status,
);

// --- The query in the editor, and running it ------------------------------------------------

const openQuery = new OpenQuery(
  {
    heading,
    facts: byId('query-facts'),
    runLabel: byId('run-label'),
    archive: byId<HTMLButtonElement>('archive-query'),
    materialize: byId<HTMLButtonElement>('materialize-query'),
    pipeline: byId<HTMLButtonElement>('run-pipeline'),
  },
  {
    session,
    editor,
    parameters,
    status,
    results,
    saveDialog: new SaveDialog(byId<HTMLDialogElement>('save-dialog'), byId<HTMLFormElement>('save-form'), {
      name: byId<HTMLInputElement>('save-name'),
      description: byId<HTMLTextAreaElement>('save-description'),
      isPrivate: byId<HTMLInputElement>('save-private'),
      privateHint: byId('save-private-hint'),
      error: byId('save-error'),
      cancel: byId<HTMLButtonElement>('save-cancel'),
      submit: byId<HTMLButtonElement>('save-submit'),
    }),
    materializeDialog: new MaterializeDialog(
      byId<HTMLDialogElement>('materialize-dialog'),
      byId<HTMLFormElement>('materialize-form'),
      {
        name: byId<HTMLInputElement>('materialize-name'),
        schedule: byId<HTMLInputElement>('materialize-schedule'),
        isPrivate: byId<HTMLInputElement>('materialize-private'),
        error: byId('materialize-error'),
        cancel: byId<HTMLButtonElement>('materialize-cancel'),
        submit: byId<HTMLButtonElement>('materialize-submit'),
      },
    ),
    savedQueriesChanged: () => {
      if (sidebarTabs.isSelected('queries-panel')) void loadQueries();
    },
    materialized: () => sidebarTabs.selectPanel('views-panel'),
  },
);

const runner = new Runner(
  {
    run: byId<HTMLButtonElement>('run'),
    cancel: byId<HTMLButtonElement>('cancel'),
    pipeline: byId<HTMLButtonElement>('run-pipeline'),
  },
  {
    session,
    editor,
    parameters,
    openQuery,
    results,
    status,
    pipeline: new PipelineProgress(byId('pipeline'), byId('pipeline-summary'), byId('pipeline-nodes')),
  },
);

/** A result from the history, shown as `#execution=ID` shows it. */
async function openResult(executionId: string): Promise<void> {
  openQuery.forget();
  showAddress({ execution: executionId });
  try {
    await results.showFinished(executionId);
    status.announce('Opened a result from your history.');
  } catch (error) {
    status.failed(error, 'That result could not be shown');
  }
}

/** An ad-hoc run's SQL from the history, in the editor as a new query, run again. */
async function runAgain(sql: string): Promise<void> {
  openQuery.startNew();
  editor.text = sql;
  openQuery.editorChanged();
  await runner.run();
}

/** `#query=ID` opens a saved query, `#execution=ID` shows (or follows) an execution. */
async function openFromAddress(): Promise<void> {
  const address = readAddress(location.hash);
  if (!address) return;
  if ('query' in address) return openQuery.open(address.query);
  try {
    const id = encodeURIComponent(address.execution);
    const execution = await api().get<ExecutionStatus>(`/v1/execution/${id}/status`);
    if (execution.is_execution_finished) await results.showFinished(address.execution, execution);
    else await runner.follow(address.execution, performance.now());
  } catch (error) {
    status.failed(error, 'That execution could not be shown');
  }
}

// --- Signing in and out ---------------------------------------------------------------------

async function showWorkspace({ account }: SignedIn): Promise<void> {
  workspace.hidden = false;
  accountBar.hidden = false;
  byId('signed-in').textContent = `${account.handle} · ${account.plan}${account.admin ? ' · admin' : ''}`;
  openQuery.describe();
  editor.focus();
  const loading = loadTables();
  await openFromAddress();
  await loading;
}

function hideWorkspace(): void {
  runner.stop();
  workspace.hidden = true;
  accountBar.hidden = true;
  results.clear();
}

// --- The page's own controls ----------------------------------------------------------------

const isMac = /Mac|iPhone|iPad/.test(navigator.userAgent);
byId('run-shortcut').textContent = isMac ? '⌘ Enter' : 'Ctrl+Enter';
// The skip link moves the focus without touching the address, which names the open query.
document.querySelector('.skip-link')?.addEventListener('click', (event) => {
  event.preventDefault();
  heading.focus();
});
byId('save-query').addEventListener('click', () => void openQuery.save({ asNew: !openQuery.owned }));
byId('archive-query').addEventListener('click', () => void openQuery.archive());
byId('materialize-query').addEventListener('click', () => void openQuery.materialize());
byId('new-query').addEventListener('click', () => openQuery.startNew());
for (const format of ['csv', 'parquet'] as const) {
  byId(`download-${format}`).addEventListener(
    'click',
    (event) => void results.download(format, event.currentTarget as HTMLButtonElement),
  );
}
// Ctrl/Cmd+Enter runs from anywhere in the workspace, e.g. a parameter's field (the editor
// handles it itself first).
document.addEventListener('keydown', (event) => {
  if (event.key !== 'Enter' || !(event.ctrlKey || event.metaKey) || event.defaultPrevented) return;
  if (workspace.hidden || (event.target as Element | null)?.closest('dialog')) return;
  event.preventDefault();
  void runner.run();
});
window.addEventListener('hashchange', () => {
  if (session.current) void openFromAddress();
});

openQuery.describe();
if (!session.resume()) byId('api-key').focus();
