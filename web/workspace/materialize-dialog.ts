import type { Api } from '../shared/api.js';
import type { Account, SavedQuery } from '../shared/api-types.js';

/**
 * "Materialize on a schedule…": keeps a saved query's result as a table `result_<name>`,
 * refreshed on a cron schedule (POST /v1/materialized-views). The dialog stays open with the
 * service's message when it refuses (a name without `result_`, a schedule more often than every
 * 15 minutes, …).
 */

export class MaterializeDialog {
  private query: SavedQuery | undefined;
  private api: Api | undefined;
  private done: ((name: string | undefined) => void) | undefined;

  constructor(
    private readonly dialog: HTMLDialogElement,
    form: HTMLFormElement,
    private readonly fields: {
      name: HTMLInputElement;
      schedule: HTMLInputElement;
      isPrivate: HTMLInputElement;
      error: HTMLElement;
      cancel: HTMLButtonElement;
      submit: HTMLButtonElement;
    },
  ) {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.submit();
    });
    fields.cancel.addEventListener('click', () => this.dialog.close());
    dialog.addEventListener('close', () => this.finish(undefined));
  }

  /** Resolves with the view's full name once created, or undefined when cancelled. */
  ask(api: Api, account: Account, query: SavedQuery): Promise<string | undefined> {
    this.finish(undefined);
    this.api = api;
    this.query = query;
    const { name, schedule, isPrivate, error } = this.fields;
    const slug = query.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '');
    name.value = `result_${slug || `query_${query.query_id}`}`.slice(0, 128);
    schedule.value = '0 * * * *';
    isPrivate.checked = query.is_private;
    isPrivate.disabled = account.plan !== 'premium' && !query.is_private;
    error.textContent = '';
    this.dialog.showModal();
    name.focus();
    return new Promise((resolve) => {
      this.done = resolve;
    });
  }

  private async submit(): Promise<void> {
    const { api, query } = this;
    if (!api || !query) return;
    const { name, schedule, isPrivate, error, submit } = this.fields;
    submit.disabled = true;
    error.textContent = '';
    try {
      const answer = await api.post<{ name: string }>('/v1/materialized-views', {
        name: name.value.trim(),
        query_id: query.query_id,
        cron_expression: schedule.value.trim(),
        is_private: isPrivate.checked,
      });
      this.finish(answer.name);
      this.dialog.close();
    } catch (failure) {
      error.textContent = (failure as Error).message;
    } finally {
      submit.disabled = false;
    }
  }

  private finish(name: string | undefined): void {
    const done = this.done;
    this.done = undefined;
    done?.(name);
  }
}
