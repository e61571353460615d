import {
  Composer,
  type Alias,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  Lexer,
  Parser,
  type Document,
  type Node,
  type Pair,
} from 'yaml';
import type { Problems } from './problems.js';

/**
 * Reads a tenant's YAML in time and memory bounded by its size, whatever its shape. The `yaml`
 * library alone is not enough: its `maxAliasCount` counts aliases, not what they expand to (a
 * 2,000-item list referenced 199 times passes it and materialises 400,000 nodes), its parser and
 * composer go superlinear or overflow the stack on deep nesting (125,000 `[` take seconds; closed
 * ones exhaust the heap), and it resolves each alias by scanning every earlier anchor (quadratic).
 *
 * So: (1) the lexer feeds the parser one token at a time and the parser's nesting stack is checked
 * after each token, so a deep document is refused after a few hundred tokens; (2) the parsed tree
 * is walked once in document order, resolving aliases through a map and adding up what each one
 * expands to (memoised per anchored node), refusing as soon as the expanded document would pass the
 * node, byte or depth budget; (3) only then is it turned into plain data, by our own small
 * converter, whose work is bounded by the budget just checked.
 */
export const YAML_BOUNDS = {
  /** Collections inside collections, counted after aliases and merge keys are expanded. */
  maxDepth: 64,
  /** Scalars, collections and keys of the expanded document. */
  maxNodes: 100_000,
  /** Characters of the expanded document's scalars and keys, before and again after interpolation. */
  maxBytes: 4 * 1024 * 1024,
  /**
   * Lexical tokens (scalars, indicators, spaces, line breaks): parse time is linear in them, and a
   * dense 256 KiB document has ten times more than an honest one (a 250 KB compose of 20 services
   * has about 22,000).
   */
  maxTokens: 150_000,
} as const;

/** The parser keeps about two stack entries per nesting level (the collection and its pending value). */
const PARSER_STACK_MAX = 2 * YAML_BOUNDS.maxDepth + 2;

interface Cost {
  nodes: number;
  bytes: number;
  depth: number;
}

/** Thrown by the walk to stop at the first bound passed; becomes one problem at (root). */
class Refused extends Error {}

export function loadBoundedYaml(text: string, problems: Problems): unknown {
  const document = composeBounded(text, problems);
  if (!document) return undefined;
  try {
    const targets = measure(document);
    return toPlain(document.contents, targets);
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    problems.add('(root)', error.message);
    return undefined;
  }
}

function composeBounded(text: string, problems: Problems): Document.Parsed | undefined {
  const parser = new Parser();
  // uniqueKeys is checked in measure(): the library compares each key with every earlier one of
  // its map (20,000 keys took 6 s).
  const composer = new Composer({ merge: true, uniqueKeys: false, prettyErrors: false, schema: 'core' });
  const documents: Document.Parsed[] = [];
  let tokens = 0;
  for (const lexeme of new Lexer().lex(text)) {
    if (++tokens > YAML_BOUNDS.maxTokens) {
      problems.add(
        '(root)',
        `the document has more than ${YAML_BOUNDS.maxTokens.toLocaleString('en')} YAML tokens`,
      );
      return undefined;
    }
    for (const token of parser.next(lexeme)) documents.push(...composer.next(token));
    if (parser.stack.length > PARSER_STACK_MAX) {
      problems.add('(root)', `the document is nested deeper than ${YAML_BOUNDS.maxDepth} levels`);
      return undefined;
    }
  }
  for (const token of parser.end()) documents.push(...composer.next(token));
  documents.push(...composer.end());
  if (documents.length !== 1) {
    problems.add('(root)', 'the compose definition must be exactly one YAML document');
    return undefined;
  }
  const document = documents[0]!;
  for (const error of [...document.errors, ...document.warnings])
    problems.add('(root)', error.message.split('\n')[0]!);
  return problems.isEmpty ? document : undefined;
}

/**
 * Expanded size of the whole document without building it. Document order matters: an alias
 * refers to the last anchor of its name before it, which is exactly what the map holds when the
 * walk reaches the alias.
 */
function measure(document: Document.Parsed): Map<Alias, Node> {
  const anchors = new Map<string, Node>();
  const targets = new Map<Alias, Node>();
  const costs = new WeakMap<Node, Cost>();
  const open = new Set<Node>();
  const total: Cost = { nodes: 0, bytes: 0, depth: 0 };

  const add = (into: Cost, part: Cost): void => {
    into.nodes += part.nodes;
    into.bytes += part.bytes;
    into.depth = Math.max(into.depth, part.depth);
    if (into.nodes > YAML_BOUNDS.maxNodes)
      throw new Refused(
        `the document expands to more than ${YAML_BOUNDS.maxNodes.toLocaleString('en')} nodes (aliases and merge keys count by what they expand to)`,
      );
    if (into.bytes > YAML_BOUNDS.maxBytes)
      throw new Refused(
        `the document expands to more than ${YAML_BOUNDS.maxBytes / 1024 / 1024} MiB (aliases and merge keys count by what they expand to)`,
      );
  };

  const visit = (node: unknown): Cost => {
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (!target) throw new Refused(`alias *${node.source} has no anchor before it`);
      if (open.has(target)) throw new Refused(`alias *${node.source} refers to a node that contains it`);
      targets.set(node, target);
      const cost = costs.get(target)!;
      return { nodes: cost.nodes + 1, bytes: cost.bytes, depth: cost.depth };
    }
    if (isPair(node)) {
      const cost: Cost = { nodes: 0, bytes: 0, depth: 0 };
      add(cost, visit(node.key));
      add(cost, visit(node.value));
      return cost;
    }
    if (node === null || node === undefined) return { nodes: 1, bytes: 0, depth: 0 };
    const anchored = node as Node;
    if (anchored.anchor) anchors.set(anchored.anchor, anchored);
    let cost: Cost;
    if (isScalar(node)) {
      cost = { nodes: 1, bytes: node.source?.length ?? String(node.value).length, depth: 0 };
    } else if (isMap(node) || isSeq(node)) {
      open.add(node);
      cost = { nodes: 1, bytes: 0, depth: 0 };
      for (const item of node.items as unknown[]) add(cost, visit(item));
      if (isMap(node)) checkUniqueKeys(node.items, targets);
      cost.depth += 1;
      open.delete(node);
      if (cost.depth > YAML_BOUNDS.maxDepth)
        throw new Refused(
          `the document is nested deeper than ${YAML_BOUNDS.maxDepth} levels (aliases count by what they expand to)`,
        );
    } else {
      cost = { nodes: 1, bytes: 0, depth: 0 };
    }
    costs.set(anchored, cost);
    return cost;
  };

  add(total, visit(document.contents));
  return targets;
}

/**
 * Plain data from the measured tree. Same results as the library's toJS for what compose uses
 * (core schema, merge keys: keys written in the map win over merged ones, earlier merge sources
 * over later ones), but each alias is resolved through a map instead of a scan, and each use
 * gets its own copy (bounded by the budget above), so nothing downstream sees shared objects.
 */
/** Each key once per map (a later key could hide an earlier one from a reviewer). */
function checkUniqueKeys(pairs: Pair[], targets: Map<Alias, Node>): void {
  const seen = new Set<string>();
  for (const pair of pairs) {
    const key = isAlias(pair.key) ? targets.get(pair.key) : pair.key;
    if (key === null || key === undefined) continue;
    if (!isScalar(key)) throw new Refused('map keys must be scalars (strings, numbers)');
    if (typeof key.value === 'symbol') continue; // merge keys (<<) may repeat
    const identity = `${typeof key.value}:${String(key.value)}`;
    if (seen.has(identity))
      throw new Refused(`map keys must be unique: ${String(key.value).slice(0, 60)} appears twice`);
    seen.add(identity);
  }
}

function toPlain(node: unknown, targets: Map<Alias, Node>): unknown {
  if (isAlias(node)) return toPlain(targets.get(node), targets);
  if (node === null || node === undefined) return null;
  if (isScalar(node)) return node.value;
  if (isSeq(node)) return node.items.map((item) => toPlain(item, targets));
  if (isMap(node)) {
    const out: Record<string, unknown> = {};
    for (const pair of node.items) {
      if (isScalar(pair.key) && typeof pair.key.value === 'symbol') {
        const value = toPlain(pair.value, targets);
        const target = isAlias(pair.value) ? targets.get(pair.value) : pair.value;
        for (const source of isSeq(target) ? (value as unknown[]) : [value]) merge(out, source);
        continue;
      }
      const key = toPlain(pair.key, targets);
      // Keys are scalars (checkUniqueKeys refused the rest); numbers and booleans become their text.
      const name =
        typeof key === 'string' ? key : key === null || key === undefined ? '' : (JSON.stringify(key) ?? '');
      setOwn(out, name, toPlain(pair.value, targets));
    }
    return out;
  }
  return undefined;
}

function merge(into: Record<string, unknown>, source: unknown): void {
  if (typeof source !== 'object' || source === null || Array.isArray(source))
    throw new Refused('merge sources (<<) must be maps or aliases of maps');
  for (const key of Object.keys(source))
    if (!Object.hasOwn(into, key)) setOwn(into, key, (source as Record<string, unknown>)[key]);
}

/** defineProperty, not assignment: a `__proto__` key must stay an ordinary own key. */
function setOwn(into: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
}
