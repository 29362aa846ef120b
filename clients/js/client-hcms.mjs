// client-hcms.mjs: the Hadamard count-mean-sketch node of the JS client (pldp-client.mjs;
// pldp.channel.sketch): a row j of k hash functions, a column l of the Hadamard matrix of order m and
// the entry H[h_j(x), l], kept w.p. keep / 2^32, else negated (docs/wire-format.md §2).

import { GRID } from "./client-grid.mjs";
import { hashValue } from "./client-hashed.mjs";
import { parseSketch, sketchRows, topBits } from "./client-cms.mjs";

/** H[r, l] = (-1)^popcount(r & l) as the bit 1 (+1) or 0 (-1). */
export function hadamardBit(r, l) {
  let v = r & l;
  v ^= v >>> 16;
  v ^= v >>> 8;
  v ^= v >>> 4;
  v ^= v >>> 2;
  v ^= v >>> 1;
  return (v & 1) === 0 ? 1 : 0;
}

/** The claim: max(keep, 2^32 - keep) / min(keep, 2^32 - keep) <= e^epsilon for every pair of items. */
export function verifyHCMS(node, part) {
  const keep = BigInt(node.keep);
  const rest = BigInt(GRID) - keep;
  return keep >= rest ? sketchRows(keep, rest, node, part) : sketchRows(rest, keep, node, part);
}

/** One report's columns [row, index, bit] for item x: three words of `words`. */
export function drawHCMS(words, node, x) {
  const j = topBits(words.word(), Math.log2(node.k));
  const l = topBits(words.word(), Math.log2(node.m));
  const entry = hadamardBit(hashValue(x, j, node.m), l);
  return [j, l, words.word() < node.keep ? entry : 1 - entry];
}

export const KIND = {
  parse: (obj, path) => parseSketch(obj, path, "hcms", "keep"),
  verify: verifyHCMS,
  words: () => 3,
  draw: drawHCMS,
  leaf: true,
  columns: ["row", "index", "bit"],
  takes: "item",
  attribute: false,
};
