// The data settings page: enter the API key once per browser session, see the account's
// tables, delete one after confirming. Plain script on the service's own API, no build.

(() => {
  /** sessionStorage, not localStorage: the key is forgotten when the tab closes. */
  const KEY_STORAGE = 'table-service.api-key';
  const PAGE_SIZE = 1000;

  const $ = (id) => document.getElementById(id);
  const keyForm = $('key-form');
  const keyInput = $('api-key');
  const keyError = $('key-error');
  const keySection = $('key-section');
  const accountSection = $('account-section');
  const signedIn = $('signed-in');
  const forgetButton = $('forget-key');
  const tablesHeading = $('tables-heading');
  const statusLine = $('status');
  const emptyNote = $('empty');
  const table = $('tables');
  const tableBody = table.querySelector('tbody');
  const dialog = $('confirm-delete');
  const dialogText = $('confirm-text');
  const cancelButton = $('confirm-cancel');
  const confirmButton = $('confirm-ok');

  let apiKey = null;
  let account = null;
  /** The table the open dialog is about, and the button that opened it (focus returns there). */
  let pending = null;

  class KeyRejected extends Error {}

  async function call(method, path) {
    const response = await fetch(path, {
      method,
      headers: { 'X-Service-Api-Key': apiKey, Accept: 'application/json' },
      cache: 'no-store',
      credentials: 'omit',
    });
    let body = null;
    try {
      body = await response.json();
    } catch {
      // A body that is not JSON is reported by status below.
    }
    if (response.status === 401) throw new KeyRejected();
    if (!response.ok) {
      const reason = body && typeof body.error === 'string' ? body.error : `HTTP ${response.status}`;
      throw new Error(reason);
    }
    return body;
  }

  function showKeyError(message) {
    keyError.textContent = message;
    keyInput.setAttribute('aria-invalid', 'true');
  }

  function clearKeyError() {
    keyError.textContent = '';
    keyInput.removeAttribute('aria-invalid');
  }

  function setStatus(message, isError = false) {
    statusLine.textContent = message;
    statusLine.classList.toggle('error', isError);
  }

  function signOut(message) {
    apiKey = null;
    account = null;
    sessionStorage.removeItem(KEY_STORAGE);
    accountSection.hidden = true;
    keySection.hidden = false;
    tableBody.replaceChildren();
    if (message) showKeyError(message);
    keyInput.focus();
  }

  const WRONG_KEY =
    'This API key was not accepted. Check that you copied the whole key, or ask for a new one.';

  async function signIn(key) {
    apiKey = key;
    clearKeyError();
    try {
      account = await call('GET', '/v1/account');
    } catch (error) {
      if (error instanceof KeyRejected) signOut(WRONG_KEY);
      else signOut(`The key could not be checked: ${error.message}. Try again in a moment.`);
      return;
    }
    sessionStorage.setItem(KEY_STORAGE, key);
    keyInput.value = '';
    keySection.hidden = true;
    accountSection.hidden = false;
    signedIn.textContent = `Signed in as ${account.handle} (${account.plan} plan${account.admin ? ', admin' : ''}).`;
    await loadTables();
  }

  /** The account's own tables: the list also holds other accounts' public ones. */
  async function fetchOwnTables() {
    const own = [];
    let offset = 0;
    for (;;) {
      const page = await call('GET', `/v1/tables?limit=${PAGE_SIZE}&offset=${offset}`);
      for (const entry of page.tables) if (entry.namespace === account.handle) own.push(entry);
      if (page.next_offset === undefined) return own;
      offset = page.next_offset;
    }
  }

  async function loadTables() {
    setStatus('Loading your tables…');
    let tables;
    try {
      tables = await fetchOwnTables();
    } catch (error) {
      if (error instanceof KeyRejected) signOut(WRONG_KEY);
      else setStatus(`Your tables could not be loaded: ${error.message}`, true);
      return;
    }
    renderTables(tables);
    setStatus(tables.length === 1 ? '1 table.' : `${tables.length} tables.`);
  }

  const numberFormat = new Intl.NumberFormat();
  const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

  function formatBytes(text) {
    const bytes = Number(text);
    if (!Number.isFinite(bytes)) return text;
    const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
    let value = bytes;
    let unit = 0;
    while (value >= 1000 && unit < units.length - 1) {
      value /= 1000;
      unit++;
    }
    return unit === 0
      ? `${numberFormat.format(value)} bytes`
      : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
  }

  function cell(content, className) {
    const td = document.createElement('td');
    if (className) td.className = className;
    if (typeof content === 'string') td.textContent = content;
    else td.append(content);
    return td;
  }

  function renderTables(tables) {
    tableBody.replaceChildren();
    table.hidden = tables.length === 0;
    emptyNote.hidden = tables.length > 0;
    for (const entry of tables) {
      const row = document.createElement('tr');
      const name = document.createElement('th');
      name.scope = 'row';
      name.textContent = entry.table_name;
      if (entry.description) name.title = entry.description;
      row.append(name);
      row.append(cell(numberFormat.format(entry.row_count), 'number'));
      row.append(cell(formatBytes(entry.table_size_bytes), 'number'));
      row.append(cell(entry.is_private ? 'Yes' : 'No'));
      const updated = document.createElement('time');
      updated.dateTime = entry.updated_at;
      updated.textContent = dateFormat.format(new Date(entry.updated_at));
      row.append(cell(updated));
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.className = 'danger';
      remove.textContent = 'Delete';
      remove.setAttribute('aria-label', `Delete table ${entry.full_name}`);
      remove.addEventListener('click', () => askToDelete(entry, remove));
      row.append(cell(remove));
      tableBody.append(row);
    }
  }

  function askToDelete(entry, opener) {
    pending = { entry, opener };
    const rows = entry.row_count === 1 ? '1 row' : `${numberFormat.format(entry.row_count)} rows`;
    dialogText.textContent = `${entry.full_name} and its ${rows} will be removed for good. This cannot be undone.`;
    confirmButton.disabled = false;
    dialog.showModal();
    // The safe choice has the focus: Enter on an accidental open cancels.
    cancelButton.focus();
  }

  function closeDialog() {
    if (dialog.open) dialog.close();
  }

  dialog.addEventListener('close', () => {
    const opener = pending?.opener;
    pending = null;
    if (opener?.isConnected) opener.focus();
  });

  cancelButton.addEventListener('click', closeDialog);

  confirmButton.addEventListener('click', async () => {
    if (!pending) return;
    const { entry } = pending;
    confirmButton.disabled = true;
    const path = `/v1/table/${encodeURIComponent(entry.namespace)}/${encodeURIComponent(entry.table_name)}`;
    try {
      await call('DELETE', path);
    } catch (error) {
      closeDialog();
      if (error instanceof KeyRejected) signOut(WRONG_KEY);
      else setStatus(`${entry.full_name} could not be deleted: ${error.message}`, true);
      return;
    }
    pending.opener = null;
    closeDialog();
    await loadTables();
    setStatus(`Table ${entry.full_name} deleted.`);
    tablesHeading.focus();
  });

  keyForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const key = keyInput.value.trim();
    if (key === '') {
      showKeyError('Enter your API key.');
      keyInput.focus();
      return;
    }
    signIn(key);
  });

  forgetButton.addEventListener('click', () => signOut());

  const saved = sessionStorage.getItem(KEY_STORAGE);
  if (saved) signIn(saved);
})();
