/**
 * `columns`: comma-separated names. A name is double-quoted (`""` or `\"` for a quote inside)
 * or bare; a bare name is everything up to the next comma, trimmed, because the official
 * TypeScript client quotes only names that contain a quote, so `avs name` may arrive bare.
 */
import { echo, SourceText } from './errors.js';
import { displayName, type ResultColumn, resolveColumn } from './identifiers.js';
import { checkText, readNamesTwice, readQuotedName } from './lexer.js';

const WHITESPACE = /\s/u;
/** What may follow a quoted name here, so that `"a\"b\"` (the TypeScript client's `a"b\`) names `a"b\`. */
const FOLLOWS_NAME = /\s*(?:,|$)/y;

export function resolveColumns(text: string, columns: readonly ResultColumn[]): ResultColumn[] {
  const source = new SourceText('columns', text);
  checkText(source);
  return readNamesTwice(source, (eager) => readColumns(source, columns, eager));
}

function readColumns(source: SourceText, columns: readonly ResultColumn[], eager: boolean): ResultColumn[] {
  const { text } = source;
  const resolved: ResultColumn[] = [];
  const seen = new Set<string>();
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && WHITESPACE.test(text[i] as string)) {
      i++;
    }
  };
  for (;;) {
    skipSpace();
    let name: string;
    const start = i;
    if (text[i] === '"') {
      const quoted = readQuotedName(source, i, FOLLOWS_NAME, eager);
      name = quoted.name;
      i = quoted.end;
      skipSpace();
      if (i < text.length && text[i] !== ',') {
        throw source.error(i, `expected ',' after ${displayName(name)}, found ${echo(text[i] as string)}`);
      }
    } else {
      const comma = text.indexOf(',', i);
      const end = comma === -1 ? text.length : comma;
      name = text.slice(i, end).trim();
      if (name === '') {
        throw source.error(
          i,
          resolved.length === 0 ? 'expected a column name' : "expected a column name after ','",
        );
      }
      const quote = name.indexOf('"');
      if (quote !== -1) {
        throw source.error(
          i + text.slice(i, end).indexOf('"'),
          `unexpected '"' in ${echo(name)}`,
          'double-quote the whole name, writing "" for a quote inside',
        );
      }
      i = end;
    }
    const column = resolveColumn(source, columns, name, start);
    if (seen.has(column.name)) {
      throw source.error(start, `column ${displayName(column.name)} is listed twice`);
    }
    seen.add(column.name);
    resolved.push(column);
    if (i >= text.length) {
      return resolved;
    }
    i++; // the comma
  }
}
