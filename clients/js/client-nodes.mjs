// client-nodes.mjs: the JS client's sampler tree (pldp-client.mjs): each node kind's parser,
// claims and sampler, dispatched by kind (the kinds of pldp.channel, one module each).

import { parseAttributes, verifyAttributes, drawAttributes } from "./client-attributes.mjs";
import { isObject, repr } from "./client-checks.mjs";
import { directRows, drawDirect, parseDirect } from "./client-direct.mjs";
import { GRID_BITS } from "./client-grid.mjs";
import { drawLeveled, parseLeveled, verifyLeveled } from "./client-leveled.mjs";
import { parseMemo, verifyMemo } from "./client-memo.mjs";
import { drawPadding, parsePadding, verifyPadding } from "./client-padding.mjs";
import { drawUnary, parseUnary, unaryRows } from "./client-unary.mjs";
import { SpecError } from "./client-wire.mjs";

const KINDS = ["attributes", "direct", "leveled", "memo", "padding", "unary"];

const PARSERS = {
  memo: parseMemo,
  direct: parseDirect,
  unary: parseUnary,
  padding: parsePadding,
  leveled: parseLeveled,
  attributes: parseAttributes,
};

/** The node at `path` of a spec's sampler, checked, with its sampling tables. */
export function parseNode(obj, path = "sampler.root") {
  if (!isObject(obj) || !Object.hasOwn(PARSERS, obj.kind)) {
    const kind = isObject(obj) ? obj.kind : undefined;
    throw new SpecError(`${path} must be a node with kind one of ${repr(KINDS)}, got ${kind === undefined ? "none" : repr(kind)}`);
  }
  return PARSERS[obj.kind](obj, path, parseNode);
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
export function verifyNode(node, part) {
  switch (node.kind) {
    case "memo":
      return verifyMemo(node, part, verifyNode);
    case "direct":
      return [directRows(node, part), Math.max(...node.epsilons)];
    case "unary":
      return [unaryRows(node, part), Math.max(...node.epsilons)];
    case "padding":
      return verifyPadding(node, part, verifyNode);
    case "leveled":
      return verifyLeveled(node, part, verifyNode);
    case "attributes":
      return verifyAttributes(node, verifyNode);
    default:
      throw new SpecError(`not a sampler node: ${node.kind}`);
  }
}

/** Words a node draws when no rejection happens. */
export function wordCount(node, input) {
  switch (node.kind) {
    case "direct":
      return 1;
    case "unary":
      return node.d;
    case "padding":
      return 2 + node.inner.d;
    case "leveled": {
      const item = node.items[input.t];
      return (item.kind === "direct" ? 1 : item.d) + (node.levelSampler !== null ? 1 : 0);
    }
    default: {
      let n = 0;
      node.parts.forEach((p, i) => (n += wordCount(p, input[i])));
      return n;
    }
  }
}

/** A node's report of `input` (as the client's answers check made it), drawn from `words`. */
export function draw(words, node, input) {
  switch (node.kind) {
    case "direct":
      return drawDirect(words, node, input);
    case "unary":
      return drawUnary(words, node, input);
    case "padding":
      return drawPadding(words, node, input);
    case "memo":
      throw new TypeError("a memo node is drawn by drawMemo");
    case "leveled":
      return drawLeveled(words, node, input, draw);
    default:
      return drawAttributes(words, node, input, draw);
  }
}
