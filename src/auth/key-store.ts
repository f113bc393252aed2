import { hash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type ConfiguredKey, HANDLE_PATTERN, type Plan } from '../config/config.js';
import { type Account, RESERVED_NAMESPACES } from './account.js';

/**
 * API keys: those given in API_KEYS, and those in DATA_DIR/keys.json, which holds only
 * SHA-256 hashes (keys are 256 random bits, so a plain hash is enough). The file is written
 * by `keys create` while a server may be running; the server notices a changed file on the
 * next request that needs it, so new keys work without a restart.
 */

interface StoredKey {
  hash: string;
  handle: string;
  plan: Plan;
  admin: boolean;
  created_at: string;
}

interface KeyFile {
  keys: StoredKey[];
}

export const KEY_FILE_NAME = 'keys.json';
export const DEV_KEY_FILE_NAME = 'dev-api-key.txt';

/** How often a server looks at the key file at most, in ms. */
const RELOAD_INTERVAL_MS = 500;
/** Keys remembered after a successful identification; past this the oldest is forgotten. */
const MAX_REMEMBERED_KEYS = 10_000;

function hashKey(key: string): string {
  return hash('sha256', key);
}

export function generateKey(): string {
  return `sk_${randomBytes(32).toString('base64url')}`;
}

export function validateHandle(handle: string): string | undefined {
  if (!HANDLE_PATTERN.test(handle)) {
    return `handle "${handle}" must start with a lowercase letter, then lowercase letters, digits or _ (at most 63)`;
  }
  if (RESERVED_NAMESPACES.has(handle)) return `handle "${handle}" is reserved`;
  return undefined;
}

function readKeyFile(file: string): KeyFile {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { keys: [] };
    throw error;
  }
  const parsed = JSON.parse(text) as KeyFile;
  if (!Array.isArray(parsed.keys)) throw new Error(`${file} is not a key file (no "keys" array)`);
  return parsed;
}

/** Replaces the file in one rename, so a reader never sees half of it. */
function writeKeyFile(file: string, contents: KeyFile): void {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(contents, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(temporary, file);
}

export interface Identity {
  account: Account;
  /** The key's SHA-256 hash: names the key (rate limits count per key) without revealing it. */
  keyId: string;
}

export class KeyStore {
  private byHash = new Map<string, Account>();
  /**
   * Keys that identified an account, by the key itself, so that a key is hashed once and not
   * on every request (issue 17). Only keys that matched are kept (a client sending random
   * keys fills nothing), and the map is emptied whenever the keys are reloaded.
   */
  private identified = new Map<string, Identity>();
  private fileStamp = '';
  private lastCheck = 0;

  constructor(
    private readonly configured: readonly ConfiguredKey[],
    private readonly keyFile: string,
  ) {
    this.reload();
  }

  static forDataDir(configured: readonly ConfiguredKey[], dataDir: string): KeyStore {
    return new KeyStore(configured, path.join(dataDir, KEY_FILE_NAME));
  }

  get size(): number {
    return this.byHash.size;
  }

  /** The account a key belongs to, or undefined. */
  authenticate(key: string): Account | undefined {
    return this.identify(key)?.account;
  }

  /**
   * The account a key belongs to and the key's id, its SHA-256 hash. A key not seen before
   * is compared by its hash, so how long that takes can depend only on the hash of what was
   * sent, which tells an attacker nothing about any real key. A key that identified before
   * is found by itself: V8 compares two strings' contents only when their lengths and hashes
   * are equal, so a guess is turned away by a hash here too.
   */
  identify(key: string): Identity | undefined {
    if (key === '' || key.length > 512) return undefined;
    // Before the lookup: a reload empties the remembered keys.
    this.reloadIfChanged(false);
    const known = this.identified.get(key);
    if (known) return known;
    const keyId = hashKey(key);
    let account = this.byHash.get(keyId);
    if (!account && this.reloadIfChanged(true)) account = this.byHash.get(keyId);
    if (!account) return undefined;
    const identity = { account, keyId };
    this.identified.set(key, identity);
    if (this.identified.size > MAX_REMEMBERED_KEYS)
      this.identified.delete(this.identified.keys().next().value as string);
    return identity;
  }

  /**
   * The account of a handle, for work a key set going that runs without it (a materialized
   * view's scheduled refresh): undefined once no key of the handle is left. When its keys
   * differ, the least of their rights (not admin over admin, free over premium).
   */
  accountFor(handle: string): Account | undefined {
    this.reloadIfChanged(false);
    let found: Account | undefined;
    for (const account of this.byHash.values()) {
      if (account.handle !== handle) continue;
      found = found
        ? {
            handle,
            plan: found.plan === 'free' || account.plan === 'free' ? 'free' : account.plan,
            admin: found.admin && account.admin,
          }
        : account;
    }
    return found;
  }

  /** Re-reads the key file when it changed; `force` skips the rate limit on checks. */
  private reloadIfChanged(force: boolean): boolean {
    const now = Date.now();
    if (!force && now - this.lastCheck < RELOAD_INTERVAL_MS) return false;
    if (force && now - this.lastCheck < 50) return false;
    this.lastCheck = now;
    if (this.stamp() === this.fileStamp) return false;
    try {
      this.reload();
    } catch {
      // A half-written or broken file keeps the keys loaded before; `keys create` writes by rename.
      return false;
    }
    return true;
  }

  private stamp(): string {
    try {
      const stat = fs.statSync(this.keyFile);
      return `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    } catch {
      return 'absent';
    }
  }

  private reload(): void {
    const stamp = this.stamp();
    const byHash = new Map<string, Account>();
    for (const stored of readKeyFile(this.keyFile).keys) {
      byHash.set(stored.hash, { handle: stored.handle, plan: stored.plan, admin: stored.admin });
    }
    for (const key of this.configured) {
      byHash.set(hashKey(key.key), { handle: key.handle, plan: key.plan, admin: key.admin });
    }
    this.byHash = byHash;
    this.identified = new Map();
    this.fileStamp = stamp;
  }

  /** Adds a key to the key file and returns it: the only time the key is ever seen. */
  static createKey(dataDir: string, account: Account): string {
    const problem = validateHandle(account.handle);
    if (problem) throw new Error(problem);
    fs.mkdirSync(dataDir, { recursive: true });
    const file = path.join(dataDir, KEY_FILE_NAME);
    const contents = readKeyFile(file);
    const key = generateKey();
    contents.keys.push({
      hash: hashKey(key),
      handle: account.handle,
      plan: account.plan,
      admin: account.admin,
      created_at: new Date().toISOString(),
    });
    writeKeyFile(file, contents);
    return key;
  }

  /**
   * On a first start with no key anywhere, makes the local key (handle `local`, premium,
   * admin) so that a newcomer can call the API at once. Returns the local key if one
   * exists, and whether it was just made.
   */
  static ensureLocalKey(
    dataDir: string,
    configured: readonly ConfiguredKey[],
  ): { key: string; created: boolean } | undefined {
    const devKeyFile = path.join(dataDir, DEV_KEY_FILE_NAME);
    const hasFileKeys = readKeyFile(path.join(dataDir, KEY_FILE_NAME)).keys.length > 0;
    if (configured.length === 0 && !hasFileKeys) {
      const key = KeyStore.createKey(dataDir, { handle: 'local', plan: 'premium', admin: true });
      fs.writeFileSync(devKeyFile, `${key}\n`, { mode: 0o600 });
      return { key, created: true };
    }
    try {
      return { key: fs.readFileSync(devKeyFile, 'utf8').trim(), created: false };
    } catch {
      return undefined;
    }
  }
}
