// client-nodes.mjs: the JS client's sampler tree (pldp-client.mjs): a node of each kind parsed,
// its claims checked and its report drawn by its kind's description, looked up by name in the
// table of kinds (client-kinds.mjs; one module per kind, as pldp.channel has).

import { isObject, repr } from "./client-checks.mjs";
import { GRID_BITS } from "./client-grid.mjs";
import * as TABLE from "./client-kinds.mjs";
import { SpecError } from "./client-wire.mjs";

/*
 * A kind's description, the `KIND` its module exports (client-kinds.mjs registers it by name):
 *
 *   parse(obj, path, parseNode)       the node's members, checked (a SpecError naming `path`);
 *                                     `parseNode` parses the nodes it holds
 *   verify(node, part, verifyNode)    [rows, epsilon]: its claims, and the whole report's LDP budget
 *   words(node, input, wordCount)     the words it draws for `input` when no rejection happens
 *   draw(words, node, input, draw)    a leaf: its columns' values, in the order of `columns`;
 *                                     else its payload (`draw` draws the nodes it holds)
 *   leaf, columns                     a leaf (true) and its payload's column names: the payload is
 *                                     the one column's value, or an object keyed by column name
 *   takes                             the input an answer makes: "item" (an item of d), "item-set",
 *                                     "item and level", "parts", "text" (client-answers.mjs)
 *   attribute                         true if it may be a part of an attributes node
 *   memoized                          true for the memo kind (a permanent response kept on the device)
 *
 * A parsed node is its members with its kind's description as prototype: `node.leaf`,
 * `node.takes`, ... are its kind's.
 */

/** The kinds by name (a plain object: a module namespace's members are slower to read). */
const KINDS = { ...TABLE };
/** The kinds' names, as a refusal lists them (all of them: not cut as `repr` cuts a value). */
const NAMES = Object.keys(KINDS).sort();

/** The description of a parsed node's kind. */
function kindOf(node) {
  if (!Object.hasOwn(KINDS, node.kind)) throw new SpecError(`not a sampler node: ${node.kind}`);
  return KINDS[node.kind];
}

/** The node at `path` of a spec's sampler, checked, with its sampling tables. */
export function parseNode(obj, path = "sampler.root") {
  if (!isObject(obj) || !Object.hasOwn(KINDS, obj.kind)) {
    const kind = isObject(obj) ? obj.kind : undefined;
    throw new SpecError(`${path} must be a node with kind one of ${JSON.stringify(NAMES)}, got ${kind === undefined ? "none" : repr(kind)}`);
  }
  const kind = KINDS[obj.kind];
  return Object.assign(Object.create(kind), kind.parse(obj, path, parseNode));
}

/** The root node of a spec's `sampler` member ({grid_bits: 32, root}). */
export function parseSampler(sampler) {
  if (!isObject(sampler) || Object.keys(sampler).sort().join() !== "grid_bits,root") {
    throw new SpecError("sampler must be an object with exactly 'grid_bits' and 'root'");
  }
  if (sampler.grid_bits !== GRID_BITS) throw new SpecError(`sampler.grid_bits must be ${GRID_BITS}, got ${repr(sampler.grid_bits)}`);
  return parseNode(sampler.root);
}

/** A node's claims as rows, and the whole report's LDP budget they imply: [rows, epsilon]. */
export const verifyNode = (node, part) => kindOf(node).verify(node, part, verifyNode);

/** Words a node draws when no rejection happens. */
export const wordCount = (node, input) => kindOf(node).words(node, input, wordCount);

/** A leaf's payload of its columns' `values`: the one column's value, else an object keyed by column name. */
export function leafPayload(columns, values) {
  if (columns.length === 1) return values[0];
  const payload = {};
  columns.forEach((name, i) => (payload[name] = values[i]));
  return payload;
}

/** A node's report of `input` (as the client's answers check made it), drawn from `words`. */
export function draw(words, node, input) {
  const kind = kindOf(node);
  if (kind.leaf) return leafPayload(kind.columns, kind.draw(words, node, input));
  return kind.draw(words, node, input, draw);
}
