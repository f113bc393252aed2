import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.js';
import { projectFiles } from '../packaging/project-files.js';
import { FIRST_USER_QUERY_ID } from '../storage/service-schema.js';

/**
 * The operator's query files ("saved queries" in the README): SQL files whose header names
 * them. An operator adds an API over any tables by dropping a file into the project's
 * `queries/` folder or the configured one:
 *
 *   -- id: 3693850
 *   -- name: AVS metrics
 *   -- description: …
 *   -- refresh_seconds: default        (REFRESH_INTERVAL_SECONDS, or a number)
 *   SELECT …
 */

export interface QueryFile {
  id: number;
  name: string;
  description: string;
  /** How often the scheduler runs it. */
  refreshSeconds: number;
  sql: string;
  file: string;
}

export class QueryFileError extends Error {
  override name = 'QueryFileError';
}

const HEADER_LINE = /^--\s*([a-z_]+)\s*:\s*(.*?)\s*$/;
const KNOWN_KEYS = new Set(['id', 'name', 'description', 'refresh_seconds']);

export function parseQueryFile(file: string, text: string, defaultRefreshSeconds: number): QueryFile {
  const header = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  for (const line of lines) {
    const match = HEADER_LINE.exec(line.trim());
    if (!match) break;
    const [, key = '', value = ''] = match;
    if (!KNOWN_KEYS.has(key))
      throw new QueryFileError(`${file}: unknown header "${key}" (use ${[...KNOWN_KEYS].join(', ')})`);
    header.set(key, value);
  }
  const id = Number(header.get('id'));
  if (!Number.isSafeInteger(id) || id <= 0)
    throw new QueryFileError(`${file}: the header needs "-- id: <positive integer>"`);
  if (id >= FIRST_USER_QUERY_ID)
    throw new QueryFileError(
      `${file}: ids from ${FIRST_USER_QUERY_ID} up are users' queries; choose a smaller id`,
    );
  const name = header.get('name');
  if (!name) throw new QueryFileError(`${file}: the header needs "-- name: <text>"`);
  const refresh = header.get('refresh_seconds') ?? 'default';
  const refreshSeconds = refresh === 'default' ? defaultRefreshSeconds : Number(refresh);
  if (!Number.isSafeInteger(refreshSeconds) || refreshSeconds <= 0) {
    throw new QueryFileError(`${file}: refresh_seconds must be "default" or a positive whole number`);
  }
  // A trailing semicolon is common in files; the query is embedded as a subquery.
  const sql = text.replace(/;\s*$/, '').trim();
  if (!/\bselect\b|\bwith\b|\bfrom\b/i.test(sql.replace(/--.*$/gm, ''))) {
    throw new QueryFileError(`${file}: no query after the header`);
  }
  return { id, name, description: header.get('description') ?? '', refreshSeconds, sql, file };
}

/** A query file: where it came from (for messages) and its text. */
export interface QueryFileText {
  file: string;
  text: string;
}

/** The project's own query files: its `queries/` folder, embedded in the single-file build. */
export function projectQueryFiles(): QueryFileText[] {
  return projectFiles('queries')
    .filter((f) => f.name.endsWith('.sql') && !f.name.includes('/'))
    .map((f) => ({ file: f.origin, text: f.contents.toString('utf8') }));
}

/** The `*.sql` files of an operator's folder, in name order. */
export function readQueryFolder(folder: string): QueryFileText[] {
  let entries: string[];
  try {
    entries = fs.readdirSync(folder).filter((name) => name.endsWith('.sql'));
  } catch (error) {
    throw new QueryFileError(`cannot read the saved-query folder ${folder}: ${(error as Error).message}`);
  }
  return entries.sort().map((entry) => {
    const file = path.join(folder, entry);
    return { file, text: fs.readFileSync(file, 'utf8') };
  });
}

/** Parses the files; ids must be unique across them. */
export function loadQueryFiles(files: readonly QueryFileText[], defaultRefreshSeconds: number): QueryFile[] {
  const queries = new Map<number, QueryFile>();
  for (const { file, text } of files) {
    const query = parseQueryFile(file, text, defaultRefreshSeconds);
    const other = queries.get(query.id);
    if (other)
      throw new QueryFileError(`saved query id ${query.id} is used by both ${other.file} and ${file}`);
    queries.set(query.id, query);
  }
  return [...queries.values()];
}

/** The query files a configuration names: the project's, then those of QUERIES_DIR. */
export function configuredQueryFiles(config: Config): QueryFile[] {
  const files = [...projectQueryFiles(), ...(config.queriesDir ? readQueryFolder(config.queriesDir) : [])];
  return loadQueryFiles(files, config.refreshIntervalSeconds);
}
