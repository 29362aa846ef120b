// client-hashed.mjs: the local-hashing node of the JS client (pldp-client.mjs; pldp.channel.hashed):
// a seed of a family of `seeds` (a power of two; 2**31 when the node names none: OLH; fewer: FLH), then
// randomized response over g values of XXH32(item, seed) mod g (docs/wire-format.md §2).

import { checkBudget, checkInt, checkKeys, repr } from "./client-checks.mjs";
import { everyPairClaim } from "./client-exact.mjs";
import { GRID, GRID_BITS } from "./client-grid.mjs";
import { SpecError } from "./client-wire.mjs";
import { avalanche } from "./client-xxh32.mjs";

export const HASH_FAMILIES = ["xxh32"];
const SEEDS = 2 ** 31;
const MIN_SEEDS = 2;
// the primes of the 4-byte case of the specification (PRIME32_3 to PRIME32_5; avalanche has the rest)
const [P3, P4, P5] = [0xc2b2ae3d, 0x27d4eb2f, 0x165667b1];

/** XXH32 of the item index x as 4 little-endian bytes, with `seed`: an unsigned 32-bit integer. */
export function xxh32Index(x, seed) {
  let h = (seed + P5 + 4) >>> 0;
  h = (h + Math.imul(x >>> 0, P3)) >>> 0;
  h = Math.imul((h << 17) | (h >>> 15), P4) >>> 0;
  return avalanche(h);
}

/** H_s(x) = XXH32(x, s) mod g. */
export const hashValue = (x, seed, g) => xxh32Index(x, seed) % g;

export function parseHashed(obj, path) {
  checkKeys(obj, path, ["kind", "d", "g", "family", "keep", "weight", "epsilon"], ["seeds"]);
  const d = checkInt(obj.d, `${path}.d`, 2, SEEDS - 1);
  const g = checkInt(obj.g, `${path}.g`, 2, 2 ** 24);
  if (!HASH_FAMILIES.includes(obj.family)) {
    throw new SpecError(`${path}.family must be one of ${repr(HASH_FAMILIES)}, got ${repr(obj.family)}`);
  }
  // written only for a family smaller than OLH's: one node, one JSON form, one spec id
  const seeds = Object.hasOwn(obj, "seeds") ? checkInt(obj.seeds, `${path}.seeds`, MIN_SEEDS, SEEDS / 2) : SEEDS;
  if (2 ** Math.round(Math.log2(seeds)) !== seeds) throw new SpecError(`${path}.seeds = ${seeds} is not a power of two`);
  const keep = checkInt(obj.keep, `${path}.keep`, 1, GRID);
  const weight = checkInt(obj.weight, `${path}.weight`, 1, GRID);
  if (keep + g * weight !== GRID) {
    throw new SpecError(`${path}: keep + g * weight = ${keep + g * weight} must be 2**${GRID_BITS} = ${GRID}`);
  }
  const epsilon = checkBudget(obj.epsilon, `${path}.epsilon`, false);
  const shift = GRID_BITS - Math.log2(seeds);
  // everyPair: the report format (S outputs support an item, S (g - 1) do not) and the mass of those that do
  const everyPair = { format: `hashed/${d}/${g}/${obj.family}/${seeds}`, hit: weight + keep };
  return { kind: "hashed", d, g, family: obj.family, seeds, keep, weight, epsilon, shift, everyPair };
}

/** The claim: (weight + keep) / weight <= e^epsilon for every pair of items, whatever the hash. */
export function verifyHashed(node, part) {
  return everyPairClaim(BigInt(node.weight + node.keep), BigInt(node.weight), node.epsilon, part);
}

/** One report's columns [seed, value] for item x: two words of `words` (a {@link Words} stream); the seed
 * is the first word's top log2(seeds) bits. */
export function drawHashed(words, node, x) {
  const seed = words.word() >>> node.shift;
  const w = words.word();
  const value = w < node.keep ? hashValue(x, seed, node.g) : Math.floor((w - node.keep) / node.weight);
  return [seed, value];
}

export const KIND = {
  parse: parseHashed,
  verify: verifyHashed,
  words: () => 2,
  draw: drawHashed,
  leaf: true,
  columns: ["seed", "value"],
  takes: "item",
  attribute: false,
};
