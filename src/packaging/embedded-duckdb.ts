import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type EmbeddedManifest, embeddedManifest, readEmbedded } from './single-executable.js';

/**
 * DuckDB's native addon for the single-file build. The bundle resolves
 * `@duckdb/node-bindings` to this module instead of the package's loader, which would
 * `require` a `.node` file from node_modules. A shared library can only be loaded from a
 * file, so the addon and `libduckdb.so` (which it finds next to itself, RUNPATH $ORIGIN) are
 * written once per version to a cache directory and loaded from there with process.dlopen.
 */

const APP_DIR = 'restaking-data-service';

/**
 * Where the native files may go, best first. The user's cache survives reboots (the first
 * start of a version writes ~70 MB); the temporary directory is the fallback for accounts
 * without a writable home. A candidate that fails (read-only, mounted noexec) is skipped.
 */
function cacheCandidates(): string[] {
  const candidates: string[] = [];
  const home = os.homedir();
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg && path.isAbsolute(xdg)) candidates.push(path.join(xdg, APP_DIR));
  else if (home) candidates.push(path.join(home, '.cache', APP_DIR));
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  candidates.push(path.join(os.tmpdir(), `${APP_DIR}-${uid}`));
  return candidates;
}

/**
 * The base directory must be ours alone: in a shared temporary directory another account
 * could otherwise plant a library there for us to load.
 */
function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = fs.lstatSync(dir);
  const uid = typeof process.getuid === 'function' ? process.getuid() : stat.uid;
  if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o022) !== 0) {
    throw new Error(`${dir} is not a directory private to this user`);
  }
}

function extract(base: string, duckdb: EmbeddedManifest['duckdb']): string {
  ensurePrivateDir(base);
  const dir = path.join(base, `duckdb-${duckdb.hash}`);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const [name, file] of Object.entries(duckdb.files)) {
    const target = path.join(dir, name);
    const existing = fs.statSync(target, { throwIfNoEntry: false });
    if (existing?.size === file.size) continue;
    // Written aside and renamed, so a second process starting at once never loads half a file.
    const temporary = `${target}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, readEmbedded(file), { mode: 0o500 });
    fs.renameSync(temporary, target);
  }
  removeOtherVersions(base, path.basename(dir));
  return dir;
}

/** Earlier versions' copies; a process still running one keeps its mapped files anyway. */
function removeOtherVersions(base: string, current: string): void {
  for (const entry of fs.readdirSync(base)) {
    if (entry.startsWith('duckdb-') && entry !== current) {
      fs.rmSync(path.join(base, entry), { recursive: true, force: true });
    }
  }
}

export function loadEmbeddedDuckDB(): unknown {
  const { duckdb } = embeddedManifest();
  const failures: string[] = [];
  for (const base of cacheCandidates()) {
    try {
      const dir = extract(base, duckdb);
      const module = { exports: {} };
      process.dlopen(module, path.join(dir, duckdb.addon));
      return module.exports;
    } catch (error) {
      failures.push(`${base}: ${(error as Error).message}`);
    }
  }
  throw new Error(`cannot load the embedded DuckDB library; tried\n  ${failures.join('\n  ')}`);
}
