/**
 * The only module that knows jsep. jsep's configuration is global, so it is set here once: its
 * JavaScript operators and literals removed, ours added, and one plugin that reads SQL's tokens
 * (strings, quoted names, hex, signed numbers, names) where they stand in the client's text. jsep
 * parses the keyword pass's text, in which every character stands where the client put it, so
 * jsep's indices and our nodes' positions are the client's. The walker turns jsep's loose tree
 * into the closed `FilterSyntax`: it folds NOT, BETWEEN … AND and IN (…) into their predicates,
 * and every node type or shape outside the grammar is an error saying what was expected and where.
 */
import jsep from 'jsep';
import type { ComparisonOperator, FilterSyntax, LiteralSyntax, NameRef } from './ast.js';
import { echo, type SourceText } from './errors.js';
import { prepareForJsep, showOperator, tooDeep } from './keyword-pass.js';
import { checkText, describeToken, readToken, skipSpaces, type Token, tokenize } from './lexer.js';
import { MAX_NESTING_DEPTH } from './limits.js';

const COMPARISONS: readonly string[] = ['=', '!=', '<>', '<', '<=', '>', '>='];
const LIKES: readonly string[] = ['like', 'not~like', 'ilike', 'not~ilike'];
const KEYWORDS: ReadonlySet<string> = new Set(['and', 'or', 'not', 'in', 'like', 'ilike', 'is', 'between']);
/**
 * What follows a column in a filter: `)` or an operator with the start of what it takes. A
 * quoted name ends only where this follows (see `readQuotedName`): in `"x\" = 1` the column is `x\`.
 */
const VALUE = String.raw`(?:['(+\-.\d]|(?:true|false|null)(?![\p{L}\p{M}\p{N}_]))`;
const FOLLOWS_COLUMN = new RegExp(
  String.raw`\s*(?:\)|(?:<>|!=|[<>]=?|=)\s*${VALUE}|(?:not\s+)?(?:i?like\s*['(]|in\s*\(|between\s*${VALUE})|is\s+(?:not\s+)?null(?![\p{L}\p{M}\p{N}_]))`,
  'iuy',
);

/** A token the plugin read, with its place in the client's text. */
interface TokenNode extends jsep.Expression {
  type: 'SqlToken';
  token: Token;
}

/** Where the token hooks saw the nodes jsep builds itself begin and end: NOT, `( )`, IN lists. */
interface Located {
  start?: number;
  end?: number;
}

/** The filter being parsed: jsep runs its hooks synchronously, one parse at a time. */
let parsing: { source: SourceText; eager: boolean; starts: number[] } | undefined;

// Higher binds tighter: OR < AND < predicates < BETWEEN's AND. jsep binds NOT tightest of all.
jsep.removeAllBinaryOps();
jsep.removeAllUnaryOps();
jsep.removeAllLiterals();
jsep.addUnaryOp('not');
jsep.addBinaryOp('or', 1);
jsep.addBinaryOp('and', 2);
jsep.addBinaryOp('&', 7);
for (const operator of [...COMPARISONS, ...LIKES, 'in', 'not~in', 'is', 'is~not', 'between', 'not~between']) {
  jsep.addBinaryOp(operator, 6);
}
jsep.plugins.register({
  name: 'sql-tokens',
  init() {
    jsep.hooks.add('gobble-token', readSqlToken);
    jsep.hooks.add('after-token', function (this: jsep.HookScope, env: { node?: jsep.Expression }) {
      const start = parsing?.starts.pop();
      if (env.node && start !== undefined) {
        Object.assign(env.node, { start, end: this.index } satisfies Located);
      }
    });
  },
});

/** Reads SQL's literals and names at jsep's index; keywords and `(` are jsep's to read. */
function readSqlToken(this: jsep.HookScope, env: { node?: jsep.Expression }): void {
  if (parsing === undefined) {
    return;
  }
  const { source, eager, starts } = parsing;
  starts.push(this.index);
  if (this.index >= source.text.length) {
    return;
  }
  const token = readToken(source, this.index, FOLLOWS_COLUMN, eager);
  const word = token.kind === 'word' ? token.text.toLowerCase() : '';
  if (token.kind !== 'symbol' && !KEYWORDS.has(word)) {
    this.index = token.end;
    env.node = { type: 'SqlToken', token } satisfies TokenNode;
  } else if (starts.length > MAX_NESTING_DEPTH && (word === 'not' || source.text[token.start] === '(')) {
    // A NOT, `(` or IN list nests in every token being read around it.
    throw tooDeep(source, this.index);
  }
}

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
  const input = prepareForJsep(source, tokens);
  const walker = new Walker(source);
  let tree: jsep.Expression;
  parsing = { source, eager, starts: [] };
  try {
    tree = jsep(input.text);
  } catch (error) {
    throw walker.jsepError(error);
  } finally {
    parsing = undefined;
  }
  const syntax = walker.condition(tree);
  if (input.strayComma !== undefined) {
    throw source.error(input.strayComma, "expected AND, OR or the end of the condition, found ','");
  }
  return syntax;
}

/** Keywords as they are, symbols quoted: `AND`, `'='`. */
const quote = (shown: string): string => (/^[A-Z ]+$/.test(shown) ? shown : `'${shown}'`);
const JOIN_HINT = 'join conditions with AND or OR';

/** Walks jsep's tree into `FilterSyntax`, which has a place for nothing outside the grammar. */
class Walker {
  constructor(private readonly source: SourceText) {}

  condition(node: jsep.Expression): FilterSyntax {
    switch (node.type) {
      case 'BinaryExpression':
        return this.binary(node as jsep.BinaryExpression);
      case 'UnaryExpression':
        return { kind: 'not', operand: this.condition((node as jsep.UnaryExpression).argument) };
      case 'Compound':
      case 'SequenceExpression': {
        const parts = (node as jsep.Compound).body ?? (node as jsep.SequenceExpression).expressions;
        const first = parts[0] as jsep.Expression;
        this.condition(first); // its errors come first in the text
        const at = skipSpaces(this.source.text, this.end(first));
        throw this.source.error(at, `expected AND, OR or the end of the condition, found ${this.found(at)}`);
      }
      case 'SqlToken': {
        const { token } = node as TokenNode;
        const text = echo(this.text(token), '');
        throw isName(token)
          ? this.source.error(
              token.end,
              `expected an operator after column ${text}`,
              "for example = 1, IN (1, 2), LIKE 'a%' or IS NULL",
            )
          : this.source.error(
              token.start,
              `expected a condition, found the value ${text}`,
              'write column operator value, for example num_operators > 10',
            );
      }
      default:
        throw this.unexpected(node);
    }
  }

  private binary(node: jsep.BinaryExpression): FilterSyntax {
    const { operator } = node;
    if (operator === 'and' || operator === 'or') {
      return { kind: operator, operands: flatten(node, operator).map((operand) => this.condition(operand)) };
    }
    // jsep reads `NOT a = 1` as `(NOT a) = 1`, but SQL's NOT takes the whole predicate. A NOT
    // that the client put in parentheses with the column stays, and is refused as a column.
    let column = node.left;
    let nots = 0;
    for (; column.type === 'UnaryExpression' && this.source.text[this.start(column)] !== '('; nots++) {
      column = (column as jsep.UnaryExpression).argument;
    }
    let predicate = this.predicate(operator, column, node.right);
    for (; nots > 0; nots--) {
      predicate = { kind: 'not', operand: predicate };
    }
    return predicate;
  }

  private predicate(operator: string, left: jsep.Expression, right: jsep.Expression): FilterSyntax {
    const operatorText = showOperator(operator);
    const shared = { operatorText, column: this.column(left, operatorText) };
    const negated = operator.startsWith('not~') || operator === 'is~not';
    if (COMPARISONS.includes(operator)) {
      const comparison = (operator === '!=' ? '<>' : operator) as ComparisonOperator;
      return { kind: 'compare', operator: comparison, ...shared, value: this.literal(right, operatorText) };
    }
    if (LIKES.includes(operator)) {
      const caseInsensitive = operator.endsWith('ilike');
      return {
        kind: 'like',
        negated,
        caseInsensitive,
        ...shared,
        pattern: this.literal(right, operatorText),
      };
    }
    if (operator.endsWith('in') && right.type === 'ArrayExpression') {
      const values = (right as jsep.ArrayExpression).elements.map((v) =>
        this.literal(v ?? right, operatorText),
      );
      return { kind: 'in', negated, ...shared, values };
    }
    if (operator.startsWith('is')) {
      return { kind: 'is-null', negated, column: shared.column }; // the keyword pass lets IS through only before NULL
    }
    const bounds = right as jsep.BinaryExpression;
    if (operator.endsWith('between') && bounds.operator === '&') {
      const [low, high] = [this.literal(bounds.left, operatorText), this.literal(bounds.right, 'AND')];
      return { kind: 'between', negated, ...shared, low, high };
    }
    throw this.expectedAfter(operator, this.start(right));
  }

  private column(node: jsep.Expression, shown: string): NameRef {
    const { token } = node as TokenNode;
    if (node.type === 'BinaryExpression' || node.type === 'UnaryExpression') {
      const at = skipSpaces(this.source.text, this.end(node));
      throw this.source.error(at, `unexpected ${quote(shown)} after a complete condition`, JOIN_HINT);
    }
    if (node.type !== 'SqlToken') {
      throw this.unexpected(node, `expected a column name before ${quote(shown)}`);
    }
    if (!isName(token)) {
      const found = `found the value ${echo(this.text(token), '')}`;
      const hint = 'the column comes first: num_operators > 10';
      throw this.source.error(token.start, `expected a column name before ${quote(shown)}, ${found}`, hint);
    }
    return {
      name: token.kind === 'quoted-name' ? token.name : this.text(token),
      start: token.start,
      end: token.end,
    };
  }

  private literal(node: jsep.Expression, shown: string): LiteralSyntax {
    if (node.type !== 'SqlToken') {
      throw this.unexpected(node, `expected a value after ${quote(shown)}`);
    }
    const { token } = node as TokenNode;
    const { start, end } = token;
    const word = token.kind === 'word' ? token.text.toLowerCase() : undefined;
    if (token.kind === 'string' || token.kind === 'number' || token.kind === 'hex') {
      return token; // the same shape
    }
    if (word === 'true' || word === 'false' || word === 'null') {
      return word === 'null'
        ? { kind: 'null', start, end }
        : { kind: 'boolean', value: word === 'true', start, end };
    }
    const name = this.text(token);
    throw this.source.error(
      start,
      `expected a value after ${quote(shown)}, found the column ${echo(name, '')}`,
      `comparing two columns is not supported; to compare with text, quote it: '${name.replaceAll("'", "''")}'`,
    );
  }

  /** jsep's own errors, in the language's words; jsep's index is the client's. */
  jsepError(error: unknown): Error {
    const { index, description } = error as { index?: unknown; description?: unknown };
    if (typeof index !== 'number' || typeof description !== 'string') {
      return error instanceof Error ? error : new Error(String(error));
    }
    const after = /^Expected expression after (.+)$/.exec(description)?.[1];
    if (after !== undefined || description === 'missing unaryOp argument') {
      return this.expectedAfter(after ?? 'not', index);
    }
    return this.unexpectedAt(index);
  }

  /** What an operator wants on its right, missing at `at`. */
  private expectedAfter(operator: string, at: number): Error {
    const wanted = operator === 'and' || operator === 'or' || operator === 'not' ? 'a condition' : 'a value';
    return this.source.error(at, `expected ${wanted} after ${quote(showOperator(operator))}`);
  }

  /** The error for a node that no position of the grammar accepts. */
  private unexpected(node: jsep.Expression, expected?: string): Error {
    return this.unexpectedAt(this.start(node), expected);
  }

  private unexpectedAt(at: number, expected?: string): Error {
    const found = this.found(at);
    if (expected !== undefined) {
      return this.source.error(at, `${expected}, found ${found}`);
    }
    return this.source.error(
      at,
      found === 'the end' ? 'unexpected end of the filter' : `unexpected ${found}`,
    );
  }

  /** What stands at `at`, for a message: a keyword as a word, anything else quoted. */
  private found(at: number): string {
    if (at >= this.source.text.length) {
      return 'the end';
    }
    const token = readToken(this.source, at, FOLLOWS_COLUMN);
    const word = token.kind === 'word' ? token.text.toLowerCase() : '';
    return KEYWORDS.has(word) ? word.toUpperCase() : describeToken(this.source, token);
  }

  /** Where a node starts: its own place, or for an operation jsep built, its left operand's. */
  private start(node: jsep.Expression): number {
    const { token } = node as TokenNode;
    return token?.start ?? (node as Located).start ?? this.start((node as jsep.BinaryExpression).left);
  }

  private end(node: jsep.Expression): number {
    const { token } = node as TokenNode;
    return token?.end ?? (node as Located).end ?? this.end((node as jsep.BinaryExpression).right);
  }

  private text(token: Token): string {
    return this.source.text.slice(token.start, token.end);
  }
}

/** `a AND b AND c` arrives nested; one flat list keeps later stages shallow. */
function flatten(node: jsep.Expression, operator: string): jsep.Expression[] {
  const operands: jsep.Expression[] = [];
  const pending: jsep.Expression[] = [node];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const binary = next as jsep.BinaryExpression;
    if (next.type === 'BinaryExpression' && binary.operator === operator) {
      pending.push(binary.right, binary.left);
    } else {
      operands.push(next);
    }
  }
  return operands;
}

/** A column name, as opposed to a literal; TRUE, FALSE and NULL are words but not names. */
function isName(token: Token): boolean {
  return (
    token.kind === 'quoted-name' || (token.kind === 'word' && !/^(?:true|false|null)$/i.test(token.text))
  );
}
