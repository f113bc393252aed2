import type { Api } from '../shared/api.js';
import type { Account, ExecutionStatus, SavedQuery } from '../shared/api-types.js';
import { showAddress } from './address-bar.js';
import type { MaterializeDialog } from './materialize-dialog.js';
import type { ParametersForm } from './parameters-form.js';
import type { ResultArea } from './result-area.js';
import type { SaveDetails, SaveDialog } from './save-dialog.js';
import type { SqlEditor } from './sql-editor.js';
import type { StatusLine } from './status-line.js';

/**
 * The query in the editor: a new one, or a saved query as last saved (opened, saved as new,
 * saved in place, archived, materialized as a view). Its heading and facts say which, and
 * whether the editor's text has changed since.
 */

export interface OpenQueryParts {
  heading: HTMLElement;
  facts: HTMLElement;
  runLabel: HTMLElement;
  archive: HTMLButtonElement;
  materialize: HTMLButtonElement;
  pipeline: HTMLButtonElement;
}

export interface OpenQueryHelpers {
  session: { readonly current: { api: Api; account: Account } | undefined };
  editor: SqlEditor;
  parameters: ParametersForm;
  status: StatusLine;
  results: ResultArea;
  saveDialog: SaveDialog;
  materializeDialog: MaterializeDialog;
  /** The saved queries changed (the list may show them). */
  savedQueriesChanged(): void;
  /** A view was made from the query (the list of views may show it). */
  materialized(): void;
}

export class OpenQuery {
  /** The saved query in the editor, as last saved; undefined for a new query. */
  private saved: SavedQuery | undefined;

  constructor(
    private readonly parts: OpenQueryParts,
    private readonly helpers: OpenQueryHelpers,
  ) {}

  get query(): SavedQuery | undefined {
    return this.saved;
  }

  /** Whether the account may change the query (its owner, or an admin). */
  get owned(): boolean {
    const account = this.helpers.session.current?.account;
    return (
      this.saved !== undefined &&
      account !== undefined &&
      (this.saved.owner === account.handle || account.admin)
    );
  }

  /** The editor's text is not the saved query's (always, for a new query). */
  get edited(): boolean {
    return this.saved === undefined || this.helpers.editor.text !== this.saved.query_sql;
  }

  /** SQL with {{parameters}} runs as a saved query (the service fills them in): saved first. */
  get savesBeforeRun(): boolean {
    return this.helpers.parameters.hasParameters && this.edited;
  }

  editorChanged(): void {
    this.helpers.parameters.update(this.helpers.editor.text);
    this.describe();
  }

  describe(): void {
    const query = this.saved;
    this.parts.heading.textContent = query ? query.name : 'New query';
    const facts: string[] = [];
    if (query) {
      facts.push(`#${query.query_id}`);
      if (query.is_private) facts.push('private');
      if (query.is_archived) facts.push('archived');
      if (!this.owned) facts.push(`by ${query.owner}`);
      if (this.edited) facts.push('edited, not saved');
    }
    this.parts.facts.textContent = facts.join(' · ');
    this.parts.archive.hidden = !query || !this.owned || query.is_archived;
    // Only a saved query as saved can be kept as a view, or run with what it reads.
    const asSaved = query !== undefined && !this.edited && !query.is_archived;
    this.parts.materialize.hidden = !asSaved;
    this.parts.pipeline.hidden = !asSaved;
    this.parts.runLabel.textContent = this.savesBeforeRun ? 'Save & run' : 'Run';
  }

  /** An empty editor for a new query. */
  startNew(): void {
    this.saved = undefined;
    this.helpers.parameters.load([]);
    this.helpers.editor.text = '';
    this.helpers.results.clearRunError();
    this.describe();
    showAddress(undefined);
    this.helpers.editor.focus();
  }

  /** No saved query open (a result from the history is shown on its own). */
  forget(): void {
    this.saved = undefined;
    this.describe();
  }

  async open(queryId: number): Promise<void> {
    const { session, editor, parameters, status, results } = this.helpers;
    const api = session.current?.api;
    if (!api) return;
    let query: SavedQuery;
    try {
      query = await api.get<SavedQuery>(`/v1/query/${queryId}`);
    } catch (error) {
      status.failed(error, `Query ${queryId} could not be opened`);
      return;
    }
    this.saved = query;
    parameters.load(query.parameters);
    editor.text = query.query_sql;
    results.clearRunError();
    this.describe();
    showAddress({ query: query.query_id });
    status.announce(`Opened query ${query.name}.`);
    this.parts.heading.focus();
    await this.showLatestResult(api, queryId);
  }

  /** The query's latest result, if it has one for the parameter values now in the form. */
  private async showLatestResult(api: Api, queryId: number): Promise<void> {
    try {
      const values = Object.entries(this.helpers.parameters.values())
        .map(([name, value]) => `params.${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
        .join('&');
      const latest = await api.get<ExecutionStatus>(
        `/v1/query/${queryId}/results?limit=1${values ? `&${values}` : ''}`,
      );
      if (latest.is_execution_finished && this.saved?.query_id === queryId)
        await this.helpers.results.showFinished(latest.execution_id);
    } catch {
      // Never run, or not for these values: the results stay as they are.
    }
  }

  /** Saves the editor's SQL: a new query through the dialog, or the open one in place. */
  async save(options: { asNew?: boolean } = {}): Promise<boolean> {
    const { session, editor, status, saveDialog } = this.helpers;
    const account = session.current?.account;
    if (!account) return false;
    const sql = editor.text;
    if (sql.trim() === '') {
      status.announce('Write a query before saving it.', true);
      editor.focus();
      return false;
    }
    const owned = this.owned && !options.asNew;
    const query = this.saved;
    const initial: SaveDetails = {
      name: owned && query ? query.name : query ? `${query.name} (copy)` : '',
      description: query?.description ?? '',
      isPrivate: owned && query ? query.is_private : false,
    };
    const title = owned ? 'Save query' : 'Save as a new query';
    const done = await saveDialog.ask(initial, account, title, (details) => this.store(details, sql, owned));
    if (!done || !this.saved) return false;
    // Keep the editor's text (the service may store it exactly as sent); mark it saved.
    this.describe();
    showAddress({ query: this.saved.query_id });
    status.announce(`Saved query ${this.saved.name} (#${this.saved.query_id}).`);
    this.helpers.savedQueriesChanged();
    return true;
  }

  /** Stores the query in place (`owned`) or as a new one, then reads it back as saved. */
  private async store(details: SaveDetails, sql: string, owned: boolean): Promise<void> {
    const api = this.helpers.session.current?.api;
    if (!api) throw new Error('not signed in');
    const body = {
      name: details.name,
      description: details.description,
      query_sql: sql,
      parameters: this.helpers.parameters.parameters(),
    };
    let id: number;
    if (owned && this.saved) {
      id = this.saved.query_id;
      await api.patch(`/v1/query/${id}`, body);
      if (details.isPrivate !== this.saved.is_private) {
        await api.post(`/v1/query/${id}/${details.isPrivate ? 'private' : 'unprivate'}`);
      }
    } else {
      id = (await api.post<{ query_id: number }>('/v1/query', { ...body, is_private: details.isPrivate }))
        .query_id;
    }
    this.saved = await api.get<SavedQuery>(`/v1/query/${id}`);
  }

  async archive(): Promise<void> {
    const query = this.saved;
    const api = this.helpers.session.current?.api;
    if (!query || !api) return;
    try {
      await api.post(`/v1/query/${query.query_id}/archive`);
      this.saved = await api.get<SavedQuery>(`/v1/query/${query.query_id}`);
    } catch (error) {
      this.helpers.status.failed(error, `Query ${query.name} could not be archived`);
      return;
    }
    this.describe();
    this.helpers.status.announce(
      `Archived query ${query.name}. It stays readable; it can no longer be run or changed.`,
    );
    this.helpers.savedQueriesChanged();
  }

  /** Keeps the saved query's result as a view on a schedule (the dialog asks how). */
  async materialize(): Promise<void> {
    const query = this.saved;
    const session = this.helpers.session.current;
    if (!query || !session) return;
    const name = await this.helpers.materializeDialog.ask(session.api, session.account, query);
    if (!name) return;
    this.helpers.status.announce(`Materialized as ${name}: its first refresh runs now.`);
    this.helpers.materialized();
  }
}
