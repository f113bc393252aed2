import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { placeholders } from '../../src/queries/parameters.js';
import { parameterNames } from '../../web/workspace/parameter-names.js';

/**
 * The parameter fields the workspace shows for a query's SQL (web/workspace/parameter-names.ts):
 * the names the service reads from the same SQL (src/queries/parameters.ts), which the page
 * cannot import (it bundles no server code).
 */

describe('parameterNames', () => {
  it.each([
    ['SELECT 1', []],
    ['SELECT * FROM t WHERE token = {{token}}', ['token']],
    // In order of first use, each once.
    ['SELECT {{b}}, {{a}}, {{b}}', ['b', 'a']],
    // Spaces inside the braces are not part of the name, as the service reads them.
    ['SELECT {{ since }} , {{since}}', ['since']],
    ['SELECT {{two words}}', ['two words']],
    ["SELECT '{{color}}' AS c, timestamp '{{since}}'", ['color', 'since']],
    // An empty name is a name (the service refuses it when saving).
    ['SELECT {{}}', ['']],
    // Unclosed, or braces inside: not a parameter.
    ['SELECT {{open', []],
    ['SELECT {{a{b}}', []],
    ['SELECT {{a}b}}', []],
    ['SELECT {single}', []],
    ['SELECT {{{x}}}', ['x']],
  ])('%j → %j', (sql, expected) => {
    expect(parameterNames(sql)).toEqual(expected);
  });

  it('finds the names the service finds, for any text of braces, spaces and letters', () => {
    const text = fc
      .array(fc.constantFrom('{', '}', '{{', '}}', ' ', '\n', 'a', 'b', 'x y', "'"), { maxLength: 40 })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, (sql) => {
        expect(parameterNames(sql)).toEqual(placeholders(sql));
      }),
      { numRuns: 2000 },
    );
  });

  it('reads a long SQL of many repeated names', () => {
    const sql = Array.from({ length: 2000 }, (_, i) => `{{p${i % 100}}}`).join(' + ');
    expect(parameterNames(sql)).toEqual(Array.from({ length: 100 }, (_, i) => `p${i}`));
  });
});
