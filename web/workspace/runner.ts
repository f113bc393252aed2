import { type Api, ApiError } from '../shared/api.js';
import { type ExecuteAnswer, type ExecutionStatus, STATES } from '../shared/api-types.js';
import { formatDuration } from '../shared/format.js';
import { showAddress } from './address-bar.js';
import { describeProgress, ExecutionWatch } from './execution-watch.js';
import type { OpenQuery } from './open-query.js';
import type { ParametersForm } from './parameters-form.js';
import type { PipelineProgress } from './pipeline-progress.js';
import type { ResultArea } from './result-area.js';
import type { SqlEditor } from './sql-editor.js';
import type { StatusLine } from './status-line.js';

/**
 * Running what the editor holds, one execution at a time: submitting it, following it to its
 * end (execution-watch.ts), cancelling it, and showing its result or why it has none. Also
 * runs the open saved query's pipeline.
 */

export interface RunnerParts {
  run: HTMLButtonElement;
  cancel: HTMLButtonElement;
  pipeline: HTMLButtonElement;
}

export interface RunnerHelpers {
  session: { readonly current: { api: Api } | undefined; signedOutBy(error: unknown): boolean };
  editor: SqlEditor;
  parameters: ParametersForm;
  openQuery: OpenQuery;
  results: ResultArea;
  status: StatusLine;
  pipeline: PipelineProgress;
}

export class Runner {
  /** The execution being followed; one at a time. */
  private watch: ExecutionWatch | undefined;

  constructor(
    private readonly parts: RunnerParts,
    private readonly helpers: RunnerHelpers,
  ) {
    parts.run.addEventListener('click', () => void this.run());
    parts.cancel.addEventListener('click', () => void this.cancel());
    parts.pipeline.addEventListener('click', () => void this.runPipeline());
  }

  /**
   * Runs what the editor holds: the open saved query as saved (with the form's parameter
   * values); any other SQL without parameters ad hoc; SQL with parameters is saved first,
   * since the service fills parameters in only for saved queries.
   */
  async run(): Promise<void> {
    const { session, editor, openQuery, status } = this.helpers;
    const api = session.current?.api;
    if (!api || this.watch) return;
    if (editor.text.trim() === '') {
      status.announce('Write a query first: choose a table on the left, or type SQL.', true);
      editor.focus();
      return;
    }
    if (openQuery.query?.is_archived && !openQuery.edited) {
      status.announce('This query is archived: save it as a new query to run it.', true);
      return;
    }
    if (openQuery.savesBeforeRun && !(await openQuery.save())) return;
    this.helpers.results.clearRunError();
    const started = performance.now();
    this.setRunning(true);
    status.announce('Submitting…');
    let submitted: ExecuteAnswer;
    try {
      submitted = await this.submit(api);
    } catch (error) {
      this.setRunning(false);
      this.refused(error);
      return;
    }
    await this.follow(submitted.execution_id, started);
  }

  /** The open saved query as saved, else the editor's SQL ad hoc. */
  private submit(api: Api): Promise<ExecuteAnswer> {
    const { editor, openQuery, parameters } = this.helpers;
    const query = openQuery.query;
    if (query && !openQuery.edited) {
      return api.post<ExecuteAnswer>(`/v1/query/${query.query_id}/execute`, {
        query_parameters: parameters.values(),
        performance: 'medium',
      });
    }
    return api.post<ExecuteAnswer>('/v1/sql/execute', { sql: editor.text, performance: 'medium' });
  }

  /** The service did not take the run: a refusal (400) says why, marked in the SQL. */
  private refused(error: unknown): void {
    if (this.helpers.session.signedOutBy(error)) return;
    this.helpers.status.announce('Not run.', true);
    this.helpers.results.showRunError(
      error instanceof ApiError && error.status === 400
        ? 'The service refused this query'
        : 'The query could not be run',
      error instanceof Error ? error.message : String(error),
    );
  }

  /** Follows an execution to its end, then shows its result or why it has none. */
  async follow(executionId: string, started: number): Promise<void> {
    const api = this.helpers.session.current?.api;
    if (!api) return;
    this.setRunning(true);
    const current = new ExecutionWatch(api, executionId, started, (progress) =>
      this.helpers.status.announce(describeProgress(progress)),
    );
    this.watch = current;
    const query = this.helpers.openQuery.query;
    showAddress(query ? { query: query.query_id } : { execution: executionId });
    let status: ExecutionStatus | undefined;
    try {
      status = await current.finished();
    } catch (error) {
      this.helpers.status.failed(error, 'The execution could not be followed');
    } finally {
      if (this.watch === current) this.watch = undefined;
      this.setRunning(false);
    }
    if (status) await this.ended(status, formatDuration(performance.now() - started));
  }

  private async ended(status: ExecutionStatus, elapsed: string): Promise<void> {
    const { results, status: line } = this.helpers;
    switch (status.state) {
      case STATES.completed:
      case STATES.completedPartial:
        line.announce(`Completed in ${elapsed}.`);
        await results.showFinished(status.execution_id, status);
        break;
      case STATES.cancelled:
        line.announce(`Cancelled after ${elapsed}.`);
        results.showNone('No result: the execution was cancelled.');
        break;
      case STATES.failed:
        line.announce(`Failed after ${elapsed}.`, true);
        results.showRunError('The query failed', status.error?.message ?? 'The service gave no reason.');
        break;
      default:
        line.announce(`The execution ended in state ${status.state}.`, true);
    }
  }

  async cancel(): Promise<void> {
    const current = this.watch;
    if (!current) return;
    this.parts.cancel.disabled = true;
    try {
      await current.cancel();
    } catch (error) {
      this.helpers.status.failed(error, 'The execution could not be cancelled');
    } finally {
      this.parts.cancel.disabled = false;
    }
  }

  /** Stops following (signed out): the execution itself goes on. */
  stop(): void {
    this.watch?.stop();
    this.watch = undefined;
  }

  /** Runs the open saved query's pipeline, showing its nodes as they progress, then its result. */
  async runPipeline(): Promise<void> {
    const { session, openQuery, status, results } = this.helpers;
    const query = openQuery.query;
    const api = session.current?.api;
    if (!query || !api) return;
    this.parts.pipeline.disabled = true;
    try {
      const ran = await this.helpers.pipeline.run(api, query.query_id);
      const last = ran.node_executions[ran.node_executions.length - 1];
      status.announce(`Pipeline ${ran.status}.`, ran.status === 'failed');
      const executionId = last?.query_execution_status.execution_id;
      if (ran.status === 'completed' && executionId && openQuery.query?.query_id === query.query_id)
        await results.showFinished(executionId);
    } catch (error) {
      status.failed(error, 'The pipeline could not be run');
    } finally {
      this.parts.pipeline.disabled = false;
    }
  }

  private setRunning(running: boolean): void {
    this.parts.run.disabled = running;
    this.parts.cancel.hidden = !running;
    this.parts.run.setAttribute('aria-busy', String(running));
    this.helpers.status.busy(running);
  }
}
