// client-padding.mjs: the padding-and-sampling node of the JS client (pldp-client.mjs;
// pldp.channel.padding): an item-set padded to ell items, one sampled uniformly and reported by
// the inner unary node over d + ell items (docs/wire-format.md §2, §3.3).

import { checkInt, checkKeys } from "./client-checks.mjs";
import { drawUnary } from "./client-unary.mjs";
import { SpecError } from "./client-wire.mjs";

/** The padding node at `path`; `parseNode` parses its inner node. */
export function parsePadding(obj, path, parseNode) {
  checkKeys(obj, path, ["kind", "d", "ell", "inner"]);
  const d = checkInt(obj.d, `${path}.d`, 1, 2 ** 24);
  const ell = checkInt(obj.ell, `${path}.ell`, 1, 2 ** 24);
  const inner = parseNode(obj.inner, `${path}.inner`);
  if (inner.kind !== "unary" || inner.d !== d + ell) {
    throw new SpecError(`${path}.inner must be a unary node over d + ell = ${d + ell} items`);
  }
  // its item-set claim (Gu et al., Theorem 4) needs every bit's b > 0
  if (inner.notion === "ULDP") throw new SpecError(`${path}.inner must protect every item: a ULDP node may reveal one`);
  return { kind: "padding", d, ell, inner };
}

/** Its claims are the inner node's, for the sampled item. */
export const verifyPadding = (node, part, verifyNode) => verifyNode(node.inner, `${part}: sampled item`);

/** The report of a sorted item-set (`input`, item indices) drawn from `words` (a {@link Words} stream). */
export function drawPadding(words, node, input) {
  const s = input.length;
  const j = words.uniform(Math.max(s, node.ell));
  const k = words.uniform(node.ell);
  return drawUnary(words, node.inner, j < s ? input[j] : node.d + k);
}

/** The padding kind (client-kinds.mjs): an item-set in, the inner node's bits out. */
export const KIND = {
  parse: parsePadding,
  verify: verifyPadding,
  words: (node) => 2 + node.inner.d,
  draw: drawPadding,
  takes: "item-set",
};
