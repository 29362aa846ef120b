// client-hashed.mjs: the local-hashing node of the JS client (pldp-client.mjs; pldp.channel.hashed):
// a seed of a family of `seeds` (a power of two; 2**31 when the node names none: OLH; fewer: FLH), then
// randomized response over g values of XXH32(item, seed) mod g, or of the Toeplitz family's
// T x XOR b (g a power of two; pldp.channel.toeplitz) (docs/wire-format.md §2).

import { checkBudget, checkInt, checkKeys, repr } from "./client-checks.mjs";
import { everyPairClaim } from "./client-exact.mjs";
import { GRID, GRID_BITS } from "./client-grid.mjs";
import { SpecError } from "./client-wire.mjs";
import { avalanche } from "./client-xxh32.mjs";

export const HASH_FAMILIES = ["xxh32", "toeplitz"];
const TOEPLITZ_BITS = 31;
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

/** The parity of a non-negative 32-bit integer. */
function parity(v) {
  v ^= v >>> 16;
  v ^= v >>> 8;
  v ^= v >>> 4;
  v ^= v >>> 2;
  v ^= v >>> 1;
  return v & 1;
}

/** The Toeplitz family: b = the seed's low log2(g) bits, tau = the rest; bit k of T x is
 * parity((tau >> k) & x). Every operand is below 2**31, so 32-bit integer operations are exact. */
export function toeplitzValue(x, seed, g) {
  const r = Math.log2(g);
  const tau = seed >>> r;
  let h = seed & (g - 1);
  for (let k = 0; k < r; k++) h ^= parity((tau >>> k) & x) << k;
  return h;
}

/** Why the Toeplitz family cannot hold d items and g values (pldp.channel.toeplitz.toeplitz_fits), or null. */
export function toeplitzFits(d, g) {
  if (g < 2 || (g & (g - 1)) !== 0) return `the Toeplitz family needs g a power of two, got ${g}`;
  const r = Math.log2(g);
  const b = Math.max(1, (BigInt(d) - 1n).toString(2).length); // exact for any d a double holds (SFP's 2**k)
  if (2 * r + b - 1 > TOEPLITZ_BITS) {
    return (
      `the Toeplitz family needs 2 log2(g) + bits(d - 1) - 1 <= ${TOEPLITZ_BITS} seed bits, got ` +
      `2 * ${r} + ${b} - 1 = ${2 * r + b - 1} (d = ${BigInt(d)}, g = ${g}): a smaller g or d`
    );
  }
  return null;
}

/** H_s(x): XXH32(x, s) mod g, or the Toeplitz family's value. */
export const hashValue = (x, seed, g, family = "xxh32") =>
  family === "toeplitz" ? toeplitzValue(x, seed, g) : xxh32Index(x, seed) % g;

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
  if (obj.family === "toeplitz") {
    const why = toeplitzFits(d, g);
    if (why !== null) throw new SpecError(`${path}: ${why}`);
    if (Object.hasOwn(obj, "seeds")) {
      throw new SpecError(`${path}: the Toeplitz family has 2**31 seeds (OLH's), so a node names none`);
    }
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
  const value = w < node.keep ? hashValue(x, seed, node.g, node.family) : Math.floor((w - node.keep) / node.weight);
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
