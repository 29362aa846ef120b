// client-cms.mjs: the count-mean-sketch node of the JS client (pldp-client.mjs; pldp.channel.sketch):
// a row j of k hash functions XXH32(item, j) mod m, then the m bits of the one-hot vector of the
// item's hash, each flipped w.p. flip / 2^32 (docs/wire-format.md §2). The parts both sketch nodes
// share (parse, the row) are here too; client-hcms.mjs imports them.

import { checkBudget, checkInt, checkKeys, repr } from "./client-checks.mjs";
import { logRatio, ratioWithin } from "./client-exact.mjs";
import { GRID, GRID_BITS } from "./client-grid.mjs";
import { hashValue } from "./client-hashed.mjs";
import { SpecError, base64Encode } from "./client-wire.mjs";

/** The hash families a sketch node may name (its own list: local hashing may add others). */
const SKETCH_FAMILIES = ["xxh32"];

/** The range of the width m of each sketch kind (a power of two). */
const MAX_M = { cms: 2 ** 16, hcms: 2 ** 24 };

/** The top `bits` bits of a 32-bit word (0 when bits is 0). */
export const topBits = (w, bits) => (bits === 0 ? 0 : w >>> (GRID_BITS - bits));

function powerOfTwo(value, path, lo, hi) {
  const v = checkInt(value, path, lo, hi);
  if (!Number.isInteger(Math.log2(v))) throw new SpecError(`${path} must be a power of two, got ${v}`);
  return v;
}

/** Read a sketch node of `kind` ("cms" or "hcms") whose grid threshold is named `threshold`. */
export function parseSketch(obj, path, kind, threshold) {
  checkKeys(obj, path, ["kind", "d", "k", "m", "family", threshold, "epsilon"]);
  const d = checkInt(obj.d, `${path}.d`, 2, 2 ** 31 - 1);
  const k = powerOfTwo(obj.k, `${path}.k`, 1, 2 ** 16);
  const m = powerOfTwo(obj.m, `${path}.m`, 2, MAX_M[kind]);
  if (!SKETCH_FAMILIES.includes(obj.family)) {
    throw new SpecError(`${path}.family must be one of ${repr(SKETCH_FAMILIES)}, got ${repr(obj.family)}`);
  }
  const t = checkInt(obj[threshold], `${path}.${threshold}`, 1, GRID - 1);
  const epsilon = checkBudget(obj.epsilon, `${path}.epsilon`, false);
  return { kind, d, k, m, family: obj.family, [threshold]: t, epsilon };
}

/** The claim row of a largest ratio num / den for every pair of items. */
export function sketchRows(num, den, node, part) {
  const row = { part, subject: "every pair of items", claimed: node.epsilon, realised: logRatio(num, den), holds: ratioWithin(num, den, node.epsilon) };
  return [[row], node.epsilon];
}

/** The claim: (max / min of flip and 2^32 - flip)^2 <= e^epsilon (two coordinates differ). */
export function verifyCMS(node, part) {
  const flip = BigInt(node.flip);
  const rest = BigInt(GRID) - flip;
  const [num, den] = flip >= rest ? [flip, rest] : [rest, flip];
  return sketchRows(num * num, den * den, node, part);
}

/** One report's columns [row, bits (base64)] for item x: 1 + m words of `words`. */
export function drawCMS(words, node, x) {
  const j = topBits(words.word(), Math.log2(node.k));
  const h = hashValue(x, j, node.m);
  const bytes = new Uint8Array(Math.ceil(node.m / 8));
  for (let l = 0; l < node.m; l++) {
    const flipped = words.word() < node.flip;
    if (flipped !== (l === h)) bytes[l >> 3] |= 128 >> (l & 7);
  }
  return [j, base64Encode(bytes)];
}

export const KIND = {
  parse: (obj, path) => parseSketch(obj, path, "cms", "flip"),
  verify: verifyCMS,
  words: (node) => 1 + node.m,
  draw: drawCMS,
  leaf: true,
  columns: ["row", "bits"],
  takes: "item",
  attribute: false,
};
