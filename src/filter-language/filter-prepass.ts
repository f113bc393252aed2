/**
 * Turns the tokens of a filter into text jsep can parse, since jsep knows neither SQL's
 * multi-word operators nor its precedence of NOT. What jsep sees:
 *
 * - every identifier and literal replaced by a placeholder `$<token index>`, so that no
 *   character the client typed inside a name or a value ever reaches jsep;
 * - keywords in lower case, and multi-word operators joined: `not_in`, `not_like`,
 *   `not_ilike`, `is`/`is_not` (followed by the NULL placeholder), `not_between`;
 * - the AND of `BETWEEN a AND b` renamed `between_and`, which binds tighter than BETWEEN;
 * - the parentheses of an IN list turned into `[ ]`, so a one-item list stays a list;
 * - a unary NOT wrapped with its operand in parentheses, because jsep binds a unary operator
 *   tighter than any binary one while SQL's NOT is looser than comparisons.
 *
 * Structural checks that need no tree happen here, before jsep (which is recursive) runs:
 * nesting depth, balanced parentheses, IN list sizes, IS and BETWEEN shapes.
 */
import { echo, type SourceText } from './errors.js';
import { describeToken, type Token, tokenSource } from './lexer.js';
import { MAX_LIST_ITEMS, MAX_NESTING_DEPTH } from './limits.js';

/** One piece of jsep's input: where it is there, where it came from in the client's text, how it reads there. */
export interface EmittedItem {
  start: number;
  end: number;
  origin: number;
  display: string;
  keyword: boolean;
}

/** An item as a message shows it: keywords as they are, anything else quoted. */
export function describeItem(item: EmittedItem | undefined): string {
  return item === undefined ? 'the end' : item.keyword ? item.display : echo(item.display);
}

export interface JsepInput {
  expression: string;
  items: EmittedItem[];
}

interface Frame {
  kind: 'root' | 'paren' | 'list' | 'not';
  origin: number;
  commas: number;
  /** Set while a BETWEEN in this frame waits for its AND: the BETWEEN's position. */
  pendingBetween: number | undefined;
}

const NEGATABLE: ReadonlySet<string> = new Set(['in', 'like', 'ilike', 'between']);

export function prepareForJsep(source: SourceText, tokens: readonly Token[]): JsepInput {
  const items: EmittedItem[] = [];
  let expression = '';
  const frames: Frame[] = [{ kind: 'root', origin: 0, commas: 0, pendingBetween: undefined }];
  const top = (): Frame => frames[frames.length - 1] as Frame;
  let afterOperand = false;

  const emit = (text: string, origin: number, display: string): void => {
    if (expression !== '') {
      expression += ' ';
    }
    const keyword = /^[a-z_]+$/.test(text);
    items.push({ start: expression.length, end: expression.length + text.length, origin, display, keyword });
    expression += text;
    afterOperand = text.startsWith('$') || text === ')' || text === ']';
  };
  const lastEmitted = (): string | undefined => {
    const last = items[items.length - 1];
    return last === undefined ? undefined : expression.slice(last.start, last.end);
  };
  const push = (kind: Frame['kind'], origin: number): void => {
    if (frames.length > MAX_NESTING_DEPTH) {
      throw source.error(
        origin,
        `nesting deeper than ${MAX_NESTING_DEPTH} levels`,
        'count each ( and each NOT',
      );
    }
    frames.push({ kind, origin, commas: 0, pendingBetween: undefined });
  };
  /** Ends every NOT whose operand is complete; one still waiting for BETWEEN's AND is not. */
  const closeNots = (origin: number): void => {
    while (top().kind === 'not' && top().pendingBetween === undefined) {
      if (lastEmitted() === '(') {
        throw source.error(origin, 'expected a condition after NOT');
      }
      frames.pop();
      emit(')', origin, ')');
    }
  };
  const requireNoPendingBetween = (origin: number): void => {
    if (top().pendingBetween !== undefined) {
      throw source.error(origin, 'expected AND to complete BETWEEN … AND …');
    }
  };
  const placeholder = (k: number, token: Token): void => {
    // jsep also takes `(1 2)` as a list of two: the grammar wants commas.
    if (top().kind === 'list' && afterOperand) {
      throw source.error(
        token.start,
        `expected ',' or ')' in the IN list, found ${describeToken(source, token)}`,
      );
    }
    emit(`$${k}`, token.start, tokenSource(source, token));
  };
  /** jsep would read a word operator where an operand belongs as a name: say what was missing. */
  const requireOperandBefore = (origin: number, display: string, wanted: string): void => {
    if (!afterOperand) {
      const previous = items[items.length - 1];
      const after = previous === undefined ? '' : ` after ${describeItem(previous)}`;
      throw source.error(origin, `expected ${wanted}${after}, found ${display}`);
    }
  };
  const openList = (k: number, operator: string): void => {
    const next = tokens[k];
    if (next?.kind !== 'symbol' || next.text !== '(') {
      throw source.error(
        next?.start ?? source.text.length,
        `expected '(' after ${operator}`,
        'write a list: col IN (1, 2)',
      );
    }
    push('list', next.start);
    emit('[', next.start, '(');
  };

  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k] as Token;
    const next = tokens[k + 1];
    if (token.kind !== 'word' && token.kind !== 'symbol') {
      placeholder(k, token);
      continue;
    }
    if (token.kind === 'symbol') {
      switch (token.text) {
        case '(':
          push('paren', token.start);
          emit('(', token.start, '(');
          break;
        case ')': {
          closeNots(token.start);
          requireNoPendingBetween(token.start);
          const frame = top();
          if (frame.kind === 'root') {
            throw source.error(token.start, "unexpected ')' without a matching '('");
          }
          if (frame.kind === 'list' && lastEmitted() === '[') {
            throw source.error(token.start, 'empty IN list', 'write at least one value: col IN (1)');
          }
          if (frame.kind === 'list' && lastEmitted() === ',') {
            throw source.error(token.start, "expected a value after ','");
          }
          if (frame.kind === 'paren' && lastEmitted() === '(') {
            throw source.error(token.start, "expected a condition inside '( )'");
          }
          frames.pop();
          emit(frame.kind === 'list' ? ']' : ')', token.start, ')');
          break;
        }
        case ',': {
          closeNots(token.start);
          requireNoPendingBetween(token.start);
          const frame = top();
          if (frame.kind === 'list') {
            if (lastEmitted() === '[' || lastEmitted() === ',') {
              throw source.error(token.start, "expected a value before ','");
            }
            frame.commas++;
            if (frame.commas >= MAX_LIST_ITEMS) {
              throw source.error(next?.start ?? token.end, `IN list longer than ${MAX_LIST_ITEMS} items`);
            }
          }
          emit(',', token.start, ',');
          break;
        }
        default:
          emit(token.text, token.start, token.text);
      }
      continue;
    }

    const word = token.text.toLowerCase();
    const nextWord = next?.kind === 'word' ? next.text.toLowerCase() : undefined;
    switch (word) {
      case 'and':
        requireOperandBefore(token.start, 'AND', 'a condition');
        closeNots(token.start);
        if (top().pendingBetween !== undefined) {
          top().pendingBetween = undefined;
          emit('between_and', token.start, 'AND');
        } else {
          emit('and', token.start, 'AND');
        }
        break;
      case 'or':
        requireOperandBefore(token.start, 'OR', 'a condition');
        closeNots(token.start);
        requireNoPendingBetween(token.start);
        emit('or', token.start, 'OR');
        break;
      case 'not':
        if (nextWord !== undefined && NEGATABLE.has(nextWord)) {
          k = emitOperator(`not_${nextWord}`, token.start, `NOT ${nextWord.toUpperCase()}`, k + 1);
        } else if (afterOperand) {
          throw source.error(token.start, 'expected IN, LIKE, ILIKE or BETWEEN after NOT');
        } else {
          emit('not', token.start, 'NOT');
          push('not', token.start);
          emit('(', next?.start ?? source.text.length, '(');
        }
        break;
      case 'in':
      case 'like':
      case 'ilike':
      case 'between':
        k = emitOperator(word, token.start, word.toUpperCase(), k);
        break;
      case 'is': {
        requireOperandBefore(token.start, 'IS', 'a column name');
        const negated = nextWord === 'not';
        const nullToken = tokens[negated ? k + 2 : k + 1];
        if (nullToken?.kind !== 'word' || nullToken.text.toLowerCase() !== 'null') {
          const at = negated ? nullToken : next;
          throw source.error(
            at?.start ?? source.text.length,
            `expected ${negated ? 'NULL' : 'NULL or NOT NULL'} after ${negated ? 'IS NOT' : 'IS'}`,
          );
        }
        emit(negated ? 'is_not' : 'is', token.start, negated ? 'IS NOT' : 'IS');
        k += negated ? 2 : 1;
        placeholder(k, nullToken);
        break;
      }
      default:
        placeholder(k, token);
    }
  }
  closeNots(source.text.length);
  requireNoPendingBetween(source.text.length);
  const unclosed = top();
  if (unclosed.kind !== 'root') {
    throw source.error(unclosed.origin, "unclosed '('", "expected ')'");
  }
  // jsep takes a word operator only when a character follows it: `a = 1 and` must reach it
  // as a dangling AND, not as a name.
  return { expression: `${expression} `, items };

  /**
   * IN, LIKE, ILIKE, BETWEEN and their NOT forms; `k` is the index of the operator's last
   * word. Returns the index of the last token consumed (an IN list's opening parenthesis).
   */
  function emitOperator(name: string, origin: number, display: string, k: number): number {
    requireOperandBefore(origin, display, 'a column name');
    if (name === 'between' || name === 'not_between') {
      requireNoPendingBetween(origin);
      emit(name, origin, display);
      top().pendingBetween = origin;
      return k;
    }
    emit(name, origin, display);
    if (name === 'in' || name === 'not_in') {
      openList(k + 1, display);
      return k + 1;
    }
    return k;
  }
}
