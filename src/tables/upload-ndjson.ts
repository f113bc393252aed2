import type { Readable } from 'node:stream';
import { ulid } from 'ulid';
import { badRequest } from '../errors.js';
import type { Database, Session } from '../storage/database.js';
import { quoteIdentifier } from '../storage/sql.js';
import { NDJSON_LINE, ndjsonBlankLine, readNdjsonLines } from './csv-dialect.js';
import { validateColumnNames } from './csv-header.js';
import { StagedLoad } from './csv-loader.js';
import { jsonPointer, stringList } from './insert-plan.js';
import { receiveBody } from './receive-body.js';
import { pinnedTypes, type UploadOptions } from './upload-options.js';
import { partsFolder } from './upload-parts.js';
import { discardUpload, type ReceivedUpload } from './upload-store.js';

/**
 * An NDJSON upload: one JSON object per line, its keys the columns (in the order they first
 * appear), typed by the same rules as a CSV's columns from each value's text (csv-loader.ts
 * loads it). The body is streamed to disk whole first: its columns are the keys of every line.
 * A line that is not an object, repeats a key or holds a nested object or array is a 400
 * naming the line.
 */

const ORDINAL = quoteIdentifier('0 line');

/** The lines that hold a value, numbered as the body's lines. */
function objectLines(file: string): string {
  return `(SELECT * FROM (SELECT row_number() OVER () AS ${ORDINAL}, ${NDJSON_LINE} FROM ${readNdjsonLines([{ file, firstLine: 1 }])}) WHERE NOT ${ndjsonBlankLine})`;
}

/** The body's keys in order of first appearance, each line checked to be a flat object. */
export async function ndjsonColumns(session: Session, file: string): Promise<string[]> {
  const [bad] = await session.all<{ n: bigint; valid: boolean }>(
    `SELECT ${ORDINAL} AS n, json_valid(${NDJSON_LINE}) AS valid FROM ${objectLines(file)}
      WHERE NOT json_valid(${NDJSON_LINE}) OR json_type(${NDJSON_LINE}) <> 'OBJECT'
      ORDER BY ${ORDINAL} LIMIT 1`,
  );
  if (bad) throw badRequest(`NDJSON line ${bad.n} is not ${bad.valid ? 'a JSON object' : 'valid JSON'}`);
  const keys = await session.all<{ k: string }>(
    `SELECT k FROM (SELECT ${ORDINAL} AS n, unnest(json_keys(${NDJSON_LINE})) AS k,
                           generate_subscripts(json_keys(${NDJSON_LINE}), 1) AS p FROM ${objectLines(file)})
      GROUP BY k ORDER BY min([n, p])`,
  );
  const columns = keys.map((row) => row.k);
  if (columns.length === 0) return [];
  validateColumnNames(columns, 'the NDJSON keys');
  const [shaped] = await session.all<{ n: bigint; repeated: boolean; kinds: (string | null)[] }>(
    `SELECT n, repeated, kinds FROM (
       SELECT ${ORDINAL} AS n, len(json_keys(${NDJSON_LINE})) <> len(list_distinct(json_keys(${NDJSON_LINE}))) AS repeated,
              json_type(${NDJSON_LINE}, ${stringList(columns.map(jsonPointer))}) AS kinds
         FROM ${objectLines(file)})
      WHERE repeated OR list_has_any(kinds, ['OBJECT', 'ARRAY']) ORDER BY n LIMIT 1`,
  );
  if (shaped) {
    const nested = shaped.kinds.findIndex((kind) => kind === 'OBJECT' || kind === 'ARRAY');
    throw badRequest(
      shaped.repeated
        ? `NDJSON line ${shaped.n} names a key more than once`
        : `NDJSON line ${shaped.n}, key ${JSON.stringify(columns[nested])}: nested objects and arrays are not accepted; send a string, number, boolean or null`,
    );
  }
  return columns;
}

/** A feed of the one part an NDJSON body is. */
function wholeBody(file: string, bytes: number) {
  let given = false;
  return {
    lineEnd: () => 'lf' as const,
    next: async () => {
      if (given) return [];
      given = true;
      return [{ file, firstLine: 1, bytes }];
    },
  };
}

/** Receives an NDJSON upload and starts its load; options come from the query. */
export async function receiveNdjsonUpload(
  body: Readable,
  tmpDir: string,
  maxBytes: number,
  database: Database,
  namespace: string,
  options: UploadOptions,
): Promise<ReceivedUpload> {
  const id = ulid();
  const dir = await partsFolder(tmpDir, id);
  let load: StagedLoad | undefined;
  try {
    const received = await receiveBody(body, dir, maxBytes, 'ndjson');
    const file = received.file;
    const columns = await database.read((session) => ndjsonColumns(session, file));
    if (columns.length > 0) {
      const typing = Promise.resolve({ pinned: pinnedTypes(options.types, columns), strict: options.strict });
      const target = {
        namespace,
        jobId: id,
        columnNames: columns,
        format: 'ndjson' as const,
        pointers: columns.map(jsonPointer),
      };
      load = new StagedLoad(database, target, wholeBody(file, received.bytes), typing, () => undefined);
    }
    return {
      dir,
      bytes: received.bytes,
      load,
      emptyMessage: 'the body is empty: send one JSON object per line',
    };
  } catch (error) {
    await discardUpload({ dir, load });
    throw error;
  }
}
