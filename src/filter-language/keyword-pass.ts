/**
 * The keyword pass writes jsep's input without moving a character, so that jsep's indices are
 * the client's. jsep knows neither SQL's multi-word operators nor keywords in any case, so
 * keywords are written in lower case and multi-word operators joined where their first word
 * stands, with a `~` that no name can hold (`NOT  In` → `not~in  `, `IS NOT` → `is~not`);
 * BETWEEN's AND becomes `&`, bound tighter than BETWEEN so that `a BETWEEN 1 AND 2 AND b = 1`
 * keeps its logical AND apart; an IN list's parentheses become `[ ]`, so that one value stays a
 * list; every space is a plain one. On the way it checks what a token's neighbours tell:
 * parentheses (depth too, so that 4,000 `(` never reach jsep's recursion), IN lists, BETWEEN's
 * AND, a keyword where a column or condition belongs, calls and member access.
 */
import { echo, type SourceText } from './errors.js';
import { describeToken, skipSpaces, type Token } from './lexer.js';
import { MAX_LIST_ITEMS, MAX_NESTING_DEPTH } from './limits.js';

interface Frame {
  list: boolean;
  origin: number;
  commas: number;
  /** Set while a BETWEEN in these parentheses waits for its AND. */
  pendingBetween: boolean;
}

const NEGATABLE = /^(?:in|like|ilike|between)$/;

/** How messages show an operator of jsep's input: `not~in` is NOT IN, `&` BETWEEN's AND. */
export function showOperator(operator: string): string {
  return operator === '&'
    ? 'AND'
    : /^[a-z~]+$/.test(operator)
      ? operator.replace('~', ' ').toUpperCase()
      : operator;
}

export const tooDeep = (source: SourceText, at: number) =>
  source.error(at, `nesting deeper than ${MAX_NESTING_DEPTH} levels`, 'count each ( and each NOT');

const wordOf = (token: Token | undefined): string | undefined =>
  token?.kind === 'word' ? token.text.toLowerCase() : undefined;

export interface JsepInput {
  text: string;
  /** The first comma between conditions at the top level, which jsep would skip. */
  strayComma: number | undefined;
}

export function prepareForJsep(source: SourceText, tokens: readonly Token[]): JsepInput {
  const pass = new KeywordPass(source, tokens);
  for (let k = 0; k < tokens.length; k++) {
    k = pass.token(k);
  }
  return pass.end();
}

class KeywordPass {
  /** Each space character is one UTF-16 unit, so replacing them keeps every index. */
  private readonly out: string[];
  private readonly frames: Frame[] = [{ list: false, origin: 0, commas: 0, pendingBetween: false }];
  /** Whether the last token ended an operand (a value, a name, `)`), and whether that one followed another. */
  private afterOperand = false;
  private juxtaposed = false;
  /** The last token as messages show it (`AND`, `'('`), when it was not an operand. */
  private previous: string | undefined;
  private strayComma: number | undefined;

  constructor(
    private readonly source: SourceText,
    private readonly tokens: readonly Token[],
  ) {
    this.out = source.text.replace(/\s/gu, ' ').split('');
  }

  /** Handles the token at `k`; returns the index of the last token it used. */
  token(k: number): number {
    const token = this.tokens[k] as Token;
    const word = wordOf(token);
    const next = wordOf(this.tokens[k + 1]);
    if (token.kind === 'symbol') {
      this.symbol(token, this.tokens[k - 1]);
    } else if (word === 'and' || word === 'or') {
      this.logical(token, word);
    } else if (word === 'not' && !NEGATABLE.test(next ?? '')) {
      if (this.afterOperand) {
        throw this.source.error(token.start, 'expected IN, LIKE, ILIKE or BETWEEN after NOT');
      }
      this.write(token, token, 'not', 'NOT');
    } else if (word === 'is' && next !== 'not') {
      return this.operator('is', token, k);
    } else if (word === 'not' || word === 'is') {
      return this.operator(`${word}~${next}`, token, k + 1);
    } else if (NEGATABLE.test(word ?? '')) {
      return this.operator(word as string, token, k);
    } else {
      if (this.top.list && this.afterOperand) {
        const found = describeToken(this.source, token);
        throw this.source.error(token.start, `expected ',' or ')' in the IN list, found ${found}`);
      }
      this.juxtaposed = this.afterOperand;
      this.afterOperand = true;
    }
    return k;
  }

  end(): JsepInput {
    this.requireNoPendingBetween(this.source.text.length);
    if (this.frames.length > 1) {
      throw this.source.error(this.top.origin, "unclosed '('", "expected ')'");
    }
    // jsep takes a word operator only when a character follows it: `a = 1 and` must reach it
    // as a dangling AND, not as a name.
    return { text: `${this.out.join('')} `, strayComma: this.strayComma };
  }

  private get top(): Frame {
    return this.frames[this.frames.length - 1] as Frame;
  }

  private symbol(token: Token & { kind: 'symbol' }, before: Token | undefined): void {
    const { start } = token;
    if (token.text === '.') {
      const hint = 'double-quote a column name that contains a dot: "a.b"';
      throw this.source.error(start, "unexpected '.': member access is not supported", hint);
    }
    // After an operand `(` would make a call; after two side by side, the parser reports those first.
    if (token.text === '(' && this.afterOperand && !this.juxtaposed) {
      const callee = before === undefined ? '' : this.source.text.slice(before.start, before.end);
      if (
        before?.kind === 'quoted-name' ||
        (before?.kind === 'word' && !/^(?:true|false|null)$/i.test(callee))
      ) {
        const hint = 'compare a column with a value: col = 1';
        throw this.source.error(
          before.start,
          `function calls are not supported: ${echo(callee, '')}(…)`,
          hint,
        );
      }
      throw this.source.error(start, "unexpected '('", 'join conditions with AND or OR');
    }
    if (token.text === '(') {
      this.push(false, start);
    } else if (token.text === ')') {
      this.close(start);
    } else if (token.text === ',') {
      this.comma(start);
    }
    this.afterOperand = token.text === ')';
    this.juxtaposed = false;
    this.previous = `'${token.text}'`;
  }

  private close(start: number): void {
    this.requireNoPendingBetween(start);
    const frame = this.top;
    const empty = !this.afterOperand && this.previous === "'('";
    if (!this.afterOperand && this.previous === 'NOT') {
      throw this.source.error(start, 'expected a condition after NOT');
    }
    if (this.frames.length === 1) {
      throw this.source.error(start, "unexpected ')' without a matching '('");
    }
    if (empty && frame.list) {
      throw this.source.error(start, 'empty IN list', 'write at least one value: col IN (1)');
    }
    if (empty || (!this.afterOperand && this.previous === "','")) {
      const wanted = frame.list ? 'a value' : 'a condition';
      throw this.source.error(
        start,
        empty ? "expected a condition inside '( )'" : `expected ${wanted} after ','`,
      );
    }
    this.frames.pop();
    this.out[start] = frame.list ? ']' : ')';
  }

  private comma(start: number): void {
    this.requireNoPendingBetween(start);
    const frame = this.top;
    if (frame.list && !this.afterOperand) {
      throw this.source.error(start, "expected a value before ','");
    }
    // jsep skips a comma at the top level or one that opens parentheses.
    if (this.previous === undefined || this.previous === "'('") {
      this.requireOperand(start, "','", 'a condition');
    }
    if (this.frames.length === 1 && this.afterOperand) {
      this.strayComma ??= start;
    }
    if (frame.list && ++frame.commas >= MAX_LIST_ITEMS) {
      const next = skipSpaces(this.source.text, start + 1);
      throw this.source.error(next, `IN list longer than ${MAX_LIST_ITEMS} items`);
    }
  }

  private logical(token: Token, word: 'and' | 'or'): void {
    this.requireOperand(token.start, word.toUpperCase(), 'a condition');
    const bounds = word === 'and' && this.top.pendingBetween;
    if (!bounds) {
      this.requireNoPendingBetween(token.start);
    }
    this.top.pendingBetween = false;
    this.write(token, token, bounds ? '&' : word, word.toUpperCase());
  }

  /** IN, LIKE, ILIKE, BETWEEN, IS and their NOT forms; `k` is the index of the operator's last word. */
  private operator(operator: string, first: Token, k: number): number {
    const shown = showOperator(operator);
    this.requireOperand(first.start, shown, 'a column name');
    this.write(first, this.tokens[k] as Token, operator, shown);
    const next = this.tokens[k + 1];
    const at = next?.start ?? this.source.text.length;
    if (operator.startsWith('is') && wordOf(next) !== 'null') {
      throw this.source.error(
        at,
        `expected ${operator === 'is' ? 'NULL or NOT NULL' : 'NULL'} after ${shown}`,
      );
    }
    if (operator.endsWith('between')) {
      this.requireNoPendingBetween(first.start);
      this.top.pendingBetween = true;
    } else if (operator.endsWith('in')) {
      if (next?.kind !== 'symbol' || next.text !== '(') {
        throw this.source.error(at, `expected '(' after ${shown}`, 'write a list: col IN (1, 2)');
      }
      this.push(true, next.start);
      this.out[next.start] = '[';
      this.previous = "'('";
      return k + 1;
    }
    return k;
  }

  /** jsep would read a keyword where an operand belongs as a name: say what was missing. */
  private requireOperand(start: number, shown: string, wanted: string): void {
    if (!this.afterOperand) {
      const after = this.previous === undefined ? '' : ` after ${this.previous}`;
      throw this.source.error(start, `expected ${wanted}${after}, found ${shown}`);
    }
  }

  private requireNoPendingBetween(at: number): void {
    if (this.top.pendingBetween) {
      throw this.source.error(at, 'expected AND to complete BETWEEN … AND …');
    }
  }

  /** Parentheses only; the parser counts each NOT with them, as it meets them. */
  private push(list: boolean, origin: number): void {
    if (this.frames.length > MAX_NESTING_DEPTH) {
      throw tooDeep(this.source, origin);
    }
    this.frames.push({ list, origin, commas: 0, pendingBetween: false });
  }

  /** Writes a keyword over the client's characters from `first` to `last`, padded with spaces. */
  private write(first: Token, last: Token, keyword: string, shown: string): void {
    for (let i = first.start; i < last.end; i++) {
      this.out[i] = keyword[i - first.start] ?? ' ';
    }
    this.afterOperand = false;
    this.previous = shown;
  }
}
