import { describe, expect, it } from 'vitest';
import { messagePosition, sqlErrorPosition } from '../../web/workspace/error-position.js';

/** Where the workspace marks a refusal or a failure in the SQL (web/workspace/error-position.ts). */

describe('messagePosition', () => {
  it.each([
    ["filters: expected a number for column n (bigint), found 'abc' at position 4", 4],
    ['syntax error at or near "alice" at position 14', 14],
    ['at position 0', 0],
    ['table function read_csv is not available in queries; at position 14 (of 40)', 14],
    ['no position here', undefined],
    ['the composition 12 of x', undefined],
    ['at position -3', undefined],
  ])('%j → %j', (message, expected) => {
    expect(messagePosition(message)).toBe(expected);
  });
});

describe('sqlErrorPosition', () => {
  const sql = 'SELECT n\nFORM alice.dataset_numbers\nWHERE x';
  it.each([
    // The service's own "at position N" wins over anything else in the message.
    ['syntax error at or near "alice" at position 14', sql, 14],
    // DuckDB's caret: line 2, column 5 (after "LINE 2: ").
    [
      'Parser Error: syntax error at or near "alice"\n\nLINE 2: FORM alice.dataset_numbers\n             ^',
      sql,
      14,
    ],
    ['Binder Error: no column x\n\nLINE 3: WHERE x\n              ^', sql, 42],
    ['Binder Error: here\n\nLINE 1: SELECT n\n        ^', sql, 0],
    // A long line shown shortened around the spot: only the line is known, its start.
    ['Parser Error: x\n\nLINE 2: ...ice.dataset_numbers\n                 ^', sql, 9],
    // A line the SQL does not have, or a caret left of the line's text: no position.
    ['Error\n\nLINE 9: nothing\n        ^', sql, undefined],
    ['Error\n\nLINE 0: SELECT n\n        ^', sql, undefined],
    ['Error\n\nLINE 1: SELECT n\n  ^', sql, undefined],
    ["Conversion Error: Could not convert string 'item 2' to INT32", sql, undefined],
    ['', '', undefined],
  ])('%j', (message, text, expected) => {
    expect(sqlErrorPosition(message, text)).toBe(expected);
  });

  it('points into the SQL at the word the caret is under', () => {
    const message =
      'Parser Error: syntax error at or near "FORM"\n\nLINE 2: FORM alice.dataset_numbers\n        ^';
    const position = sqlErrorPosition(message, sql) as number;
    expect(sql.slice(position, position + 4)).toBe('FORM');
  });
});
