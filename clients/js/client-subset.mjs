// client-subset.mjs: the subset-selection node of the JS client (pldp-client.mjs; pldp.channel.subset):
// k of d items, the user's among them when the first word is below keep, the others drawn by a
// partial Fisher-Yates shuffle with exact uniform choices (docs/wire-format.md §2).

import { checkBudget, checkInt, checkKeys } from "./client-checks.mjs";
import { everyPairClaim } from "./client-exact.mjs";
import { GRID } from "./client-grid.mjs";
import { SpecError, base64Encode } from "./client-wire.mjs";

const MAX_D = 2 ** 24;

export function parseSubset(obj, path) {
  checkKeys(obj, path, ["kind", "d", "k", "keep", "epsilon"]);
  const d = checkInt(obj.d, `${path}.d`, 2, MAX_D);
  const k = checkInt(obj.k, `${path}.k`, 1, MAX_D - 1);
  if (k >= d) throw new SpecError(`${path}.k must be below d = ${d}, got ${k}`);
  const keep = checkInt(obj.keep, `${path}.keep`, 1, GRID - 1);
  const epsilon = checkBudget(obj.epsilon, `${path}.epsilon`, false);
  // everyPair: the report format (C(d-1, k-1) sets hold an item, C(d-1, k) do not) and the mass of those that do
  const everyPair = { format: `subset/${d}/${k}`, hit: keep };
  return { kind: "subset", d, k, keep, epsilon, nbytes: (d + 7) >> 3, everyPair };
}

/** The claim: keep (d - k) / ((2^32 - keep) k) and its inverse <= e^epsilon for every pair of items. */
export function verifySubset(node, part) {
  const a = BigInt(node.keep) * BigInt(node.d - node.k);
  return everyPairClaim(a, BigInt(GRID - node.keep) * BigInt(node.k), node.epsilon, part);
}

/** One report's bits (base64) for item x: a word for membership, then k exact uniform choices. */
export function drawSubset(words, node, x) {
  const { d, k } = node;
  const inside = words.word() < node.keep;
  // the partial Fisher-Yates shuffle of [d] \ {x} (increasing), on the positions it moves only:
  // position p holds p + (p >= x) until a swap moves it (O(k), not a d-long array)
  const moved = new Map();
  const at = (p) => (moved.has(p) ? moved.get(p) : p < x ? p : p + 1);
  for (let t = 0; t < k; t++) {
    const j = t + words.uniform(d - 1 - t);
    const [vt, vj] = [at(t), at(j)];
    moved.set(t, vj);
    moved.set(j, vt);
  }
  const bytes = new Uint8Array(node.nbytes);
  const set = (v) => (bytes[v >> 3] |= 128 >> (v & 7));
  for (let t = 0; t < k - 1; t++) set(at(t));
  set(inside ? x : at(k - 1));
  return base64Encode(bytes);
}

export const KIND = {
  parse: parseSubset,
  verify: verifySubset,
  words: (node) => 1 + node.k,
  draw: (words, node, x) => [drawSubset(words, node, x)],
  leaf: true,
  columns: ["bits"],
  takes: "item",
  attribute: false,
};
