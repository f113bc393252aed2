/**
 * The only module that knows jsep. jsep's configuration is global, so it is set here once:
 * its JavaScript operators and literals removed, ours added. jsep's loose tree is then walked
 * into the closed `FilterSyntax`; every node type or shape outside the grammar is an error
 * that says what was expected and where.
 */
import jsep from 'jsep';
import type { ComparisonOperator, FilterSyntax, LiteralSyntax, NameRef } from './ast.js';
import { echo, type SourceText } from './errors.js';
import { describeItem, type EmittedItem, type JsepInput, prepareForJsep } from './filter-prepass.js';
import { checkText, type Token, tokenize } from './lexer.js';

/**
 * Higher binds tighter: OR < AND < predicates, and BETWEEN's AND binds its two bounds. NOT,
 * which SQL places between AND and the predicates, is grouped by the pre-pass instead.
 */
const OR = 1;
const AND = 2;
const PREDICATE = 6;
const BETWEEN_BOUNDS = 7;

const COMPARISONS: ReadonlyMap<string, ComparisonOperator> = new Map([
  ['=', '='],
  ['!=', '<>'],
  ['<>', '<>'],
  ['<', '<'],
  ['<=', '<='],
  ['>', '>'],
  ['>=', '>='],
]);

const PREDICATES = [
  ...COMPARISONS.keys(),
  'in',
  'not_in',
  'like',
  'not_like',
  'ilike',
  'not_ilike',
  'is',
  'is_not',
  'between',
  'not_between',
];

jsep.removeAllBinaryOps();
jsep.removeAllUnaryOps();
jsep.removeAllLiterals();
jsep.addUnaryOp('not');
jsep.addBinaryOp('or', OR);
jsep.addBinaryOp('and', AND);
for (const operator of PREDICATES) {
  jsep.addBinaryOp(operator, PREDICATE);
}
jsep.addBinaryOp('between_and', BETWEEN_BOUNDS);

/**
 * jsep's nodes carry no positions. Its token hooks see where each token-level node (a name,
 * a parenthesised group, NOT, a call, a list) starts and ends; binary nodes are located from
 * their operands. Parsing is synchronous, so one stack serves every parse.
 */
const tokenStarts: number[] = [];
const spans = new WeakMap<object, { start: number; end: number }>();
jsep.hooks.add('gobble-token', function (this: jsep.HookScope) {
  tokenStarts.push(this.index);
});
jsep.hooks.add('after-token', function (this: jsep.HookScope, env: { node?: jsep.Expression }) {
  const start = tokenStarts.pop();
  if (env.node && start !== undefined) {
    spans.set(env.node, { start, end: this.index });
  }
});

const OPERATOR_DISPLAY: ReadonlyMap<string, string> = new Map([
  ['and', 'AND'],
  ['or', 'OR'],
  ['between_and', 'AND'],
  ['in', 'IN'],
  ['not_in', 'NOT IN'],
  ['like', 'LIKE'],
  ['not_like', 'NOT LIKE'],
  ['ilike', 'ILIKE'],
  ['not_ilike', 'NOT ILIKE'],
  ['is', 'IS'],
  ['is_not', 'IS NOT'],
  ['between', 'BETWEEN'],
  ['not_between', 'NOT BETWEEN'],
]);

/** Parses `filters` into its syntax tree. Throws QueryLanguageError for anything outside the grammar. */
export function parseFilterSyntax(source: SourceText): FilterSyntax {
  checkText(source);
  const tokens = tokenize(source);
  if (tokens.length === 0) {
    throw source.error(
      0,
      'expected a condition',
      "for example num_operators > 10 AND avs_name ILIKE 'eigen%'",
    );
  }
  const input = prepareForJsep(source, tokens);
  let tree: jsep.Expression;
  tokenStarts.length = 0;
  try {
    tree = jsep(input.expression);
  } catch (error) {
    throw translateJsepError(source, input, error);
  }
  return new Walker(source, tokens, input).condition(tree);
}

function translateJsepError(source: SourceText, input: JsepInput, error: unknown): Error {
  const { index, description } = error as { index?: unknown; description?: unknown };
  if (typeof index !== 'number' || typeof description !== 'string') {
    return error instanceof Error ? error : new Error(String(error));
  }
  const item = itemAt(input.items, index);
  const origin = item?.origin ?? source.text.length;
  const after = /^Expected expression after (.+)$/.exec(description)?.[1];
  if (after !== undefined) {
    const display = OPERATOR_DISPLAY.get(after) ?? after;
    const wanted = after === 'and' || after === 'or' ? 'a condition' : 'a value';
    return source.error(origin, `expected ${wanted} after ${quoteOperator(display)}`);
  }
  if (description === 'missing unaryOp argument') {
    return source.error(origin, 'expected a condition after NOT');
  }
  if (description === 'Expected comma') {
    return source.error(origin, "expected ',' or ')'");
  }
  return source.error(
    origin,
    item === undefined ? 'unexpected end of the filter' : `unexpected ${describeItem(item)}`,
  );
}

/** The first item at or after `index` in jsep's input. */
function itemAt(items: readonly EmittedItem[], index: number): EmittedItem | undefined {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((items[middle] as EmittedItem).start < index) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return items[low];
}

function quoteOperator(display: string): string {
  return /^[A-Z ]+$/.test(display) ? display : `'${display}'`;
}

const LIKE_OPERATORS: ReadonlyMap<string, { negated: boolean; caseInsensitive: boolean }> = new Map([
  ['like', { negated: false, caseInsensitive: false }],
  ['not_like', { negated: true, caseInsensitive: false }],
  ['ilike', { negated: false, caseInsensitive: true }],
  ['not_ilike', { negated: true, caseInsensitive: true }],
]);

/** Walks jsep's tree into `FilterSyntax`, which has a place for nothing outside the grammar. */
class Walker {
  constructor(
    private readonly source: SourceText,
    private readonly tokens: readonly Token[],
    private readonly input: JsepInput,
  ) {}

  condition(node: jsep.Expression): FilterSyntax {
    switch (node.type) {
      case 'BinaryExpression':
        return this.binary(node as jsep.BinaryExpression);
      case 'UnaryExpression':
        return { kind: 'not', operand: this.condition((node as jsep.UnaryExpression).argument) };
      case 'Identifier': {
        const token = this.placeholder(node);
        if (token === undefined) {
          throw this.unexpected(node);
        }
        if (isNameToken(token)) {
          throw this.source.error(
            token.end,
            `expected an operator after column ${echo(this.text(token), '')}`,
            "for example = 1, IN (1, 2), LIKE 'a%' or IS NULL",
          );
        }
        throw this.source.error(
          token.start,
          `expected a condition, found the value ${echo(this.text(token), '')}`,
          'write column operator value, for example num_operators > 10',
        );
      }
      case 'Compound':
      case 'SequenceExpression': {
        const parts = ((node as jsep.Compound).body ??
          (node as jsep.SequenceExpression).expressions) as jsep.Expression[];
        const first = parts[0];
        if (first === undefined) {
          throw this.source.error(0, 'expected a condition');
        }
        // Report errors in the order they appear in the text.
        this.condition(first);
        const item = this.itemAfter(first);
        throw this.source.error(
          item?.origin ?? this.source.text.length,
          `expected AND, OR or the end of the condition, found ${describeItem(item)}`,
        );
      }
      default:
        throw this.unsupported(node);
    }
  }

  private binary(node: jsep.BinaryExpression): FilterSyntax {
    const { operator } = node;
    if (operator === 'and' || operator === 'or') {
      return {
        kind: operator,
        operands: this.flatten(node, operator).map((operand) => this.condition(operand)),
      };
    }
    const operatorItem = this.itemAfter(node.left);
    const operatorText = operatorItem?.display ?? operator;
    const operatorStart = operatorItem?.origin ?? 0;
    const column = this.column(node.left, operatorText, operatorStart);
    const comparison = COMPARISONS.get(operator);
    if (comparison !== undefined) {
      return {
        kind: 'compare',
        operator: comparison,
        operatorText,
        column,
        value: this.literal(node.right, operatorText),
      };
    }
    const like = LIKE_OPERATORS.get(operator);
    if (like !== undefined) {
      return { kind: 'like', ...like, operatorText, column, pattern: this.literal(node.right, operatorText) };
    }
    switch (operator) {
      case 'in':
      case 'not_in': {
        if (node.right.type !== 'ArrayExpression') {
          throw this.unsupported(node.right);
        }
        const list = node.right as jsep.ArrayExpression;
        const values = list.elements.map((element) => {
          if (element === null) {
            throw this.source.error(this.startOf(list), 'expected a value in the IN list');
          }
          return this.literal(element, operatorText);
        });
        return { kind: 'in', negated: operator === 'not_in', operatorText, column, values };
      }
      case 'is':
      case 'is_not':
        // The pre-pass lets IS through only when NULL follows it.
        return { kind: 'is-null', negated: operator === 'is_not', column };
      case 'between':
      case 'not_between': {
        const bounds = node.right;
        if (
          bounds.type !== 'BinaryExpression' ||
          (bounds as jsep.BinaryExpression).operator !== 'between_and'
        ) {
          throw this.source.error(this.startOf(bounds), `expected a value after ${operatorText}`);
        }
        const { left, right } = bounds as jsep.BinaryExpression;
        return {
          kind: 'between',
          negated: operator === 'not_between',
          operatorText,
          column,
          low: this.literal(left, operatorText),
          high: this.literal(right, 'AND'),
        };
      }
      default:
        throw this.source.error(operatorStart, `unexpected ${echo(operatorText)}`);
    }
  }

  /** `a AND b AND c` arrives nested; one flat list keeps later stages shallow. */
  private flatten(node: jsep.Expression, operator: string): jsep.Expression[] {
    const operands: jsep.Expression[] = [];
    const pending: jsep.Expression[] = [node];
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      if (next.type === 'BinaryExpression' && (next as jsep.BinaryExpression).operator === operator) {
        const binary = next as jsep.BinaryExpression;
        pending.push(binary.right, binary.left);
      } else {
        operands.push(next);
      }
    }
    return operands;
  }

  private column(node: jsep.Expression, operatorText: string, operatorStart: number): NameRef {
    const token = this.placeholder(node);
    if (token !== undefined && isNameToken(token)) {
      const name = token.kind === 'quoted-name' ? token.name : this.text(token);
      return { name, start: token.start, end: token.end };
    }
    if (token !== undefined) {
      throw this.source.error(
        token.start,
        `expected a column name before ${quoteOperator(operatorText)}, found the value ${echo(this.text(token), '')}`,
        'the column comes first: num_operators > 10',
      );
    }
    if (node.type === 'BinaryExpression' || node.type === 'UnaryExpression') {
      throw this.source.error(
        operatorStart,
        `unexpected ${quoteOperator(operatorText)} after a complete condition`,
        'join conditions with AND or OR',
      );
    }
    throw this.unsupported(node, `expected a column name before ${quoteOperator(operatorText)}`);
  }

  private literal(node: jsep.Expression, operatorText: string): LiteralSyntax {
    const token = this.placeholder(node);
    if (token === undefined) {
      throw this.unsupported(node, `expected a value after ${quoteOperator(operatorText)}`);
    }
    switch (token.kind) {
      case 'string':
        return { kind: 'string', value: token.value, start: token.start, end: token.end };
      case 'number':
        return { kind: 'number', text: token.text, start: token.start, end: token.end };
      case 'hex':
        return { kind: 'hex', digits: token.digits, start: token.start, end: token.end };
      case 'word': {
        const word = token.text.toLowerCase();
        if (word === 'true' || word === 'false') {
          return { kind: 'boolean', value: word === 'true', start: token.start, end: token.end };
        }
        if (word === 'null') {
          return { kind: 'null', start: token.start, end: token.end };
        }
        break;
      }
      default:
        break;
    }
    const name = this.text(token);
    throw this.source.error(
      token.start,
      `expected a value after ${quoteOperator(operatorText)}, found the column ${echo(name, '')}`,
      `comparing two columns is not supported; to compare with text, quote it: '${name.replaceAll("'", "''")}'`,
    );
  }

  /** The error for a node that no position of the grammar accepts. */
  private unsupported(node: jsep.Expression, expected?: string): Error {
    if (node.type === 'CallExpression') {
      const call = node as jsep.CallExpression;
      const callee = this.placeholder(call.callee);
      if (callee !== undefined && isNameToken(callee)) {
        return this.source.error(
          callee.start,
          `function calls are not supported: ${echo(this.text(callee), '')}(…)`,
          'compare a column with a value: col = 1',
        );
      }
      const paren = this.nextItem(call.callee, '(');
      return this.source.error(paren?.origin ?? 0, "unexpected '('", 'join conditions with AND or OR');
    }
    if (node.type === 'MemberExpression') {
      let object = (node as jsep.MemberExpression).object;
      while (object.type === 'MemberExpression') {
        object = (object as jsep.MemberExpression).object;
      }
      const dot = this.nextItem(object, '.');
      return this.source.error(
        dot?.origin ?? 0,
        "unexpected '.': member access is not supported",
        'double-quote a column name that contains a dot: "a.b"',
      );
    }
    if (expected !== undefined) {
      const item = itemAt(this.input.items, this.spanStart(node));
      return this.source.error(
        item?.origin ?? this.source.text.length,
        `${expected}, found ${describeItem(item)}`,
      );
    }
    return this.unexpected(node);
  }

  private unexpected(node: jsep.Expression): Error {
    const item = itemAt(this.input.items, this.spanStart(node));
    return this.source.error(
      item?.origin ?? 0,
      item === undefined ? 'unexpected end of the filter' : `unexpected ${describeItem(item)}`,
    );
  }

  /** The client's token behind a `$n` placeholder, if the node is one. */
  private placeholder(node: jsep.Expression): Token | undefined {
    if (node.type !== 'Identifier') {
      return undefined;
    }
    const name = (node as jsep.Identifier).name;
    return /^\$\d+$/.test(name) ? this.tokens[Number(name.slice(1))] : undefined;
  }

  private text(token: Token): string {
    return this.source.text.slice(token.start, token.end);
  }

  /**
   * Where a node starts and ends in jsep's input. Token-level nodes carry a span from the
   * hooks; nodes jsep builds around them (binary operations, and the callee of a call or the
   * object of a member access, which the span of the whole call covers) are located through
   * their parts.
   */
  private spanStart(node: jsep.Expression): number {
    const span = spans.get(node);
    if (span !== undefined) {
      return span.start;
    }
    const first = firstPart(node);
    if (first !== undefined) {
      return this.spanStart(first);
    }
    return this.placeholderItem(node)?.start ?? 0;
  }

  private spanEnd(node: jsep.Expression): number {
    const span = spans.get(node);
    if (span !== undefined) {
      return span.end;
    }
    const last = lastPart(node);
    if (last !== undefined) {
      return this.spanEnd(last);
    }
    return this.placeholderItem(node)?.end ?? this.input.expression.length;
  }

  private placeholderItem(node: jsep.Expression): EmittedItem | undefined {
    if (node.type !== 'Identifier') {
      return undefined;
    }
    const name = (node as jsep.Identifier).name;
    return this.input.items.find((item) => this.input.expression.slice(item.start, item.end) === name);
  }

  /** The first item spelled `text` at or after a node's end: the `(` of a call, the `.` of a member. */
  private nextItem(node: jsep.Expression, text: string): EmittedItem | undefined {
    const { items, expression } = this.input;
    const from = this.spanEnd(node);
    return items.find((item) => item.start >= from && expression.slice(item.start, item.end) === text);
  }

  /** Where a node starts in the client's text. */
  private startOf(node: jsep.Expression): number {
    return itemAt(this.input.items, this.spanStart(node))?.origin ?? this.source.text.length;
  }

  /** The item right after a node: the operator after a left operand, the `(` of a call. */
  private itemAfter(node: jsep.Expression): EmittedItem | undefined {
    return itemAt(this.input.items, this.spanEnd(node));
  }
}

function firstPart(node: jsep.Expression): jsep.Expression | undefined {
  switch (node.type) {
    case 'BinaryExpression':
      return (node as jsep.BinaryExpression).left;
    case 'CallExpression':
      return (node as jsep.CallExpression).callee;
    case 'MemberExpression':
      return (node as jsep.MemberExpression).object;
    case 'Compound':
      return (node as jsep.Compound).body[0];
    case 'SequenceExpression':
      return (node as jsep.SequenceExpression).expressions[0];
    default:
      return undefined;
  }
}

function lastPart(node: jsep.Expression): jsep.Expression | undefined {
  switch (node.type) {
    case 'BinaryExpression':
      return (node as jsep.BinaryExpression).right;
    case 'UnaryExpression':
      return (node as jsep.UnaryExpression).argument;
    case 'MemberExpression':
      return (node as jsep.MemberExpression).property;
    case 'ArrayExpression':
      return (node as jsep.ArrayExpression).elements.at(-1) ?? undefined;
    case 'CallExpression':
      return (node as jsep.CallExpression).arguments.at(-1) ?? (node as jsep.CallExpression).callee;
    default:
      return undefined;
  }
}

/** A column name, as opposed to a literal; TRUE, FALSE and NULL are words but not names. */
function isNameToken(token: Token): boolean {
  return (
    token.kind === 'quoted-name' || (token.kind === 'word' && !LITERAL_WORDS.has(token.text.toLowerCase()))
  );
}

const LITERAL_WORDS: ReadonlySet<string> = new Set(['true', 'false', 'null']);
