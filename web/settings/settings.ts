import { byId } from '../shared/dom.js';
import { KeySession } from '../shared/key-session.js';
import { OwnTables } from './own-tables.js';

/**
 * The data settings page (/settings/data): enter the API key once per browser session, see
 * the account's tables, delete one after confirming. Signs in as the workspace does
 * (shared/key-session.ts), on the same API client.
 */

const accountSection = byId('account-section');
const signedInLine = byId('signed-in');

const session = new KeySession(
  {
    section: byId('key-section'),
    form: byId<HTMLFormElement>('key-form'),
    input: byId<HTMLInputElement>('api-key'),
    error: byId('key-error'),
    forget: byId<HTMLButtonElement>('forget-key'),
  },
  {
    signedIn: async ({ account }) => {
      accountSection.hidden = false;
      signedInLine.textContent = `Signed in as ${account.handle} (${account.plan} plan${account.admin ? ', admin' : ''}).`;
      await tables.load();
    },
    signedOut: () => {
      accountSection.hidden = true;
      tables.clear();
    },
  },
);

const tables = new OwnTables(
  {
    heading: byId('tables-heading'),
    status: byId('status'),
    empty: byId('empty'),
    table: byId<HTMLTableElement>('tables'),
    dialog: byId<HTMLDialogElement>('confirm-delete'),
    dialogText: byId('confirm-text'),
    cancel: byId<HTMLButtonElement>('confirm-cancel'),
    confirm: byId<HTMLButtonElement>('confirm-ok'),
  },
  session,
);

session.resume();
