/**
 * The only module that knows jsep, whose configuration is global: its JavaScript operators and
 * literals removed; AND and OR added in every spelling (it matches case-sensitively); and the
 * comma, so that a stray one reaches the plugin to be refused, not skipped. The plugin's
 * `gobble-token` hook reads, from the lexer's tokens, a whole condition where jsep wants an
 * operand: a predicate, NOT and its operand, or a group. jsep reads the client's text (Unicode
 * spaces made plain), so every index is the client's. jsep builds AND and OR by precedence;
 * anything else is an error at the first thing wrong in reading order, saying what was expected.
 */
import jsep from 'jsep';
import type { ComparisonOperator, FilterSyntax, LiteralSyntax } from './ast.js';
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
/** The operators; all but IS take NOT before them, IS after it. */
const NEGATABLE: ReadonlySet<string> = new Set(['in', 'like', 'ilike', 'between']);
const OPERATORS: ReadonlySet<string> = new Set(['=', '!=', '<>', '<', '<=', '>', '>=', 'is', ...NEGATABLE]);
/** What may stand just before a condition. */
const OPENERS: ReadonlySet<string> = new Set(['and', 'or', 'not', '(', ',']);
const JOIN_HINT = 'join conditions with AND or OR';
const TOO_DEEP = [`nesting deeper than ${MAX_NESTING_DEPTH} levels`, 'count each ( and each NOT'] as const;
const UNCLOSED = ["unclosed '('", "expected ')'"] as const;

/** A condition the plugin read, already in the closed syntax. */
type ConditionNode = jsep.Expression & { type: 'Condition'; syntax: FilterSyntax };

const spellings = (word: string): string[] =>
  [...word].reduce<string[]>((all, c) => all.flatMap((s) => [s + c, s + c.toUpperCase()]), ['']);

// Higher binds tighter: the comma (always refused) < OR < AND.
jsep.removeAllBinaryOps();
jsep.removeAllUnaryOps();
jsep.removeAllLiterals();
jsep.addBinaryOp(',', 1);
for (const spelling of spellings('or')) jsep.addBinaryOp(spelling, 2);
for (const spelling of spellings('and')) jsep.addBinaryOp(spelling, 3);

/** The filter being parsed: jsep runs its hooks synchronously, one parse at a time. */
let reading: ConditionReader | undefined;

/** The plugin's `gobble-token` hook: where jsep wants an operand, a condition. */
function readCondition(this: jsep.HookScope, env: { node?: jsep.Expression }): void {
  env.node = reading?.condition(this);
}
jsep.plugins.register({ name: 'sql-conditions', init: () => jsep.hooks.add('gobble-token', readCondition) });

/** `filters` as its syntax tree, or a QueryLanguageError; `eager` as in `readQuotedName`. */
export function parseFilterSyntax(source: SourceText, eager = false): FilterSyntax {
  checkText(source);
  const tokens = tokenize(source, FOLLOWS_COLUMN, eager);
  const example = "for example num_operators > 10 AND avs_name ILIKE 'eigen%'";
  if (tokens.length === 0) throw source.error(0, 'expected a condition', example);
  const dot = tokens.find((token) => token.kind === 'symbol' && token.text === '.');
  const hint = 'double-quote a column name that contains a dot: "a.b"';
  if (dot) throw source.error(dot.start, "unexpected '.': member access is not supported", hint);
  reading = new ConditionReader(source, tokens);
  try {
    // jsep would skip a comma at the very start; and it takes a word operator only when a
    // character follows it, so `a = 1 and` must end in a space to reach it as AND.
    if (reading.kinds[0] === ',') throw reading.expectedCondition(0);
    return toSyntax(jsep(`${source.text.replace(/\s/gu, ' ')} `));
  } finally {
    reading = undefined;
  }
}

/** jsep's tree of AND and OR over the plugin's conditions, `a AND b AND c` as one flat list. */
function toSyntax(node: jsep.Expression): FilterSyntax {
  if (node.type === 'Condition') return (node as ConditionNode).syntax;
  const kind = (node as jsep.BinaryExpression).operator.toLowerCase() as 'and' | 'or';
  const operands: FilterSyntax[] = [];
  const gather = (part: jsep.Expression): void => {
    const { operator, left, right } = part as jsep.BinaryExpression;
    if (operator?.toLowerCase() === kind) [left, right].forEach(gather);
    else operands.push(toSyntax(part));
  };
  gather(node);
  return { kind, operands };
}

/** A token's part in the grammar: `name`, `value`, `null`, a keyword or a symbol. */
function kindOf(token: Token): string {
  if (token.kind === 'symbol') return token.text;
  if (token.kind !== 'word') return token.kind === 'quoted-name' ? 'name' : 'value';
  const word = token.text.toLowerCase();
  if (word === 'true' || word === 'false') return 'value';
  return KEYWORDS.has(word) || word === 'null' ? word : 'name';
}

/** Keywords as they are, symbols quoted: `AND`, `'='`. */
const quote = (shown: string): string => (/^[A-Z ]+$/.test(shown) ? shown : `'${shown}'`);

/** Reads conditions from the client's tokens where jsep asks for an operand. */
class ConditionReader {
  /** Token indices by where they start in the text: jsep's index is the client's. */
  private readonly at: Map<number, number>;
  /** Each token's part in the grammar (see `kindOf`); undefined past the end. */
  readonly kinds: string[];
  /** The open groups' `(` tokens, and how many `(` and NOT the reader is inside. */
  private readonly groups: number[] = [];
  private depth = 0;

  constructor(
    private readonly source: SourceText,
    private readonly tokens: readonly Token[],
  ) {
    this.at = new Map(tokens.map((token, k) => [token.start, k]));
    this.kinds = tokens.map(kindOf);
  }

  /** The `gobble-token` hook: the condition at jsep's index, after which jsep goes on. */
  condition(scope: jsep.HookScope): jsep.Expression {
    const k = this.at.get(scope.index) ?? this.tokens.length;
    const [before, kind] = [this.kinds[k - 1], this.kinds[k]];
    // jsep found no AND or OR after a complete condition, or a comma did not join two.
    if (k > 0 && !OPENERS.has(before)) throw this.afterCondition(k);
    if (before === ',' && (kind === undefined || this.startsCondition(k))) throw this.afterCondition(k - 1);
    if (!this.startsCondition(k)) throw this.expectedCondition(k);
    const operand = this.unwrap(k);
    if (operand !== undefined) {
      const [syntax, next] = this.predicate(...operand);
      scope.index = this.end(next - 1);
      return { type: 'Condition', syntax } as ConditionNode;
    }
    scope.index = this.enter(k);
    if (kind === 'not') {
      const negated = toSyntax(scope.gobbleToken() as jsep.Expression);
      this.depth--;
      return { type: 'Condition', syntax: { kind: 'not', operand: negated } } as ConditionNode;
    }
    // A group is jsep's node for what is inside, as jsep's own groups are.
    this.groups.push(k);
    const inner = scope.gobbleExpression();
    const close = this.at.get(scope.index) ?? this.tokens.length;
    if (this.kinds[close] === undefined) throw this.error(k, ...UNCLOSED);
    if (this.kinds[close] !== ')') throw this.afterCondition(close);
    scope.index = this.end(close);
    this.groups.pop();
    this.depth--;
    return inner;
  }

  /** The column at `k`, its operator at `after` and what that takes; returns the index after them. */
  private predicate(k: number, after: number): [FilterSyntax, number] {
    const operator = this.operatorAt(after);
    const shown = echo(this.text(k), '');
    if (this.kinds[k] !== 'name') {
      const [wanted, hint] = operator
        ? [`a column name before ${quote(operator.shown)}`, 'the column comes first: num_operators > 10']
        : ['a condition', 'write column operator value, for example num_operators > 10'];
      throw this.error(k, `expected ${wanted}, found the value ${shown}`, hint);
    }
    this.refuseCall(k);
    if (operator === undefined) {
      if (this.kinds[after] === 'not') throw this.afterCondition(after);
      this.refuseUnclosedAtEnd(after);
      const hint = "for example = 1, IN (1, 2), LIKE 'a%' or IS NULL";
      throw this.source.error(this.end(k), `expected an operator after column ${shown}`, hint);
    }
    const token = this.tokens[k] as Token;
    const { start, end } = token;
    const column = { name: token.kind === 'quoted-name' ? token.name : this.text(k), start, end };
    const { base, negated, shown: operatorText } = operator;
    const j = operator.last + 1;
    if (base === 'is') {
      const wanted = negated ? 'NULL' : 'NULL or NOT NULL';
      if (this.kinds[j] !== 'null') throw this.error(j, `expected ${wanted} after ${operatorText}`);
      return [{ kind: 'is-null', negated, column }, j + 1];
    }
    if (base === 'in') return this.list({ kind: 'in', negated, operatorText, column, values: [] }, j);
    const [value, next] = this.value(j, operatorText);
    if (base === 'between') {
      if (this.kinds[next] !== 'and') throw this.error(next, 'expected AND to complete BETWEEN … AND …');
      const [high, end] = this.value(next + 1, 'AND');
      return [{ kind: 'between', negated, operatorText, column, low: value, high }, end];
    }
    if (base === 'like' || base === 'ilike') {
      const caseInsensitive = base === 'ilike';
      return [{ kind: 'like', negated, caseInsensitive, operatorText, column, pattern: value }, next];
    }
    const comparison = (base === '!=' ? '<>' : base) as ComparisonOperator;
    return [{ kind: 'compare', operator: comparison, operatorText, column, value }, next];
  }

  /** An IN list's `( value, … )` at token `j`, into `syntax.values`; returns the index after it. */
  private list(syntax: Extract<FilterSyntax, { kind: 'in' }>, j: number): [FilterSyntax, number] {
    const hint = 'write a list: col IN (1, 2)';
    if (this.kinds[j] !== '(') throw this.error(j, `expected '(' after ${syntax.operatorText}`, hint);
    if (this.depth >= MAX_NESTING_DEPTH) throw this.error(j, ...TOO_DEEP);
    for (let k = j + 1; ; ) {
      const item = this.kinds[k];
      if (item === undefined) throw this.error(j, ...UNCLOSED);
      const empty = item === ')' && syntax.values.length === 0;
      if (empty) throw this.error(k, 'empty IN list', 'write at least one value: col IN (1)');
      const wanted = `expected a value ${item === ')' ? 'after' : 'before'} ','`;
      if (item === ')' || item === ',') throw this.error(k, wanted);
      const [value, next] = this.value(k, syntax.operatorText);
      syntax.values.push(value);
      const separator = this.kinds[next];
      if (separator === ')') return [syntax, next + 1];
      if (separator === undefined) throw this.error(j, ...UNCLOSED);
      const found = `expected ',' or ')' in the IN list, found ${this.found(next)}`;
      if (separator !== ',') throw this.error(next, found);
      const tooLong = `IN list longer than ${MAX_LIST_ITEMS} items`;
      if (syntax.values.length >= MAX_LIST_ITEMS) throw this.error(next + 1, tooLong);
      k = next + 1;
    }
  }

  /** The literal at token `j`, perhaps in parentheses, that `shown` takes; and the index after it. */
  private value(j: number, shown: string): [LiteralSyntax, number] {
    const [k, next] = this.unwrap(j) ?? [j, j];
    if (this.kinds[j] === '(' && this.kinds[j + 1] === ')') throw this.expected(j + 1, 'a value', "'('");
    if (next === j) throw this.expected(j, 'a value', quote(shown));
    const token = this.tokens[k] as Token;
    const { start, end } = token;
    if (token.kind === 'string' || token.kind === 'number' || token.kind === 'hex') return [token, next];
    if (this.kinds[k] === 'null') return [{ kind: 'null', start, end }, next];
    const value = this.text(k).toLowerCase() === 'true';
    if (this.kinds[k] === 'value') return [{ kind: 'boolean', value, start, end }, next];
    this.refuseCall(k);
    const name = this.text(k);
    const quoted = name.replaceAll("'", "''");
    const hint = `comparing two columns is not supported; to compare with text, quote it: '${quoted}'`;
    throw this.error(k, `expected a value after ${quote(shown)}, found the column ${echo(name, '')}`, hint);
  }

  /**
   * A column or value at token `k` in as many parentheses as close right after it (`((1))`): the
   * index of the token inside and the index after the last `)`; undefined if there is none.
   */
  private unwrap(k: number): [number, number] | undefined {
    let inner = k;
    while (this.kinds[inner] === '(') inner++;
    const levels = inner - k;
    if (!['name', 'value', 'null'].includes(this.kinds[inner])) return undefined;
    if (this.kinds.slice(inner + 1, inner + 1 + levels).join('') !== ')'.repeat(levels)) return undefined;
    if (this.depth + levels > MAX_NESTING_DEPTH)
      throw this.error(k + MAX_NESTING_DEPTH - this.depth, ...TOO_DEEP);
    return [inner, inner + 1 + levels];
  }

  /** The operator at token `k`, of one or two words (`NOT IN`, `IS NOT`); `last` is its last token. */
  private operatorAt(k: number) {
    const [word, next] = [this.kinds[k], this.kinds[k + 1]];
    const negated = (word === 'not' && NEGATABLE.has(next)) || (word === 'is' && next === 'not');
    if (!negated && !OPERATORS.has(word)) return undefined;
    const shown = negated ? `${word} ${next}`.toUpperCase() : this.text(k).toUpperCase();
    return { base: word === 'not' ? next : word, negated, shown, last: negated ? k + 1 : k };
  }

  /** Whether token `k` can begin a condition: a name or value (the predicate says which), NOT or `(`. */
  private startsCondition(k: number): boolean {
    const not = this.kinds[k] === 'not' && this.operatorAt(k) === undefined;
    return not || ['name', 'value', 'null', '('].includes(this.kinds[k]);
  }

  /** Token `k` stands where a condition must begin, and cannot. */
  expectedCondition(k: number): Error {
    const empty = this.kinds[k - 1] === '(' && this.kinds[k] === ')';
    if (empty) return this.error(k, "expected a condition inside '( )'");
    const wanted = this.operatorAt(k) === undefined ? 'a condition' : 'a column name';
    return this.expected(k, wanted, k === 0 ? undefined : this.found(k - 1));
  }

  /** Token `k` follows a complete condition, where only AND, OR, `)` or the end may. */
  private afterCondition(k: number): Error {
    const op = this.operatorAt(k);
    if (this.kinds[k] === ')') return this.error(k, "unexpected ')' without a matching '('");
    if (this.kinds[k] === '(') return this.error(k, "unexpected '('", JOIN_HINT);
    if (op) return this.error(k, `unexpected ${quote(op.shown)} after a complete condition`, JOIN_HINT);
    if (this.kinds[k] === 'not') return this.error(k, 'expected IN, LIKE, ILIKE or BETWEEN after NOT');
    return this.error(k, `expected AND, OR or the end of the condition, found ${this.found(k)}`);
  }

  /** `wanted` is missing at token `k` (perhaps the end), after what the client wrote. */
  private expected(k: number, wanted: string, after: string | undefined): Error {
    this.refuseUnclosedAtEnd(k);
    const found = k < this.tokens.length ? `, found ${this.found(k)}` : '';
    return this.error(k, `expected ${wanted}${after === undefined ? '' : ` after ${after}`}${found}`);
  }

  /** At the end of the text, an unclosed `(` is what is wrong. */
  private refuseUnclosedAtEnd(k: number): void {
    const open = this.groups.at(-1);
    if (k >= this.tokens.length && open !== undefined) throw this.error(open, ...UNCLOSED);
  }

  /** After a name, `(` would make a function call. */
  private refuseCall(k: number): void {
    const call = `function calls are not supported: ${echo(this.text(k), '')}(…)`;
    if (this.kinds[k + 1] === '(') throw this.error(k, call, 'compare a column with a value: col = 1');
  }

  /** Each `(` and each NOT nests: bound the depth before jsep's recursion grows. */
  private enter(k: number): number {
    if (++this.depth > MAX_NESTING_DEPTH) throw this.error(k, ...TOO_DEEP);
    return this.end(k);
  }

  /** What stands at token `k`, for a message: an operator or keyword as a word, anything else quoted. */
  private found(k: number): string {
    const [operator, kind] = [this.operatorAt(k), this.kinds[k]];
    if (operator !== undefined) return quote(operator.shown);
    return KEYWORDS.has(kind) ? kind.toUpperCase() : describeToken(this.source, this.tokens[k]);
  }

  private text(k: number): string {
    const token = this.tokens[k];
    return token === undefined ? '' : this.source.text.slice(token.start, token.end);
  }

  private end(k: number): number {
    return this.tokens[k]?.end ?? this.source.text.length;
  }

  /** An error at token `k`, or at the end of the text. */
  private error(k: number, detail: string, hint?: string): Error {
    return this.source.error(this.tokens[k]?.start ?? this.source.text.length, detail, hint);
  }
}
