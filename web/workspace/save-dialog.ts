import type { Account } from '../shared/api-types.js';

/**
 * The dialog that names a query as it is saved: name (required), description, private.
 * Private queries need a premium key, as private tables do (DESIGN §10). The dialog stays
 * open with the service's message when saving fails.
 */

export interface SaveDetails {
  name: string;
  description: string;
  isPrivate: boolean;
}

interface Pending {
  save: (details: SaveDetails) => Promise<void>;
  resolve: (saved: boolean) => void;
}

export class SaveDialog {
  private pending: Pending | undefined;

  constructor(
    private readonly dialog: HTMLDialogElement,
    form: HTMLFormElement,
    private readonly fields: {
      name: HTMLInputElement;
      description: HTMLTextAreaElement;
      isPrivate: HTMLInputElement;
      privateHint: HTMLElement;
      error: HTMLElement;
      cancel: HTMLButtonElement;
      submit: HTMLButtonElement;
    },
  ) {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.submit();
    });
    fields.cancel.addEventListener('click', () => this.finish(false));
    dialog.addEventListener('close', () => this.finish(false));
  }

  /** Opens the dialog filled with `initial`; resolves true once `save` has succeeded. */
  ask(
    initial: SaveDetails,
    account: Account,
    title: string,
    save: (details: SaveDetails) => Promise<void>,
  ): Promise<boolean> {
    this.finish(false);
    const { name, description, isPrivate, privateHint, error } = this.fields;
    const heading = this.dialog.querySelector('h2');
    if (heading) heading.textContent = title;
    name.value = initial.name;
    name.removeAttribute('aria-invalid');
    description.value = initial.description;
    isPrivate.checked = initial.isPrivate;
    const free = account.plan !== 'premium';
    isPrivate.disabled = free && !initial.isPrivate;
    privateHint.textContent = free
      ? 'Private queries need a premium key.'
      : 'Only you can see or run a private query, and its results.';
    error.textContent = '';
    this.fields.submit.disabled = false;
    this.dialog.showModal();
    name.focus();
    name.select();
    return new Promise((resolve) => {
      this.pending = { save, resolve };
    });
  }

  private async submit(): Promise<void> {
    const pending = this.pending;
    if (!pending) return;
    const { name, description, isPrivate, error, submit } = this.fields;
    const details = {
      name: name.value.trim(),
      description: description.value.trim(),
      isPrivate: isPrivate.checked,
    };
    if (details.name === '') {
      error.textContent = 'Give the query a name.';
      name.setAttribute('aria-invalid', 'true');
      name.focus();
      return;
    }
    name.removeAttribute('aria-invalid');
    error.textContent = '';
    submit.disabled = true;
    try {
      await pending.save(details);
    } catch (failure) {
      error.textContent = failure instanceof Error ? failure.message : String(failure);
      submit.disabled = false;
      return;
    }
    this.finish(true);
  }

  private finish(saved: boolean): void {
    const pending = this.pending;
    this.pending = undefined;
    if (this.dialog.open) this.dialog.close();
    pending?.resolve(saved);
  }
}
