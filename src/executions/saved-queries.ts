import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.js';
import { projectFiles } from '../packaging/project-files.js';

/**
 * Saved queries: SQL files whose header names them. An operator adds an API over any
 * tables by dropping a file into the project's `queries/` folder or the configured one:
 *
 *   -- id: 3693850
 *   -- name: AVS metrics
 *   -- description: …
 *   -- refresh_seconds: default        (REFRESH_INTERVAL_SECONDS, or a number)
 *   SELECT …
 */

export interface SavedQuery {
  id: number;
  name: string;
  description: string;
  /** How often the scheduler runs it. */
  refreshSeconds: number;
  sql: string;
  file: string;
}

export class SavedQueryError extends Error {
  override name = 'SavedQueryError';
}

const HEADER_LINE = /^--\s*([a-z_]+)\s*:\s*(.*?)\s*$/;
const KNOWN_KEYS = new Set(['id', 'name', 'description', 'refresh_seconds']);

export function parseSavedQuery(file: string, text: string, defaultRefreshSeconds: number): SavedQuery {
  const header = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  for (const line of lines) {
    const match = HEADER_LINE.exec(line.trim());
    if (!match) break;
    const [, key = '', value = ''] = match;
    if (!KNOWN_KEYS.has(key))
      throw new SavedQueryError(`${file}: unknown header "${key}" (use ${[...KNOWN_KEYS].join(', ')})`);
    header.set(key, value);
  }
  const id = Number(header.get('id'));
  if (!Number.isSafeInteger(id) || id <= 0)
    throw new SavedQueryError(`${file}: the header needs "-- id: <positive integer>"`);
  const name = header.get('name');
  if (!name) throw new SavedQueryError(`${file}: the header needs "-- name: <text>"`);
  const refresh = header.get('refresh_seconds') ?? 'default';
  const refreshSeconds = refresh === 'default' ? defaultRefreshSeconds : Number(refresh);
  if (!Number.isSafeInteger(refreshSeconds) || refreshSeconds <= 0) {
    throw new SavedQueryError(`${file}: refresh_seconds must be "default" or a positive whole number`);
  }
  // A trailing semicolon is common in files; the query is embedded as a subquery.
  const sql = text.replace(/;\s*$/, '').trim();
  if (!/\bselect\b|\bwith\b|\bfrom\b/i.test(sql.replace(/--.*$/gm, ''))) {
    throw new SavedQueryError(`${file}: no query after the header`);
  }
  return { id, name, description: header.get('description') ?? '', refreshSeconds, sql, file };
}

/** A saved-query file: where it came from (for messages) and its text. */
export interface SavedQueryFile {
  file: string;
  text: string;
}

/** The project's own saved queries: its `queries/` folder, embedded in the single-file build. */
export function projectSavedQueryFiles(): SavedQueryFile[] {
  return projectFiles('queries')
    .filter((f) => f.name.endsWith('.sql') && !f.name.includes('/'))
    .map((f) => ({ file: f.origin, text: f.contents.toString('utf8') }));
}

/** The `*.sql` files of an operator's folder, in name order. */
export function readSavedQueryFolder(folder: string): SavedQueryFile[] {
  let entries: string[];
  try {
    entries = fs.readdirSync(folder).filter((name) => name.endsWith('.sql'));
  } catch (error) {
    throw new SavedQueryError(`cannot read the saved-query folder ${folder}: ${(error as Error).message}`);
  }
  return entries.sort().map((entry) => {
    const file = path.join(folder, entry);
    return { file, text: fs.readFileSync(file, 'utf8') };
  });
}

/** Parses the files; ids must be unique across them. */
export function loadSavedQueries(
  files: readonly SavedQueryFile[],
  defaultRefreshSeconds: number,
): SavedQuery[] {
  const queries = new Map<number, SavedQuery>();
  for (const { file, text } of files) {
    const query = parseSavedQuery(file, text, defaultRefreshSeconds);
    const other = queries.get(query.id);
    if (other)
      throw new SavedQueryError(`saved query id ${query.id} is used by both ${other.file} and ${file}`);
    queries.set(query.id, query);
  }
  return [...queries.values()];
}

/** The saved queries a configuration names: the project's, then those of QUERIES_DIR. */
export function configuredSavedQueries(config: Config): SavedQuery[] {
  const files = [
    ...projectSavedQueryFiles(),
    ...(config.queriesDir ? readSavedQueryFolder(config.queriesDir) : []),
  ];
  return loadSavedQueries(files, config.refreshIntervalSeconds);
}
