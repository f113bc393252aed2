import { Api, ApiError, KeyRejected } from './api.js';
import {
  type Account,
  type ExecuteAnswer,
  type ExecutionStatus,
  type SavedQuery,
  STATES,
  type TableEntry,
} from './api-types.js';
import { byId, h } from './dom.js';
import { download } from './downloads.js';
import { describeProgress, ExecutionWatch } from './execution-watch.js';
import { formatDuration } from './format.js';
import { HistoryPanel } from './history-panel.js';
import { MaterializeDialog } from './materialize-dialog.js';
import { ParametersForm } from './parameters-form.js';
import { PipelineProgress } from './pipeline-progress.js';
import { QueriesPanel } from './queries-panel.js';
import { ResultChart } from './result-chart.js';
import { ResultsGrid } from './results-grid.js';
import { type SaveDetails, SaveDialog } from './save-dialog.js';
import { SqlEditor } from './sql-editor.js';
import { TablesPanel } from './tables-panel.js';
import { Tabs } from './tabs.js';
import { UploadPanel } from './upload-panel.js';
import { ViewsPanel } from './views-panel.js';

/**
 * The workspace page (issue 15): the person's key, then tables, editor, run, results, chart,
 * saved queries and downloads, all through the service's public API (DESIGN §5, §10).
 * This file wires the parts together and holds the page's state: the key, the open query,
 * the running execution.
 */

/** sessionStorage, not localStorage: the key is forgotten when the tab closes (as on /settings/data). */
const KEY_STORAGE = 'table-service.api-key';
const WRONG_KEY = 'This API key was not accepted. Check that you copied the whole key, or ask for a new one.';

let api: Api | undefined;
let account: Account | undefined;
/** The saved query in the editor, as last saved; undefined for a new query. */
let openQuery: SavedQuery | undefined;
let watch: ExecutionWatch | undefined;

const currentApi = (): Api => {
  if (!api) throw new Error('not signed in');
  return api;
};

const keySection = byId('key-section');
const keyForm = byId<HTMLFormElement>('key-form');
const keyInput = byId<HTMLInputElement>('api-key');
const keyError = byId('key-error');
const workspace = byId('workspace');
const accountBar = byId('account-bar');
const signedIn = byId('signed-in');
const heading = byId('editor-heading');
const queryFacts = byId('query-facts');
const runButton = byId<HTMLButtonElement>('run');
const runLabel = byId('run-label');
const cancelButton = byId<HTMLButtonElement>('cancel');
const runStatus = byId('run-status');
const runError = byId('run-error');
const saveButton = byId<HTMLButtonElement>('save-query');
const archiveButton = byId<HTMLButtonElement>('archive-query');
const materializeButton = byId<HTMLButtonElement>('materialize-query');
const pipelineButton = byId<HTMLButtonElement>('run-pipeline');
const resultsEmpty = byId('results-empty');
const resultsBody = byId('results-body');
const downloads = byId('downloads');

const isMac = /Mac|iPhone|iPad/.test(navigator.userAgent);
byId('run-shortcut').textContent = isMac ? '⌘ Enter' : 'Ctrl+Enter';

const editor = new SqlEditor(byId('editor'), {
  run: () => void run(),
  change: () => editorChanged(),
});
const parameters = new ParametersForm(byId('parameters'), byId('parameter-fields'));

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
      announce(`Inserted ${table.full_name}.`);
    },
    chooseColumn: (name: string) => editor.insert(name),
    loaded: (list: TableEntry[]) => editor.setTables(list),
  },
);

new UploadPanel(
  currentApi,
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
  () => {
    if (account) void tables.load(currentApi(), account);
  },
);

const queries = new QueriesPanel(
  byId('query-list'),
  byId('queries-status'),
  byId<HTMLInputElement>('show-archived'),
  (query) => void openSavedQuery(query.query_id),
);

const views = new ViewsPanel(byId('view-list'), byId('views-status'), {
  openQuery: (queryId) => void openSavedQuery(queryId),
  announce: (message) => announce(message),
});

const historyPanel = new HistoryPanel(byId('history-list'), byId('history-status'), {
  openResult: (executionId) => void openResult(executionId),
  runSql: (sql) => void runAgain(sql),
  openQuery: (queryId) => void openSavedQuery(queryId),
});

const pipeline = new PipelineProgress(byId('pipeline'), byId('pipeline-summary'), byId('pipeline-nodes'));

const materializeDialog = new MaterializeDialog(
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
);

const sidebarTabs = new Tabs(byId('sidebar-tabs'), (panel) => {
  if (panel === 'queries-panel') void loadQueries();
  if (panel === 'views-panel') void loadPanel(() => views.load(currentApi()), 'views-status', 'Your views');
  if (panel === 'history-panel')
    void loadPanel(() => historyPanel.load(currentApi()), 'history-status', 'Your history');
});

const chart = new ResultChart(
  currentApi,
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
  currentApi,
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

const saveDialog = new SaveDialog(
  byId<HTMLDialogElement>('save-dialog'),
  byId<HTMLFormElement>('save-form'),
  {
    name: byId<HTMLInputElement>('save-name'),
    description: byId<HTMLTextAreaElement>('save-description'),
    isPrivate: byId<HTMLInputElement>('save-private'),
    privateHint: byId('save-private-hint'),
    error: byId('save-error'),
    cancel: byId<HTMLButtonElement>('save-cancel'),
    submit: byId<HTMLButtonElement>('save-submit'),
  },
);

// --- Messages -------------------------------------------------------------------------------

function announce(message: string, isError = false): void {
  runStatus.textContent = message;
  runStatus.classList.toggle('error', isError);
}

/**
 * Where in the SQL the service's message points, 0-based: "at position N" (the service's own
 * messages), or DuckDB's "LINE n:" with a caret under the spot.
 */
export function sqlErrorPosition(message: string, sql: string): number | undefined {
  const at = /\bat position (\d+)/.exec(message);
  if (at) return Number(at[1]);
  const line = /LINE (\d+): (.*)\n( *)\^/.exec(message);
  if (!line) return undefined;
  const lineNumber = Number(line[1]);
  const column = (line[3] as string).length - `LINE ${line[1]}: `.length;
  const lines = sql.split('\n');
  if (lineNumber < 1 || lineNumber > lines.length || column < 0) return undefined;
  let offset = 0;
  for (let i = 0; i < lineNumber - 1; i++) offset += (lines[i] as string).length + 1;
  // DuckDB shows a long line shortened around the spot; then only the line is known.
  return (line[2] as string) === lines[lineNumber - 1] ? offset + column : offset;
}

/** A refusal or a failure: the message, marked in the SQL; the last result is gone with it. */
function showRunError(title: string, message: string): void {
  runError.replaceChildren(h('p', { class: 'run-error-title' }, title), h('pre', {}, message));
  runError.hidden = false;
  editor.showError(message, sqlErrorPosition(message, editor.text));
  showNoResult('No result: the query did not complete.');
}

function showNoResult(message: string): void {
  grid.clear();
  chart.clear();
  resultsBody.hidden = true;
  downloads.hidden = true;
  resultsEmpty.hidden = false;
  resultsEmpty.textContent = message;
}

function clearRunError(): void {
  runError.hidden = true;
  runError.replaceChildren();
  editor.clearError();
}

function showRequestError(error: unknown, what: string): void {
  if (error instanceof KeyRejected) {
    signOut(WRONG_KEY);
    return;
  }
  announce(`${what}: ${error instanceof Error ? error.message : String(error)}`, true);
}

// --- The open query -------------------------------------------------------------------------

const ownsOpenQuery = () =>
  openQuery !== undefined && account !== undefined && (openQuery.owner === account.handle || account.admin);

const isEdited = () => openQuery === undefined || editor.text !== openQuery.query_sql;

function editorChanged(): void {
  parameters.update(editor.text);
  describeOpenQuery();
}

function describeOpenQuery(): void {
  heading.textContent = openQuery ? openQuery.name : 'New query';
  const facts: string[] = [];
  if (openQuery) {
    facts.push(`#${openQuery.query_id}`);
    if (openQuery.is_private) facts.push('private');
    if (openQuery.is_archived) facts.push('archived');
    if (!ownsOpenQuery()) facts.push(`by ${openQuery.owner}`);
    if (isEdited()) facts.push('edited, not saved');
  }
  queryFacts.textContent = facts.join(' · ');
  archiveButton.hidden = !openQuery || !ownsOpenQuery() || openQuery.is_archived;
  // Only a saved query as saved can be kept as a view, or run with what it reads.
  const asSaved = openQuery !== undefined && !isEdited() && !openQuery.is_archived;
  materializeButton.hidden = !asSaved;
  pipelineButton.hidden = !asSaved;
  // SQL with {{parameters}} runs as a saved query: the service fills them in.
  runLabel.textContent = parameters.hasParameters && (isEdited() || !openQuery) ? 'Save & run' : 'Run';
}

function newQuery(): void {
  openQuery = undefined;
  parameters.load([]);
  editor.text = '';
  clearRunError();
  describeOpenQuery();
  history.replaceState(null, '', location.pathname);
  editor.focus();
}

async function openSavedQuery(queryId: number): Promise<void> {
  let query: SavedQuery;
  try {
    query = await currentApi().get<SavedQuery>(`/v1/query/${queryId}`);
  } catch (error) {
    showRequestError(error, `Query ${queryId} could not be opened`);
    return;
  }
  openQuery = query;
  parameters.load(query.parameters);
  editor.text = query.query_sql;
  clearRunError();
  describeOpenQuery();
  history.replaceState(null, '', `#query=${query.query_id}`);
  announce(`Opened query ${query.name}.`);
  heading.focus();
  // Its latest result, if it has one (for the parameter values now in the form).
  try {
    const query = Object.entries(parameters.values())
      .map(([name, value]) => `params.${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
      .join('&');
    const latest = await currentApi().get<ExecutionStatus>(
      `/v1/query/${queryId}/results?limit=1${query ? `&${query}` : ''}`,
    );
    if (latest.is_execution_finished && openQuery?.query_id === queryId)
      await showFinished(latest.execution_id);
  } catch {
    // Never run, or not for these values: the results stay as they are.
  }
}

/** Saves the editor's SQL: a new query through the dialog, or the open one in place. */
async function save(options: { asNew?: boolean } = {}): Promise<boolean> {
  if (!account) return false;
  const sql = editor.text;
  if (sql.trim() === '') {
    announce('Write a query before saving it.', true);
    editor.focus();
    return false;
  }
  const owned = ownsOpenQuery() && !options.asNew;
  const initial: SaveDetails = {
    name: owned && openQuery ? openQuery.name : openQuery ? `${openQuery.name} (copy)` : '',
    description: openQuery?.description ?? '',
    isPrivate: owned && openQuery ? openQuery.is_private : false,
  };
  const saved = await saveDialog.ask(
    initial,
    account,
    owned ? 'Save query' : 'Save as a new query',
    async (details) => {
      const body = {
        name: details.name,
        description: details.description,
        query_sql: sql,
        parameters: parameters.parameters(),
      };
      let id: number;
      if (owned && openQuery) {
        id = openQuery.query_id;
        await currentApi().patch(`/v1/query/${id}`, body);
        if (details.isPrivate !== openQuery.is_private) {
          await currentApi().post(`/v1/query/${id}/${details.isPrivate ? 'private' : 'unprivate'}`);
        }
      } else {
        id = (
          await currentApi().post<{ query_id: number }>('/v1/query', {
            ...body,
            is_private: details.isPrivate,
          })
        ).query_id;
      }
      openQuery = await currentApi().get<SavedQuery>(`/v1/query/${id}`);
    },
  );
  if (!saved || !openQuery) return false;
  // Keep the editor's text (the service may store it exactly as sent); mark it saved.
  describeOpenQuery();
  history.replaceState(null, '', `#query=${openQuery.query_id}`);
  announce(`Saved query ${openQuery.name} (#${openQuery.query_id}).`);
  if (sidebarTabs.isSelected('queries-panel')) void loadQueries();
  return true;
}

async function archive(): Promise<void> {
  if (!openQuery) return;
  const query = openQuery;
  try {
    await currentApi().post(`/v1/query/${query.query_id}/archive`);
    openQuery = await currentApi().get<SavedQuery>(`/v1/query/${query.query_id}`);
  } catch (error) {
    showRequestError(error, `Query ${query.name} could not be archived`);
    return;
  }
  describeOpenQuery();
  announce(`Archived query ${query.name}. It stays readable; it can no longer be run or changed.`);
  if (sidebarTabs.isSelected('queries-panel')) void loadQueries();
}

async function loadPanel(load: () => Promise<void>, statusId: string, what: string): Promise<void> {
  try {
    await load();
  } catch (error) {
    if (error instanceof KeyRejected) signOut(WRONG_KEY);
    else byId(statusId).textContent = `${what} could not be loaded: ${(error as Error).message}`;
  }
}

/** Keeps the open saved query's result as a view on a schedule (the dialog asks how). */
async function materialize(): Promise<void> {
  if (!openQuery || !account) return;
  const name = await materializeDialog.ask(currentApi(), account, openQuery);
  if (!name) return;
  announce(`Materialized as ${name}: its first refresh runs now.`);
  sidebarTabs.selectPanel('views-panel');
}

/** Runs the open saved query's pipeline, showing its nodes as they progress, then its result. */
async function runPipeline(): Promise<void> {
  if (!openQuery || !api) return;
  const query = openQuery;
  pipelineButton.disabled = true;
  try {
    const status = await pipeline.run(api, query.query_id);
    const last = status.node_executions[status.node_executions.length - 1];
    announce(`Pipeline ${status.status}.`, status.status === 'failed');
    const executionId = last?.query_execution_status.execution_id;
    if (status.status === 'completed' && executionId && openQuery?.query_id === query.query_id)
      await showFinished(executionId);
  } catch (error) {
    showRequestError(error, 'The pipeline could not be run');
  } finally {
    pipelineButton.disabled = false;
  }
}

/** A result from the history, shown as `#execution=ID` shows it. */
async function openResult(executionId: string): Promise<void> {
  openQuery = undefined;
  describeOpenQuery();
  history.replaceState(null, '', `#execution=${executionId}`);
  try {
    await showFinished(executionId);
    announce('Opened a result from your history.');
  } catch (error) {
    showRequestError(error, 'That result could not be shown');
  }
}

/** An ad-hoc run's SQL from the history, in the editor as a new query, run again. */
async function runAgain(sql: string): Promise<void> {
  newQuery();
  editor.text = sql;
  editorChanged();
  await run();
}

async function loadQueries(): Promise<void> {
  try {
    await queries.load(currentApi());
  } catch (error) {
    if (error instanceof KeyRejected) signOut(WRONG_KEY);
    else byId('queries-status').textContent = `Your queries could not be loaded: ${(error as Error).message}`;
  }
}

// --- Running --------------------------------------------------------------------------------

function setRunning(running: boolean): void {
  runButton.disabled = running;
  cancelButton.hidden = !running;
  runButton.setAttribute('aria-busy', String(running));
  runStatus.classList.toggle('busy', running);
}

/**
 * Runs what the editor holds: the open saved query as saved (with the form's parameter
 * values); any other SQL without parameters ad hoc; SQL with parameters is saved first,
 * since the service fills parameters in only for saved queries.
 */
async function run(): Promise<void> {
  if (!api || watch) return;
  const sql = editor.text;
  if (sql.trim() === '') {
    announce('Write a query first: choose a table on the left, or type SQL.', true);
    editor.focus();
    return;
  }
  if (openQuery && !isEdited() && openQuery.is_archived) {
    announce('This query is archived: save it as a new query to run it.', true);
    return;
  }
  if (parameters.hasParameters && (isEdited() || !openQuery)) {
    if (!(await save())) return;
  }
  clearRunError();
  const asSaved = openQuery !== undefined && !isEdited();
  const started = performance.now();
  setRunning(true);
  announce('Submitting…');
  let submitted: ExecuteAnswer;
  try {
    submitted =
      asSaved && openQuery
        ? await api.post<ExecuteAnswer>(`/v1/query/${openQuery.query_id}/execute`, {
            query_parameters: parameters.values(),
            performance: 'medium',
          })
        : await api.post<ExecuteAnswer>('/v1/sql/execute', { sql, performance: 'medium' });
  } catch (error) {
    setRunning(false);
    if (error instanceof KeyRejected) return signOut(WRONG_KEY);
    announce('Not run.', true);
    showRunError(
      error instanceof ApiError && error.status === 400
        ? 'The service refused this query'
        : 'The query could not be run',
      error instanceof Error ? error.message : String(error),
    );
    return;
  }
  await follow(submitted.execution_id, started);
}

/** Follows an execution to its end, then shows its result or why it has none. */
async function follow(executionId: string, started: number): Promise<void> {
  if (!api) return;
  setRunning(true);
  const current = new ExecutionWatch(api, executionId, started, (progress) =>
    announce(describeProgress(progress)),
  );
  watch = current;
  history.replaceState(null, '', openQuery ? `#query=${openQuery.query_id}` : `#execution=${executionId}`);
  let status: ExecutionStatus | undefined;
  try {
    status = await current.finished();
  } catch (error) {
    showRequestError(error, 'The execution could not be followed');
  } finally {
    if (watch === current) watch = undefined;
    setRunning(false);
  }
  if (!status) return;
  const elapsed = formatDuration(performance.now() - started);
  switch (status.state) {
    case STATES.completed:
    case STATES.completedPartial:
      announce(`Completed in ${elapsed}.`);
      await showFinished(status.execution_id, status);
      break;
    case STATES.cancelled:
      announce(`Cancelled after ${elapsed}.`);
      showNoResult('No result: the execution was cancelled.');
      break;
    case STATES.failed:
      announce(`Failed after ${elapsed}.`, true);
      showRunError('The query failed', status.error?.message ?? 'The service gave no reason.');
      break;
    default:
      announce(`The execution ended in state ${status.state}.`, true);
  }
}

/** Shows a finished execution's result in the grid (and chart). */
async function showFinished(executionId: string, known?: ExecutionStatus): Promise<void> {
  const status =
    known ??
    (await currentApi().get<ExecutionStatus>(`/v1/execution/${encodeURIComponent(executionId)}/status`));
  if (status.state !== STATES.completed && status.state !== STATES.completedPartial) {
    showNoResult(status.error?.message ?? `This execution has no result (${status.state}).`);
    return;
  }
  resultsEmpty.hidden = true;
  resultsBody.hidden = false;
  downloads.hidden = false;
  await grid.show(status);
}

async function cancel(): Promise<void> {
  const current = watch;
  if (!current) return;
  cancelButton.disabled = true;
  try {
    await current.cancel();
  } catch (error) {
    showRequestError(error, 'The execution could not be cancelled');
  } finally {
    cancelButton.disabled = false;
  }
}

async function downloadAs(format: 'csv' | 'parquet', button: HTMLButtonElement): Promise<void> {
  const view = grid.current;
  if (!view || !api) return;
  button.disabled = true;
  announce(`Preparing the ${format === 'csv' ? 'CSV' : 'Parquet'} file…`);
  try {
    await download(api, view, format);
    announce(`Downloaded the result as ${format === 'csv' ? 'CSV' : 'Parquet'}.`);
  } catch (error) {
    showRequestError(error, 'The download failed');
  } finally {
    button.disabled = false;
  }
}

// --- Signing in -----------------------------------------------------------------------------

function signOut(message?: string): void {
  watch?.stop();
  watch = undefined;
  api = undefined;
  account = undefined;
  sessionStorage.removeItem(KEY_STORAGE);
  workspace.hidden = true;
  accountBar.hidden = true;
  keySection.hidden = false;
  grid.clear();
  chart.clear();
  if (message) {
    keyError.textContent = message;
    keyInput.setAttribute('aria-invalid', 'true');
  }
  keyInput.focus();
}

async function signIn(key: string): Promise<void> {
  const candidate = new Api(key);
  keyError.textContent = '';
  keyInput.removeAttribute('aria-invalid');
  try {
    account = await candidate.get<Account>('/v1/account');
  } catch (error) {
    signOut(
      error instanceof KeyRejected
        ? WRONG_KEY
        : `The key could not be checked: ${(error as Error).message}. Try again in a moment.`,
    );
    return;
  }
  api = candidate;
  sessionStorage.setItem(KEY_STORAGE, key);
  keyInput.value = '';
  keySection.hidden = true;
  workspace.hidden = false;
  accountBar.hidden = false;
  signedIn.textContent = `${account.handle} · ${account.plan}${account.admin ? ' · admin' : ''}`;
  describeOpenQuery();
  editor.focus();
  const loading = tables.load(candidate, account).catch((error) => {
    if (error instanceof KeyRejected) signOut(WRONG_KEY);
    else byId('tables-status').textContent = `Your tables could not be loaded: ${(error as Error).message}`;
  });
  await openFromAddress();
  await loading;
}

/** `#query=ID` opens a saved query, `#execution=ID` shows (or follows) an execution. */
async function openFromAddress(): Promise<void> {
  const hash = new URLSearchParams(location.hash.slice(1));
  const queryId = hash.get('query');
  const executionId = hash.get('execution');
  if (queryId && /^\d+$/.test(queryId)) await openSavedQuery(Number(queryId));
  else if (executionId) {
    try {
      const status = await currentApi().get<ExecutionStatus>(
        `/v1/execution/${encodeURIComponent(executionId)}/status`,
      );
      if (status.is_execution_finished) await showFinished(executionId, status);
      else await follow(executionId, performance.now());
    } catch (error) {
      showRequestError(error, 'That execution could not be shown');
    }
  }
}

keyForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const key = keyInput.value.trim();
  if (key === '') {
    keyError.textContent = 'Enter your API key.';
    keyInput.setAttribute('aria-invalid', 'true');
    keyInput.focus();
    return;
  }
  void signIn(key);
});

byId('forget-key').addEventListener('click', () => signOut());
// The skip link moves the focus without touching the address, which names the open query.
document.querySelector('.skip-link')?.addEventListener('click', (event) => {
  event.preventDefault();
  heading.focus();
});
runButton.addEventListener('click', () => void run());
cancelButton.addEventListener('click', () => void cancel());
saveButton.addEventListener('click', () => void save({ asNew: !ownsOpenQuery() }));
archiveButton.addEventListener('click', () => void archive());
materializeButton.addEventListener('click', () => void materialize());
pipelineButton.addEventListener('click', () => void runPipeline());
byId('new-query').addEventListener('click', () => newQuery());
byId('download-csv').addEventListener(
  'click',
  (event) => void downloadAs('csv', event.currentTarget as HTMLButtonElement),
);
byId('download-parquet').addEventListener(
  'click',
  (event) => void downloadAs('parquet', event.currentTarget as HTMLButtonElement),
);
// Ctrl/Cmd+Enter runs from anywhere in the workspace, e.g. a parameter's field (the editor
// handles it itself first).
document.addEventListener('keydown', (event) => {
  if (event.key !== 'Enter' || !(event.ctrlKey || event.metaKey) || event.defaultPrevented) return;
  if (workspace.hidden || (event.target as Element | null)?.closest('dialog')) return;
  event.preventDefault();
  void run();
});
window.addEventListener('hashchange', () => {
  if (api) void openFromAddress();
});

describeOpenQuery();
const saved = sessionStorage.getItem(KEY_STORAGE);
if (saved) void signIn(saved);
else keyInput.focus();
