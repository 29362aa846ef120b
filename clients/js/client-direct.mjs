// client-direct.mjs: the direct node of the JS client (pldp-client.mjs; pldp.channel.direct):
// one word keeps the true item or picks an output by its weight (docs/wire-format.md §2, §3.1).

import { checkBudgets, checkInt, checkInts, checkKeys, groups, largest, repr, who } from "./client-checks.mjs";
import { logRatio, ratioWithin } from "./client-exact.mjs";
import { GRID, GRID_BITS } from "./client-grid.mjs";
import { SpecError } from "./client-wire.mjs";

export const DIRECT_NOTIONS = ["LDP", "ULDP", "IPLDP"];

/** A direct response's sampling tables (cumulative weights; the common weight if all are equal). */
function directTables(d, weights) {
  const cum = new Float64Array(d);
  let s = 0;
  for (let y = 0; y < d; y++) cum[y] = s += weights[y];
  return { cum, uniform: weights.every((w) => w === weights[0]) ? weights[0] : 0 };
}

/**
 * The thresholds `keep` and `weights` of a direct response over d items at `path` (they must sum
 * to the grid), with its sampling tables: also a memo node's instantaneous response.
 */
export function directThresholds(obj, path, d) {
  const keep = checkInt(obj.keep, `${path}.keep`, 1, GRID);
  const weights = checkInts(obj.weights, `${path}.weights`, d, 0, GRID);
  const total = weights.reduce((s, w) => s + w, keep); // exact up to 2^53; partial sums never decrease, so == 2^32 is exact
  if (total !== GRID) throw new SpecError(`${path}: keep + sum(weights) = ${total} must be 2**${GRID_BITS} = ${GRID}`);
  return { keep, weights, ...directTables(d, weights) };
}

export function parseDirect(obj, path) {
  checkKeys(obj, path, ["kind", "d", "keep", "weights", "notion", "epsilons"]);
  const d = checkInt(obj.d, `${path}.d`, 2, 2 ** 31);
  const { keep, weights, cum, uniform } = directThresholds(obj, path, d);
  if (!DIRECT_NOTIONS.includes(obj.notion)) {
    throw new SpecError(`${path}.notion must be one of ${repr(DIRECT_NOTIONS)}, got ${repr(obj.notion)}`);
  }
  const epsilons = checkBudgets(obj.epsilons, `${path}.epsilons`, d, true);
  return { kind: "direct", d, keep, weights, notion: obj.notion, epsilons, cum, uniform };
}

/**
 * The claims of a direct channel Pr(y | x) = (weights[y] + keep [x = y]) / G (the grid cancels: a
 * node's 2^32, or the 2^64 one-report channel of a memo node), one row per group of outputs of
 * equal (weight, budget): (weights[y] + keep) / weights[y] <= e^eps_y. Numbers or BigInts.
 */
export function outputRows(keep, weights, epsilons, part) {
  const rows = [];
  const keys = weights.map((w, y) => `${w}|${epsilons[y]}`);
  for (const items of groups(keys).values()) {
    const w = BigInt(weights[items[0]]);
    const e = epsilons[items[0]];
    if (e === Infinity) continue; // a non-sensitive output may reveal its holder (IPLDP/ULDP)
    const num = w + BigInt(keep);
    const holds = w > 0n && ratioWithin(num, w, e);
    rows.push({ part, subject: "output " + who(items).slice(5), claimed: e, realised: logRatio(num, w), holds });
  }
  return rows;
}

export const directRows = (node, part) => outputRows(node.keep, node.weights, node.epsilons, part);

/** The output drawn for item x with one word of `words` (a {@link Words} stream). */
export function drawDirect(words, node, x) {
  const w = words.word();
  if (w < node.keep) return x;
  const v = w - node.keep;
  if (node.uniform) return Math.floor(v / node.uniform);
  const cum = node.cum;
  let lo = 0;
  let hi = node.d - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (v < cum[mid]) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The direct kind (client-kinds.mjs): a leaf of one column, the output item. */
export const KIND = {
  parse: parseDirect,
  verify: (node, part) => [directRows(node, part), largest(node.epsilons)],
  words: () => 1,
  draw: (words, node, x) => [drawDirect(words, node, x)],
  leaf: true,
  columns: ["item"],
  takes: "item",
  attribute: true,
};
