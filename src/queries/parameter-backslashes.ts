import { badRequest } from '../errors.js';
import { reusable, type Session } from '../storage/database.js';
import { placeholders, type QueryParameter, substitute } from './parameters.js';
import { MAX_SQL_BYTES } from './sandbox/sandbox-sql.js';

/**
 * Backslashes in text and enum values (DESIGN §10). Doubling `'` keeps a value inside a plain
 * `'…'` string, where DuckDB reads every other character as written; inside an `E'…'` string
 * DuckDB 1.5 reads a backslash as an escape (`E'\''` is a quote, `E'\n'` a line break, `E'\\'`
 * one backslash: measured, docs/library-notes.md), so `SELECT E'{{a}}', '{{b}}'` with `a` = `\`
 * would end the first string at the second's opening quote and run `b` as SQL.
 *
 * DuckDB's parser decides whether that happens, not a scanner of ours (DuckDB offers no
 * tokenizer to SQL): the SQL with the values is parsed, and so is the SQL with every backslash
 * of those values replaced by `_`, one byte for one, so positions in both trees agree. A
 * backslash read as itself changes nothing else; one read as an escape shortens a string or
 * moves where a string ends, and the trees differ. Then the run is refused naming the
 * parameter (without backslashes a value is literal in both kinds of string: `''` is a quote in
 * `E'…'` too).
 */

const STAND_IN = '_';

const PARSE = reusable('SELECT json_serialize_sql(?::VARCHAR) AS tree');

/** DuckDB's parse tree of `sql`, as the JSON text it writes. */
async function parseTreeText(session: Session, sql: string): Promise<string> {
  const [row] = await session.all<{ tree: string }>(PARSE, [sql]);
  return row?.tree ?? 'null';
}

/** A 400 naming the first parameter whose backslashes DuckDB would not read as text. */
export async function assertBackslashesLiteral(
  session: Session,
  sql: string,
  parameters: readonly QueryParameter[],
  values: ReadonlyMap<string, string>,
  where: string,
): Promise<void> {
  const used = new Set(placeholders(sql));
  const suspects = parameters.filter(
    (p) => (p.type === 'text' || p.type === 'enum') && used.has(p.key) && values.get(p.key)?.includes('\\'),
  );
  if (suspects.length === 0) return;
  const real = substitute(sql, parameters, values);
  // The sandbox refuses it for its length before parsing anything; no need to parse it twice here.
  if (Buffer.byteLength(real, 'utf8') > MAX_SQL_BYTES) return;
  const realTree = await parseTreeText(session, real);
  const readsAsText = async (standIns: readonly QueryParameter[]) =>
    sameButBackslashes(
      realTree,
      await parseTreeText(session, substitute(sql, parameters, withStandIns(values, standIns))),
    );
  if (await readsAsText(suspects)) return;
  let culprit = suspects[0] as QueryParameter;
  for (const suspect of suspects) {
    if (!(await readsAsText([suspect]))) {
      culprit = suspect;
      break;
    }
  }
  throw badRequest(
    `${where}: parameter "${culprit.key}" (${culprit.type}): DuckDB would read the backslash in its value as an escape, not as text ({{${culprit.key}}} stands inside an E'…' string, where a backslash starts one); put it in a plain '…' string, where a value always arrives as sent`,
  );
}

function withStandIns(
  values: ReadonlyMap<string, string>,
  standIns: readonly QueryParameter[],
): Map<string, string> {
  const changed = new Map(values);
  for (const { key } of standIns) changed.set(key, (values.get(key) as string).replaceAll('\\', STAND_IN));
  return changed;
}

/**
 * Whether two of `json_serialize_sql`'s texts are the same but where the first holds an
 * escaped backslash (`\\` in JSON) and the second the stand-in. Linear, on the texts as
 * DuckDB wrote them (no JSON.parse: the trees hold 64-bit numbers).
 */
export function sameButBackslashes(real: string, probe: string): boolean {
  let i = 0;
  let j = 0;
  while (i < real.length && j < probe.length) {
    if (real[i] === '\\') {
      if (probe[j] === '\\' && real[i + 1] === probe[j + 1]) {
        i += 2; // The same JSON escape in both (\n, \", \\, the \u of \u00XX)
        j += 2;
      } else if (real[i + 1] === '\\' && probe[j] === STAND_IN) {
        i += 2;
        j += 1;
      } else return false;
    } else if (real[i] === probe[j]) {
      i++;
      j++;
    } else return false;
  }
  return i === real.length && j === probe.length;
}
