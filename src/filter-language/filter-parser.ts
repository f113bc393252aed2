/**
 * The only module that knows jsep. jsep's configuration is global, so it is set here once: its
 * JavaScript operators and literals removed, AND and OR added in every spelling (jsep matches
 * operators case-sensitively), and the comma, so that a stray one reaches the plugin and is
 * refused rather than skipped. The plugin's `gobble-token` hook reads a whole condition where
 * jsep wants an operand, from the tokens of the client's text: a predicate (`col op value`,
 * `BETWEEN … AND …`, `IN (…)`, `IS [NOT] NULL`), NOT and its operand, or a parenthesised
 * group. jsep parses the client's text (plain spaces for Unicode ones), so its index is the
 * client's and every position in the tree and in the messages is the client's. jsep builds AND
 * and OR by precedence; anything else is an error saying what was expected and where.
 */
import jsep from 'jsep';
import type { ComparisonOperator, FilterSyntax, LiteralSyntax, NameRef } from './ast.js';
import { echo, type SourceText } from './errors.js';
import { checkText, describeToken, type Token, tokenize } from './lexer.js';
import { MAX_LIST_ITEMS, MAX_NESTING_DEPTH } from './limits.js';

/**
 * What follows a column in a filter: `)` or an operator with the start of what it takes. A
 * quoted name ends only where this follows (see `readQuotedName`): in `"x\" = 1` the column is `x\`.
 */
const VALUE = String.raw`(?:['(+\-.\d]|(?:true|false|null)(?![\p{L}\p{M}\p{N}_]))`;
const FOLLOWS_COLUMN = new RegExp(
  String.raw`\s*(?:\)|(?:<>|!=|[<>]=?|=)\s*${VALUE}|(?:not\s+)?(?:i?like\s*['(]|in\s*\(|between\s*${VALUE})|is\s+(?:not\s+)?null(?![\p{L}\p{M}\p{N}_]))`,
  'iuy',
);

const KEYWORDS: ReadonlySet<string> = new Set(['and', 'or', 'not', 'in', 'like', 'ilike', 'is', 'between']);
const COMPARISONS: ReadonlySet<string> = new Set(['=', '!=', '<>', '<', '<=', '>', '>=']);
/** The word operators; all but IS take NOT before them, IS after it. */
const NEGATABLE: ReadonlySet<string> = new Set(['in', 'like', 'ilike', 'between']);
const JOIN_HINT = 'join conditions with AND or OR';

/** An operator as the client wrote it: `base` is `=`, `in`, `is`…; `last` its last token. */
interface Operator {
  base: string;
  negated: boolean;
  shown: string;
  last: number;
}

/** A condition the plugin read, already in the closed syntax. */
interface ConditionNode extends jsep.Expression {
  type: 'Condition';
  syntax: FilterSyntax;
}

const spellings = (word: string): string[] =>
  [...word].reduce<string[]>((all, c) => all.flatMap((s) => [s + c, s + c.toUpperCase()]), ['']);

// Higher binds tighter: the comma (always refused) < OR < AND.
jsep.removeAllBinaryOps();
jsep.removeAllUnaryOps();
jsep.removeAllLiterals();
jsep.addBinaryOp(',', 1);
for (const [word, precedence] of [['or', 2] as const, ['and', 3] as const]) {
  for (const spelling of spellings(word)) {
    jsep.addBinaryOp(spelling, precedence);
  }
}

/** The filter being parsed: jsep runs its hooks synchronously, one parse at a time. */
let reading: ConditionReader | undefined;

jsep.plugins.register({
  name: 'sql-conditions',
  init() {
    jsep.hooks.add('gobble-token', function (this: jsep.HookScope, env: { node?: jsep.Expression }) {
      env.node = reading?.condition(this);
    });
  },
});

/**
 * Parses `filters` into its syntax tree; `eager` ends each quoted name at its first possible end
 * (see `readQuotedName`). Throws QueryLanguageError for anything outside the grammar.
 */
export function parseFilterSyntax(source: SourceText, eager = false): FilterSyntax {
  checkText(source);
  const tokens = tokenize(source, FOLLOWS_COLUMN, eager);
  if (tokens.length === 0) {
    throw source.error(
      0,
      'expected a condition',
      "for example num_operators > 10 AND avs_name ILIKE 'eigen%'",
    );
  }
  reading = new ConditionReader(source, tokens);
  try {
    // jsep would skip a leading comma; it skips only plain spaces; and it takes a word operator
    // only when a character follows it, so `a = 1 and` must end in a space to reach it as AND.
    if (isSymbol(tokens[0], ',')) {
      throw reading.expectedCondition(0);
    }
    return toSyntax(jsep(`${source.text.replace(/\s/gu, ' ')} `));
  } finally {
    reading = undefined;
  }
}

/** jsep's tree of AND and OR over the plugin's conditions; `a AND b AND c` as one flat list. */
function toSyntax(node: jsep.Expression): FilterSyntax {
  if (node.type === 'Condition') {
    return (node as ConditionNode).syntax;
  }
  const kind = (node as jsep.BinaryExpression).operator.toLowerCase() as 'and' | 'or';
  const operands: jsep.Expression[] = [];
  for (const pending = [node]; pending.length > 0; ) {
    const next = pending.pop() as jsep.BinaryExpression;
    if (next.type === 'BinaryExpression' && next.operator.toLowerCase() === kind) {
      pending.push(next.right, next.left);
    } else {
      operands.push(next);
    }
  }
  return { kind, operands: operands.map(toSyntax) };
}

const isSymbol = (token: Token | undefined, text: string): boolean =>
  token?.kind === 'symbol' && token.text === text;

/** A column name, as opposed to a literal or a keyword. */
const isName = (token: Token): boolean =>
  token.kind === 'quoted-name' ||
  (token.kind === 'word' &&
    !KEYWORDS.has(token.text.toLowerCase()) &&
    !/^(?:true|false|null)$/i.test(token.text));

/** Keywords as they are, symbols quoted: `AND`, `'='`. */
const quote = (shown: string): string => (/^[A-Z ]+$/.test(shown) ? shown : `'${shown}'`);

/** Reads conditions from the client's tokens where jsep asks for an operand. */
class ConditionReader {
  /** Token indices by where they start in the text: jsep's index is the client's. */
  private readonly at: Map<number, number>;
  /** Where each open `(` stands, and how many `(` and NOT the reader is inside. */
  private readonly groups: number[] = [];
  private depth = 0;

  constructor(
    private readonly source: SourceText,
    private readonly tokens: readonly Token[],
  ) {
    this.at = new Map(tokens.map((token, k) => [token.start, k]));
  }

  /** The `gobble-token` hook: the condition at jsep's index, which ends where jsep goes on. */
  condition(scope: jsep.HookScope): jsep.Expression {
    const k = this.at.get(scope.index) ?? this.tokens.length;
    const token = this.tokens[k];
    const previous = this.tokens[k - 1];
    if (previous !== undefined && !this.opensCondition(k - 1)) {
      throw this.afterCondition(k); // jsep found no AND or OR after a complete condition
    }
    if (isSymbol(previous, ',') && (token === undefined || this.startsCondition(k))) {
      throw this.afterCondition(k - 1);
    }
    if (token === undefined || !this.startsCondition(k)) {
      throw this.expectedCondition(k);
    }
    if (token.kind === 'word' && token.text.toLowerCase() === 'not') {
      this.enter(token.start);
      scope.index = token.end;
      const operand = toSyntax(scope.gobbleToken() as jsep.Expression);
      this.depth--;
      return { type: 'Condition', syntax: { kind: 'not', operand } };
    }
    const operand = this.unwrap(k);
    if (operand === undefined) {
      return this.group(scope, token);
    }
    const [syntax, next] = this.predicate(...operand);
    scope.index = (this.tokens[next - 1] as Token).end;
    return { type: 'Condition', syntax };
  }

  /** A parenthesised condition is jsep's node for what is inside, as in jsep's own groups. */
  private group(scope: jsep.HookScope, open: Token): jsep.Expression {
    this.enter(open.start);
    this.groups.push(open.start);
    scope.index = open.end;
    const inner = scope.gobbleExpression();
    const k = this.at.get(scope.index) ?? this.tokens.length;
    const close = this.tokens[k];
    if (close === undefined) {
      throw this.unclosed(open.start);
    }
    if (!isSymbol(close, ')')) {
      throw this.afterCondition(k);
    }
    scope.index = close.end;
    this.groups.pop();
    this.depth--;
    return inner;
  }

  /**
   * The column at token `k`, its operator at `after` (past the parentheses around the column) and
   * what the operator takes; returns the index after them.
   */
  private predicate(k: number, after: number): [FilterSyntax, number] {
    const token = this.tokens[k] as Token;
    const operator = this.operatorAt(after);
    const text = echo(this.text(token), '');
    if (!isName(token)) {
      throw operator === undefined
        ? this.error(
            k,
            `expected a condition, found the value ${text}`,
            'write column operator value, for example num_operators > 10',
          )
        : this.error(
            k,
            `expected a column name before ${quote(operator.shown)}, found the value ${text}`,
            'the column comes first: num_operators > 10',
          );
    }
    this.refuseCallOrMember(k);
    if (operator === undefined) {
      if (this.word(after) === 'not') {
        throw this.error(after, 'expected IN, LIKE, ILIKE or BETWEEN after NOT');
      }
      this.refuseUnclosedAtEnd(after);
      const hint = "for example = 1, IN (1, 2), LIKE 'a%' or IS NULL";
      throw this.source.error(token.end, `expected an operator after column ${text}`, hint);
    }
    const name = token.kind === 'quoted-name' ? token.name : this.text(token);
    const column: NameRef = { name, start: token.start, end: token.end };
    const { base, negated, shown: operatorText } = operator;
    const j = operator.last + 1;
    switch (base) {
      case 'is':
        if (this.word(j) !== 'null') {
          throw this.error(j, `expected ${negated ? 'NULL' : 'NULL or NOT NULL'} after ${operatorText}`);
        }
        return [{ kind: 'is-null', negated, column }, j + 1];
      case 'in':
        return this.list({ kind: 'in', negated, operatorText, column, values: [] }, j);
      case 'between': {
        const [low, and] = this.value(j, operatorText);
        if (this.word(and) !== 'and') {
          throw this.error(and, 'expected AND to complete BETWEEN … AND …');
        }
        const [high, next] = this.value(and + 1, 'AND');
        return [{ kind: 'between', negated, operatorText, column, low, high }, next];
      }
      case 'like':
      case 'ilike': {
        const [pattern, next] = this.value(j, operatorText);
        return [
          { kind: 'like', negated, caseInsensitive: base === 'ilike', operatorText, column, pattern },
          next,
        ];
      }
      default: {
        const comparison = (base === '!=' ? '<>' : base) as ComparisonOperator;
        const [value, next] = this.value(j, operatorText);
        return [{ kind: 'compare', operator: comparison, operatorText, column, value }, next];
      }
    }
  }

  /** An IN list's `( value, … )` from token `j`, into `syntax.values`. */
  private list(syntax: Extract<FilterSyntax, { kind: 'in' }>, j: number): [FilterSyntax, number] {
    const open = this.tokens[j];
    if (!isSymbol(open, '(')) {
      throw this.error(j, `expected '(' after ${syntax.operatorText}`, 'write a list: col IN (1, 2)');
    }
    if (this.depth >= MAX_NESTING_DEPTH) {
      throw this.tooDeep((open as Token).start);
    }
    for (let k = j + 1; ; ) {
      const item = this.tokens[k];
      if (item === undefined) {
        throw this.unclosed((open as Token).start);
      }
      if (isSymbol(item, ')') || isSymbol(item, ',')) {
        throw syntax.values.length === 0 && isSymbol(item, ')')
          ? this.error(k, 'empty IN list', 'write at least one value: col IN (1)')
          : this.error(k, `expected a value ${isSymbol(item, ')') ? 'after' : 'before'} ','`);
      }
      const [value, next] = this.value(k, syntax.operatorText);
      syntax.values.push(value);
      const separator = this.tokens[next];
      if (isSymbol(separator, ')')) {
        return [syntax, next + 1];
      }
      if (separator === undefined) {
        throw this.unclosed((open as Token).start);
      }
      if (!isSymbol(separator, ',')) {
        throw this.error(next, `expected ',' or ')' in the IN list, found ${this.found(next)}`);
      }
      if (syntax.values.length >= MAX_LIST_ITEMS) {
        throw this.error(next + 1, `IN list longer than ${MAX_LIST_ITEMS} items`);
      }
      k = next + 1;
    }
  }

  /** The literal at token `j`, perhaps in parentheses, which the operator `shown` takes; and the index after it. */
  private value(j: number, shown: string): [LiteralSyntax, number] {
    const [k, next] = this.unwrap(j) ?? [j, j];
    const token = this.tokens[k];
    const word = this.word(k);
    if (token?.kind === 'string' || token?.kind === 'number' || token?.kind === 'hex') {
      return [token, next]; // the same shape
    }
    if (token !== undefined && (word === 'true' || word === 'false' || word === 'null')) {
      const { start, end } = token;
      const literal: LiteralSyntax =
        word === 'null'
          ? { kind: 'null', start, end }
          : { kind: 'boolean', value: word === 'true', start, end };
      return [literal, next];
    }
    if (token === undefined || next === j) {
      throw this.expected(j, 'a value', quote(shown));
    }
    this.refuseCallOrMember(k);
    const name = this.text(token);
    throw this.error(
      k,
      `expected a value after ${quote(shown)}, found the column ${echo(name, '')}`,
      `comparing two columns is not supported; to compare with text, quote it: '${name.replaceAll("'", "''")}'`,
    );
  }

  /** The operator at token `k`, of one or two words (`NOT IN`, `IS NOT`), if there is one. */
  private operatorAt(k: number): Operator | undefined {
    const token = this.tokens[k];
    if (token?.kind === 'symbol') {
      return COMPARISONS.has(token.text)
        ? { base: token.text, negated: false, shown: token.text, last: k }
        : undefined;
    }
    const [word = '', next = ''] = [this.word(k), this.word(k + 1)];
    const negated = (word === 'not' && NEGATABLE.has(next)) || (word === 'is' && next === 'not');
    if (!negated && word !== 'is' && !NEGATABLE.has(word)) {
      return undefined;
    }
    const shown = (negated ? `${word} ${next}` : word).toUpperCase();
    return { base: word === 'not' ? next : word, negated, shown, last: negated ? k + 1 : k };
  }

  /**
   * A column or value at token `k` in as many parentheses as close right after it (`((1))`): the
   * index of the token inside, and the index after the last `)`; undefined if `k` is not one.
   */
  private unwrap(k: number): [number, number] | undefined {
    let inner = k;
    while (isSymbol(this.tokens[inner], '(')) {
      inner++;
    }
    const token = this.tokens[inner];
    const levels = inner - k;
    if (token === undefined || token.kind === 'symbol' || KEYWORDS.has(this.word(inner) ?? '')) {
      return undefined;
    }
    for (let level = 0; level < levels; level++) {
      if (!isSymbol(this.tokens[inner + 1 + level], ')')) {
        return undefined;
      }
    }
    if (this.depth + levels > MAX_NESTING_DEPTH) {
      throw this.tooDeep((this.tokens[k + MAX_NESTING_DEPTH - this.depth] as Token).start);
    }
    return [inner, inner + 1 + levels];
  }

  /** Whether a condition may begin just after token `k`. */
  private opensCondition(k: number): boolean {
    const word = this.word(k);
    return (
      word === 'and' ||
      word === 'or' ||
      word === 'not' ||
      isSymbol(this.tokens[k], '(') ||
      isSymbol(this.tokens[k], ',')
    );
  }

  /** Whether token `k` can begin a condition: a name or value (the predicate says which), NOT or `(`. */
  private startsCondition(k: number): boolean {
    const token = this.tokens[k];
    const word = this.word(k);
    return (
      token !== undefined &&
      this.operatorAt(k) === undefined &&
      (token.kind === 'symbol' ? token.text === '(' : word === 'not' || !KEYWORDS.has(word ?? ''))
    );
  }

  /** Token `k` stands where a condition must begin, and cannot. */
  expectedCondition(k: number): Error {
    if (isSymbol(this.tokens[k - 1], '(') && isSymbol(this.tokens[k], ')')) {
      return this.error(k, "expected a condition inside '( )'");
    }
    const wanted = this.operatorAt(k) === undefined ? 'a condition' : 'a column name';
    return this.expected(k, wanted, k === 0 ? undefined : this.found(k - 1));
  }

  /** Token `k` follows a complete condition, where only AND, OR, `)` or the end may. */
  private afterCondition(k: number): Error {
    const operator = this.operatorAt(k);
    if (isSymbol(this.tokens[k], ')')) {
      return this.error(k, "unexpected ')' without a matching '('");
    }
    if (isSymbol(this.tokens[k], '(')) {
      return this.error(k, "unexpected '('", JOIN_HINT);
    }
    if (operator !== undefined) {
      return this.error(k, `unexpected ${quote(operator.shown)} after a complete condition`, JOIN_HINT);
    }
    if (this.word(k) === 'not') {
      return this.error(k, 'expected IN, LIKE, ILIKE or BETWEEN after NOT');
    }
    return this.error(k, `expected AND, OR or the end of the condition, found ${this.found(k)}`);
  }

  /** `wanted` is missing at token `k` (perhaps the end), after what the client wrote. */
  private expected(k: number, wanted: string, after: string | undefined): Error {
    this.refuseUnclosedAtEnd(k);
    const found = k < this.tokens.length ? `, found ${this.found(k)}` : '';
    return this.error(k, `expected ${wanted}${after === undefined ? '' : ` after ${after}`}${found}`);
  }

  /** At the end of the text, an unclosed `(` is the first thing wrong. */
  private refuseUnclosedAtEnd(k: number): void {
    const open = this.groups.at(-1);
    if (k >= this.tokens.length && open !== undefined) {
      throw this.unclosed(open);
    }
  }

  /** After a name, `(` would make a call and `.` a member access: say so. */
  private refuseCallOrMember(k: number): void {
    const [token, next] = [this.tokens[k] as Token, this.tokens[k + 1]];
    if (isSymbol(next, '(')) {
      const call = `function calls are not supported: ${echo(this.text(token), '')}(…)`;
      throw this.error(k, call, 'compare a column with a value: col = 1');
    }
    if (isSymbol(next, '.')) {
      const hint = 'double-quote a column name that contains a dot: "a.b"';
      throw this.error(k + 1, "unexpected '.': member access is not supported", hint);
    }
  }

  /** Each `(` and each NOT nests: bound the depth before jsep's recursion grows. */
  private enter(at: number): void {
    if (++this.depth > MAX_NESTING_DEPTH) {
      throw this.tooDeep(at);
    }
  }

  private tooDeep(at: number): Error {
    return this.source.error(
      at,
      `nesting deeper than ${MAX_NESTING_DEPTH} levels`,
      'count each ( and each NOT',
    );
  }

  private unclosed(at: number): Error {
    return this.source.error(at, "unclosed '('", "expected ')'");
  }

  /** What stands at token `k`, for a message: an operator or keyword as a word, anything else quoted. */
  private found(k: number): string {
    const word = this.word(k) ?? '';
    const operator = this.operatorAt(k);
    if (operator !== undefined) {
      return quote(operator.shown);
    }
    return KEYWORDS.has(word) ? word.toUpperCase() : describeToken(this.source, this.tokens[k]);
  }

  private word(k: number): string | undefined {
    const token = this.tokens[k];
    return token?.kind === 'word' ? token.text.toLowerCase() : undefined;
  }

  private text(token: Token): string {
    return this.source.text.slice(token.start, token.end);
  }

  /** An error at token `k`, or at the end of the text. */
  private error(k: number, detail: string, hint?: string): Error {
    return this.source.error(this.tokens[k]?.start ?? this.source.text.length, detail, hint);
  }
}
