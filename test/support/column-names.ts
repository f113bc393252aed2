/**
 * Column names as an upload accepts them (DESIGN.md §4: a letter of any alphabet or `_` first, no
 * control character, at most 255 characters, distinct ignoring case), built from the pieces that
 * trouble a quoted name: quotes, backslashes (above all a trailing one), commas, spaces, keywords,
 * operators. And the two ways a client quotes one.
 */
import fc from 'fast-check';

const FIRST = ['a', 'x', 'Z', '_', 'é', 'Ж', '中', 'ß', 'is', 'in', 'desc', 'nulls', 'not', 'like'];
const PIECES = [
  ...['\\', '\\', '"', '"', '\\"', '""', '\\\\', "'", ',', ' ', '(', ')', '.', ';', '=', '%', '-', '0'],
  ...['b', 'Q', '😀', ' AND ', ' or ', ' NOT ', ' IN (', ' LIKE ', ' IS NULL', ' DESC', ' NULLS FIRST'],
  ...[" = 'v'", ' = 1', ', x', '" = 1', '\\" = 1', ' between 1 and 2'],
];
const ENDS = ['', '', '\\', '\\', '\\\\', '"\\', '\\"\\', ' \\', '"'];

export const uploadableName: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(...FIRST),
    fc.array(fc.constantFrom(...PIECES), { maxLength: 6 }),
    fc.constantFrom(...ENDS),
  )
  .map(([first, pieces, end]) => first + pieces.join('') + end);

/** One to four names that one upload accepts together. */
export const uploadableNames: fc.Arbitrary<string[]> = fc.uniqueArray(uploadableName, {
  minLength: 1,
  maxLength: 4,
  selector: (name) => name.toLowerCase(),
});

/** Every quote as `\"`, as the official TypeScript client writes a name that holds one. */
export const clientQuoted = (name: string): string => `"${name.replaceAll('"', '\\"')}"`;

/** Every quote as `""`, as SQL writes it; read back as meant unless a backslash precedes a quote. */
export const sqlQuoted = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** The spellings of a name that must select it: the client's always, SQL's where it can. */
export function spellings(name: string): string[] {
  return name.includes('\\"') ? [clientQuoted(name)] : [clientQuoted(name), sqlQuoted(name)];
}
