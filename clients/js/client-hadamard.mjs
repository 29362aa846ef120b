// client-hadamard.mjs: the Hadamard-response node of the JS client (pldp-client.mjs; pldp.channel.hadamard):
// one index of a K x K Sylvester-Hadamard matrix, in the item's half C_x w.p. keep / 2^32 (docs/wire-format.md §2).

import { checkBudget, checkInt, checkKeys } from "./client-checks.mjs";
import { everyPairClaim } from "./client-exact.mjs";
import { GRID, GRID_BITS } from "./client-grid.mjs";
import { SpecError } from "./client-wire.mjs";

const MAX_K = 2 ** 31;

/** Whether index y lies in C_x: the parity of (x + 1) & y is even (both below 2^31). */
export function inHalf(x, y) {
  let v = (x + 1) & y;
  v ^= v >>> 16;
  v ^= v >>> 8;
  v ^= v >>> 4;
  v ^= v >>> 2;
  v ^= v >>> 1;
  return (v & 1) === 0;
}

export function parseHadamard(obj, path) {
  checkKeys(obj, path, ["kind", "d", "K", "keep", "epsilon"]);
  const d = checkInt(obj.d, `${path}.d`, 2, MAX_K - 1);
  const K = checkInt(obj.K, `${path}.K`, 4, MAX_K);
  if (!Number.isInteger(Math.log2(K)) || K <= d) {
    throw new SpecError(`${path}.K must be a power of two > d = ${d}, got ${K}`);
  }
  const keep = checkInt(obj.keep, `${path}.keep`, 1, GRID - 1);
  const epsilon = checkBudget(obj.epsilon, `${path}.epsilon`, false);
  // everyPair: the report format (K / 2 indices support an item, K / 2 do not) and the mass of those that do
  return { kind: "hadamard", d, K, keep, epsilon, everyPair: { format: `hadamard/${d}/${K}`, hit: keep } };
}

/** The claim: max(keep, 2^32 - keep) / min(keep, 2^32 - keep) <= e^epsilon for every pair of items. */
export function verifyHadamard(node, part) {
  return everyPairClaim(BigInt(node.keep), BigInt(GRID - node.keep), node.epsilon, part);
}

/** One report's column [value] for item x: two words of `words` (a {@link Words} stream). */
export function drawHadamard(words, node, x) {
  const inside = words.word() < node.keep;
  let r = words.word() >>> (GRID_BITS - Math.log2(node.K));
  if (inHalf(x, r) !== inside) {
    const row = x + 1;
    r ^= row & -row;
  }
  return [r];
}

export const KIND = {
  parse: parseHadamard,
  verify: verifyHadamard,
  words: () => 2,
  draw: drawHadamard,
  leaf: true,
  columns: ["value"],
  takes: "item",
  attribute: false,
};
