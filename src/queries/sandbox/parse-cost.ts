import { sqlTokens, type Token } from './sql-tokens.js';

/**
 * What parsing a SQL text will cost DuckDB, estimated from its tokens before DuckDB parses it,
 * so that the sandbox can refuse, with a message saying what to change, the few shapes
 * DuckDB 1.5.6's parser does not parse in time and memory linear in their length. Measured
 * (docs/library-notes.md, "What the sandbox's parse costs"), every other shape tried costs
 * 15–200 bytes of tree per byte of SQL and time to match; these four do not:
 *
 * - **AND and OR chains.** The transformer builds `a AND b AND c …` one operand at a time and
 *   moves every child gathered so far into each new node (ConjunctionExpression flattens its
 *   children), across parentheses too: k conditions cost k²/2 moves. 8,000 ANDed terms (63 KB)
 *   took 68 ms to parse, 16,000 took 266 ms; the same terms in groups of 50, 7 ms and 17 ms.
 * - **A simple CASE** (`CASE x WHEN 1 … WHEN 2 …`) copies its operand into every WHEN.
 * - **A named window** (`OVER w`, or `w2 AS (w …)`) copies the window's definition into every
 *   function that uses it. Both: 9 KB of SQL made a 25 MB tree.
 * - **ROLLUP, CUBE and GROUPING SETS** expand into their grouping sets in the tree: ROLLUP of
 *   n columns into n²/2 column indexes (5,000 columns, 29 KB of SQL: a 58 MB tree, 2 s);
 *   several of them multiply.
 *
 * Each estimate is an upper bound of DuckDB's own work, computed in one pass over the
 * tokens; the budgets let through what costs no more than the largest SQL of a linear shape
 * (64 KiB: about 10–30 ms to parse, a 2–12 MB tree).
 */

export interface ParseCost {
  /** Children moved while flattening AND and OR chains (at most). */
  conjunctionMoves: number;
  /** Tokens copied: a simple CASE's operand into each WHEN, a window's definition into each use. */
  copiedTokens: number;
  /** Column indexes of the grouping sets that ROLLUP, CUBE and GROUPING SETS expand into (at most). */
  groupingIndexes: number;
}

export const PARSE_BUDGET: Readonly<ParseCost> = {
  // About 2,800 conditions in one chain: 4M moves took 8–10 ms.
  conjunctionMoves: 4_000_000,
  // Each copied token is 100–200 bytes of tree: at most about 8 MB.
  copiedTokens: 50_000,
  // An index is 2–7 bytes of tree: at most about 3 MB.
  groupingIndexes: 500_000,
};

/** Over budget: what, and the token where it became too much. */
export interface CostRefusal {
  message: string;
  /** Index into the SQL text (a JavaScript string index). */
  position: number;
}

/** The estimate for `sql`, and the first budget it exceeds, if any. */
export function parseCost(sql: string): { cost: ParseCost; refusal?: CostRefusal } {
  const tokens = sqlTokens(sql);
  const shape = shapeOf(tokens);
  const conjunctions = conjunctionMoves(tokens);
  const copies = copiedTokens(tokens, shape);
  const grouping = groupingIndexes(tokens, shape);
  const cost: ParseCost = {
    conjunctionMoves: conjunctions.moves,
    copiedTokens: copies.tokens,
    groupingIndexes: grouping.indexes,
  };
  const refusal = conjunctions.refusal ?? copies.refusal ?? grouping.refusal;
  return refusal ? { cost, refusal } : { cost };
}

/** Where each bracket closes, and how many commas come before each token. */
interface Shape {
  /** For an opening bracket, the index of its closing one (tokens.length when unclosed). */
  match: Int32Array;
  /** Commas before token i. */
  commas: Int32Array;
  depth: Int32Array;
}

function shapeOf(tokens: readonly Token[]): Shape {
  const match = new Int32Array(tokens.length).fill(tokens.length);
  const commas = new Int32Array(tokens.length + 1);
  const depth = new Int32Array(tokens.length);
  const open: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    commas[i + 1] = (commas[i] as number) + (token.kind === 'comma' ? 1 : 0);
    if (token.kind === 'close' && open.length > 0) match[open.pop() as number] = i;
    depth[i] = open.length;
    if (token.kind === 'open') open.push(i);
  }
  return { match, commas, depth };
}

const isWord = (token: Token | undefined, text: string) => token?.kind === 'word' && token.text === text;

// --- AND and OR chains -------------------------------------------------------------------

/** One bracket or CASE: the conditions ANDed and ORed so far in its current expression. */
interface ChainFrame {
  case: boolean;
  and: number;
  or: number;
  andTotal: number;
  orTotal: number;
}

const frame = (isCase: boolean): ChainFrame => ({ case: isCase, and: 0, or: 0, andTotal: 0, orTotal: 0 });

/**
 * Each AND moves the children of the chain it extends: at most the ANDs before it in the same
 * expression (those in brackets merged into it included), plus two. An OR ends the AND chains
 * beside it (AND binds tighter); a comma, a semicolon and CASE's WHEN, THEN and ELSE end every
 * chain, as they separate expressions.
 */
function conjunctionMoves(tokens: readonly Token[]): { moves: number; refusal?: CostRefusal } {
  let stack: ChainFrame[] = [frame(false)];
  let moves = 0;
  const merge = () => {
    const child = stack.pop() as ChainFrame;
    // CASE … END is an operand, never a conjunction for the chain around it to merge.
    if (child.case) return;
    const parent = stack.at(-1) as ChainFrame;
    parent.and += child.andTotal;
    parent.or += child.orTotal;
    parent.andTotal += child.andTotal;
    parent.orTotal += child.orTotal;
    moves += child.andTotal + child.orTotal;
  };
  for (const token of tokens) {
    const top = stack.at(-1) as ChainFrame;
    if (token.kind === 'open') stack.push(frame(false));
    else if (token.kind === 'close') {
      while (stack.length > 1 && (stack.at(-1) as ChainFrame).case) merge();
      if (stack.length > 1) merge();
    } else if (token.kind === 'comma') {
      top.and = 0;
      top.or = 0;
    } else if (token.kind === 'semicolon') stack = [frame(false)];
    else if (token.kind === 'word') {
      if (token.text === 'and') {
        moves += top.and + 2;
        top.and++;
        top.andTotal++;
      } else if (token.text === 'or') {
        moves += top.or + 2;
        top.or++;
        top.orTotal++;
        top.and = 0;
      } else if (token.text === 'case') stack.push(frame(true));
      else if (token.text === 'end' && top.case) merge();
      else if (top.case && (token.text === 'when' || token.text === 'then' || token.text === 'else')) {
        top.and = 0;
        top.or = 0;
      }
    }
    if (moves > PARSE_BUDGET.conjunctionMoves) {
      return {
        moves,
        refusal: {
          message: `this SQL joins too many conditions with AND or OR in one expression: DuckDB's parser takes time that grows with the square of their number (at most about 2,800 conditions in a row); write a long OR of equalities as col IN (…), or split the conditions between queries`,
          position: token.start,
        },
      };
    }
  }
  return { moves };
}

// --- Copies: a simple CASE's operand, a named window's definition ---------------------------

/** Words that open a window's definition; any other word first names a window to copy. */
const WINDOW_CLAUSES = new Set(['partition', 'order', 'rows', 'range', 'groups']);

function copiedTokens(tokens: readonly Token[], shape: Shape): { tokens: number; refusal?: CostRefusal } {
  const cases = simpleCaseCopies(tokens, shape);
  if (cases.copies > PARSE_BUDGET.copiedTokens) {
    return {
      tokens: cases.copies,
      refusal: {
        message: `a CASE with an operand (CASE x WHEN …) makes DuckDB's parser copy the operand into each WHEN: here ${cases.copies.toLocaleString('en-US')} tokens in all, at most ${PARSE_BUDGET.copiedTokens.toLocaleString('en-US')}; write CASE WHEN x = … THEN, or compute the operand once in a subquery`,
        position: cases.position,
      },
    };
  }
  const windows = windowCopies(tokens, shape);
  const total = cases.copies + windows.copies;
  if (total > PARSE_BUDGET.copiedTokens) {
    return {
      tokens: total,
      refusal: {
        message: `each use of a named window (OVER w) makes DuckDB's parser copy the window's definitions: here ${windows.copies.toLocaleString('en-US')} tokens in all, at most ${PARSE_BUDGET.copiedTokens.toLocaleString('en-US')}; use the named windows in fewer places, or write shorter definitions`,
        position: windows.position,
      },
    };
  }
  return { tokens: total };
}

/** Σ operand tokens × WHENs over every CASE with an operand; where the costliest begins. */
function simpleCaseCopies(tokens: readonly Token[], shape: Shape): { copies: number; position: number } {
  const open: { start: number; depth: number; operand: number | undefined; whens: number }[] = [];
  let copies = 0;
  let position = 0;
  let most = 0;
  const close = () => {
    const finished = open.pop();
    if (!finished || finished.operand === undefined) return;
    const made = finished.operand * finished.whens;
    copies += made;
    if (made > most) {
      most = made;
      position = (tokens[finished.start] as Token).start;
    }
  };
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    const depth = shape.depth[i] as number;
    while (open.length > 0 && depth < (open.at(-1) as { depth: number }).depth) close();
    const top = open.at(-1);
    if (isWord(token, 'case')) {
      open.push({ start: i, depth, operand: undefined, whens: 0 });
    } else if (top && depth === top.depth && isWord(token, 'when')) {
      if (top.whens === 0 && i > top.start + 1) top.operand = i - top.start - 1;
      top.whens++;
    } else if (top && depth === top.depth && isWord(token, 'end')) {
      close();
    }
  }
  while (open.length > 0) close();
  return { copies, position };
}

/**
 * Uses of a named window (`OVER w`, `OVER (w …)`, and definitions built on another: `w2 AS (w
 * …)`) × the tokens of every window definition: each use copies at most all of them.
 */
function windowCopies(tokens: readonly Token[], shape: Shape): { copies: number; position: number } {
  let uses = 0;
  let definitions = 0;
  let position = 0;
  const namesWindow = (token: Token | undefined) =>
    token !== undefined &&
    ((token.kind === 'word' && !WINDOW_CLAUSES.has(token.text)) ||
      (token.kind === 'operand' && token.text === '"'));
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (isWord(token, 'over')) {
      const next = tokens[i + 1];
      if (namesWindow(next) || (next?.kind === 'open' && namesWindow(tokens[i + 2]))) {
        if (uses === 0) position = token.start;
        uses++;
      }
    } else if (isWord(token, 'window')) {
      // WINDOW w AS (…), w2 AS (…): the definitions are the bracketed groups.
      let j = i + 1;
      while (tokens[j]?.kind !== undefined && isWord(tokens[j + 1], 'as') && tokens[j + 2]?.kind === 'open') {
        const end = shape.match[j + 2] as number;
        definitions += end - (j + 2) + 1;
        if (namesWindow(tokens[j + 3])) uses++;
        j = end + 1;
        if (tokens[j]?.kind !== 'comma') break;
        j++;
      }
    }
  }
  return { copies: uses * definitions, position };
}

// --- Grouping sets -------------------------------------------------------------------------

/** Reserved words that end a GROUP BY clause at its own bracket depth. */
const AFTER_GROUP_BY = new Set([
  'having',
  'window',
  'order',
  'limit',
  'offset',
  'fetch',
  'union',
  'except',
  'intersect',
  'select',
  'from',
  'where',
]);

/** Sets a grouping element makes, and the most columns in one of them. */
interface Grouping {
  sets: number;
  columns: number;
}

/** GROUPING SETS nested deeper than this are counted as too many (DuckDB has no use for them). */
const MAX_GROUPING_NESTING = 100;

function groupingIndexes(tokens: readonly Token[], shape: Shape): { indexes: number; refusal?: CostRefusal } {
  let indexes = 0;
  for (let i = 0; i + 1 < tokens.length; i++) {
    if (!isWord(tokens[i], 'group') || !isWord(tokens[i + 1], 'by')) continue;
    const elements = groupingElements(tokens, shape, i + 2, clauseEnd(tokens, shape, i + 2));
    let sets = 1;
    let columns = 0;
    for (const [start, end] of elements) {
      const grouping = groupingOf(tokens, shape, start, end, 0);
      sets *= grouping.sets;
      columns += grouping.columns;
    }
    indexes += sets * columns;
    // Not `>`: too many sets (2 ** 1024) times no columns is NaN.
    if (!(indexes <= PARSE_BUDGET.groupingIndexes)) {
      return {
        indexes,
        refusal: {
          message: `ROLLUP, CUBE and GROUPING SETS here make DuckDB's parser write out ${Number.isFinite(indexes) ? `about ${indexes.toLocaleString('en-US')}` : 'too many'} column references, at most ${PARSE_BUDGET.groupingIndexes.toLocaleString('en-US')}; group by fewer columns or fewer sets`,
          position: (tokens[i] as Token).start,
        },
      };
    }
  }
  return { indexes };
}

/** The index after the GROUP BY clause starting at `start`. */
function clauseEnd(tokens: readonly Token[], shape: Shape, start: number): number {
  const depth = start < tokens.length ? (shape.depth[start] as number) : 0;
  let i = start;
  while (i < tokens.length) {
    const token = tokens[i] as Token;
    if (token.kind === 'close' || token.kind === 'semicolon') return i;
    if (token.kind === 'word' && AFTER_GROUP_BY.has(token.text) && shape.depth[i] === depth) return i;
    i = token.kind === 'open' ? (shape.match[i] as number) + 1 : i + 1;
  }
  return tokens.length;
}

/** The comma-separated elements of tokens [start, end) at their own depth, as [start, end) pairs. */
function groupingElements(
  tokens: readonly Token[],
  shape: Shape,
  start: number,
  end: number,
): [number, number][] {
  const elements: [number, number][] = [];
  let from = start;
  let i = start;
  while (i < end) {
    const token = tokens[i] as Token;
    if (token.kind === 'comma') {
      elements.push([from, i]);
      from = i + 1;
    }
    i = token.kind === 'open' ? Math.min(end, (shape.match[i] as number) + 1) : i + 1;
  }
  if (from < end) elements.push([from, end]);
  return elements;
}

/** Columns listed in a bracketed group opening at `open`: its commas, at any depth, plus one. */
function columnsIn(shape: Shape, open: number): number {
  const close = shape.match[open] as number;
  return close === open + 1 ? 0 : (shape.commas[close] as number) - (shape.commas[open] as number) + 1;
}

function groupingOf(
  tokens: readonly Token[],
  shape: Shape,
  start: number,
  end: number,
  nesting: number,
): Grouping {
  const first = tokens[start];
  const open = start + 1;
  if ((isWord(first, 'rollup') || isWord(first, 'cube')) && tokens[open]?.kind === 'open') {
    const items = groupingElements(tokens, shape, open + 1, shape.match[open] as number).length;
    return { sets: isWord(first, 'rollup') ? items + 1 : 2 ** items, columns: columnsIn(shape, open) };
  }
  if (isWord(first, 'grouping') && isWord(tokens[open], 'sets') && tokens[open + 1]?.kind === 'open') {
    if (nesting >= MAX_GROUPING_NESTING) return { sets: Number.POSITIVE_INFINITY, columns: 1 };
    const list = open + 1;
    let sets = 0;
    let columns = 0;
    for (const [from, to] of groupingElements(tokens, shape, list + 1, shape.match[list] as number)) {
      const grouping = groupingOf(tokens, shape, from, to, nesting + 1);
      sets += grouping.sets;
      columns = Math.max(columns, grouping.columns);
    }
    return { sets, columns };
  }
  if (first?.kind === 'open' && shape.match[start] === end - 1)
    return { sets: 1, columns: columnsIn(shape, start) };
  return { sets: 1, columns: 1 };
}
