import { Api, KeyRejected } from './api.js';
import type { Account } from './api-types.js';

/**
 * Signing in with an API key, the same on every page: the key form, the check against
 * GET /v1/account, the key kept for the tab, and signing out (by the person, or because the
 * service stopped accepting the key). What a page shows once signed in is its own (hooks).
 */

/** sessionStorage, not localStorage: the key is forgotten when the tab closes. */
const KEY_STORAGE = 'table-service.api-key';

export const WRONG_KEY =
  'This API key was not accepted. Check that you copied the whole key, or ask for a new one.';

export interface SignedIn {
  api: Api;
  account: Account;
}

export interface KeyForm {
  /** Shown while signed out. */
  section: HTMLElement;
  form: HTMLFormElement;
  input: HTMLInputElement;
  error: HTMLElement;
  forget: HTMLButtonElement;
}

export interface SessionHooks {
  /** The key was accepted: show what it gives access to. */
  signedIn(session: SignedIn): Promise<void> | void;
  /** Signed out: hide and forget what the key showed. */
  signedOut(): void;
}

export class KeySession {
  private session: SignedIn | undefined;

  constructor(
    private readonly parts: KeyForm,
    private readonly hooks: SessionHooks,
  ) {
    parts.form.addEventListener('submit', (event) => {
      event.preventDefault();
      const key = parts.input.value.trim();
      if (key === '') {
        this.showError('Enter your API key.');
        parts.input.focus();
        return;
      }
      void this.signIn(key);
    });
    parts.forget.addEventListener('click', () => this.signOut());
  }

  /** The account and its API client; undefined while signed out. */
  get current(): SignedIn | undefined {
    return this.session;
  }

  /** The API client, for parts that only act while signed in. */
  get api(): Api {
    if (!this.session) throw new Error('not signed in');
    return this.session.api;
  }

  /** Signs in again with the key kept for this tab; false when there is none. */
  resume(): boolean {
    const saved = sessionStorage.getItem(KEY_STORAGE);
    if (!saved) return false;
    void this.signIn(saved);
    return true;
  }

  async signIn(key: string): Promise<void> {
    const api = new Api(key);
    this.parts.error.textContent = '';
    this.parts.input.removeAttribute('aria-invalid');
    let account: Account;
    try {
      account = await api.get<Account>('/v1/account');
    } catch (error) {
      this.signOut(
        error instanceof KeyRejected
          ? WRONG_KEY
          : `The key could not be checked: ${(error as Error).message}. Try again in a moment.`,
      );
      return;
    }
    this.session = { api, account };
    sessionStorage.setItem(KEY_STORAGE, key);
    this.parts.input.value = '';
    this.parts.section.hidden = true;
    await this.hooks.signedIn(this.session);
  }

  signOut(message?: string): void {
    this.session = undefined;
    sessionStorage.removeItem(KEY_STORAGE);
    this.hooks.signedOut();
    this.parts.section.hidden = false;
    if (message) this.showError(message);
    this.parts.input.focus();
  }

  /** A failed request: a key no longer accepted signs out (true); anything else is the caller's. */
  signedOutBy(error: unknown): boolean {
    if (!(error instanceof KeyRejected)) return false;
    this.signOut(WRONG_KEY);
    return true;
  }

  private showError(message: string): void {
    this.parts.error.textContent = message;
    this.parts.input.setAttribute('aria-invalid', 'true');
  }
}
