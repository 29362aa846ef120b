// client-unary.mjs: the unary node of the JS client (pldp-client.mjs; pldp.channel.unary): one
// word per bit, bit k set below a[k] for the true item and below b[k] for the others
// (docs/wire-format.md §2, §3.2); under ULDP b[k] = 0 on the non-sensitive items (§3.12).

import { checkBudgets, checkInt, checkInts, checkKeys, groups, largest, repr, smallest, who } from "./client-checks.mjs";
import { exactFraction, logRatio, ratioWithin } from "./client-exact.mjs";
import { GRID, GRID_N } from "./client-grid.mjs";
import { SpecError, base64Encode } from "./client-wire.mjs";

export const UNARY_NOTIONS = ["LDP", "MinID-LDP", "AvgID-LDP"];
/** The notions of a unary node: those of independent bits with 0 < b < a, and ULDP. */
export const UNARY_NODE_NOTIONS = [...UNARY_NOTIONS, "ULDP"];

/**
 * The thresholds `a` and `b` of independent bits over d items at `path` (b[k] < a[k] for every bit),
 * with their sampling tables: also a memo node's instantaneous response.
 */
export function unaryThresholds(obj, path, d, zeroB = false) {
  const a = checkInts(obj.a, `${path}.a`, d, 1, GRID - 1);
  const b = checkInts(obj.b, `${path}.b`, d, zeroB ? 0 : 1, GRID - 1);
  const bad = [];
  for (let k = 0; k < d; k++) if (!(b[k] < a[k])) bad.push(k);
  if (bad.length) throw new SpecError(`${path}: need b[k] < a[k] for every bit; not so at ${repr(bad.slice(0, 5))}`);
  return { a, b, ta: Uint32Array.from(a), tb: Uint32Array.from(b), nbytes: (d + 7) >> 3 };
}

export function parseUnary(obj, path) {
  checkKeys(obj, path, ["kind", "d", "a", "b", "notion", "epsilons"]);
  const d = checkInt(obj.d, `${path}.d`, 2, 2 ** 24);
  if (!UNARY_NODE_NOTIONS.includes(obj.notion)) {
    throw new SpecError(`${path}.notion must be one of ${repr(UNARY_NODE_NOTIONS)}, got ${repr(obj.notion)}`);
  }
  const uldp = obj.notion === "ULDP";
  const { a, b, ta, tb, nbytes } = unaryThresholds(obj, path, d, uldp);
  const epsilons = checkBudgets(obj.epsilons, `${path}.epsilons`, d, uldp);
  if (uldp) {
    const bad = [];
    for (let k = 0; k < d; k++) if ((b[k] === 0) !== (epsilons[k] === Infinity)) bad.push(k);
    if (bad.length) {
      throw new SpecError(
        `${path}: under ULDP b[k] = 0 exactly for the items of budget inf; not so at ${repr(bad.slice(0, 5))}`,
      );
    }
    if (epsilons.every((e) => e === Infinity)) {
      throw new SpecError(`${path}: a ULDP node needs at least one sensitive item (finite budget)`);
    }
  }
  return { kind: "unary", d, a, b, notion: obj.notion, epsilons, ta, tb, nbytes };
}

export const unaryRows = (node, part) =>
  node.notion === "ULDP"
    ? uldpRows(node.a, node.b, node.epsilons, part)
    : pairRows(node.a, node.b, node.epsilons, node.notion, GRID_N, part);

/**
 * The ULDP claims of independent bits with b = 0 on the non-sensitive items (pldp.channel.unary's
 * uldp_rows): on a protected output, f_i (G - b_j) / (G - a_j) <= e^eps for every ordered pair of
 * distinct items, f_i = a_i / b_i for a sensitive i and (G - a_i) / G for a non-sensitive one, eps
 * the smallest finite budget; one row per pair of groups of equal (a, b, budget).
 */
export function uldpRows(aIn, bIn, epsilons, part) {
  const a = aIn.map(BigInt);
  const b = bIn.map(BigInt);
  const gs = [...groups(a.map((v, k) => `${v}|${b[k]}|${epsilons[k]}`)).values()];
  const claimed = smallest(epsilons.filter((e) => e !== Infinity));
  const rows = [];
  for (const gi of gs) {
    for (const gj of gs) {
      if (gi === gj && gi.length < 2) continue; // a pair needs two distinct items
      const [i, j] = [gi[0], gj[0]];
      const sensitive = epsilons[i] !== Infinity;
      const num = (sensitive ? a[i] : GRID_N - a[i]) * (GRID_N - b[j]);
      const den = (sensitive ? b[i] : GRID_N) * (GRID_N - a[j]);
      const holds = ratioWithin(num, den, claimed);
      rows.push({ part, subject: `${who(gi)} vs ${who(gj)}`, claimed, realised: logRatio(num, den), holds });
    }
  }
  return rows;
}

/**
 * The pair claims of independent bits, bit k set w.p. a[k] / grid for item k and b[k] / grid for
 * another (Gu et al. eq. 5), one row per pair of groups of equal (a, b, budget). `grid` a BigInt:
 * 2^32 for a node, 2^64 for the one-report channel of a memo node.
 */
export function pairRows(aIn, bIn, epsilons, notion, grid, part) {
  const a = aIn.map(BigInt);
  const b = bIn.map(BigInt);
  const keys = a.map((v, k) => `${v}|${b[k]}|${epsilons[k]}`);
  const gs = [...groups(keys).values()];
  const epsMin = smallest(epsilons);
  const rows = [];
  for (const gi of gs) {
    for (const gj of gs) {
      if (gi === gj && gi.length < 2) continue; // a pair needs two distinct items
      const [i, j] = [gi[0], gj[0]];
      const [ei, ej] = [epsilons[i], epsilons[j]];
      let claimed;
      let exact;
      if (notion === "MinID-LDP") {
        claimed = Math.min(ei, ej);
      } else if (notion === "AvgID-LDP") {
        claimed = (ei + ej) / 2;
        const [fi, fj] = [exactFraction(ei), exactFraction(ej)]; // dyadic: the sum over 2 is exact
        exact = [fi[0] * fj[1] + fj[0] * fi[1], 2n * fi[1] * fj[1]];
      } else {
        claimed = epsMin;
      }
      const num = a[i] * (grid - b[j]);
      const den = b[i] * (grid - a[j]);
      const holds = ratioWithin(num, den, exact ?? claimed);
      rows.push({ part, subject: `${who(gi)} vs ${who(gj)}`, claimed, realised: logRatio(num, den), holds });
    }
  }
  return rows;
}


/** The bits drawn for item x with node.d words of `words` (a {@link Words} stream), as base64. */
export function drawUnary(words, node, x) {
  const d = node.d;
  words.ensure(d);
  const buf = words.buf;
  const p = words.pos;
  const tb = node.tb;
  const bytes = new Uint8Array(node.nbytes);
  for (let k = 0; k < d; k++) if (buf[p + k] < tb[k]) bytes[k >> 3] |= 128 >> (k & 7);
  if (buf[p + x] < node.ta[x]) bytes[x >> 3] |= 128 >> (x & 7);
  else bytes[x >> 3] &= ~(128 >> (x & 7));
  words.pos = p + d;
  return base64Encode(bytes);
}

/** The unary kind (client-kinds.mjs): a leaf of one column, the bits (base64). */
export const KIND = {
  parse: parseUnary,
  verify: (node, part) => [unaryRows(node, part), largest(node.epsilons)],
  words: (node) => node.d,
  draw: (words, node, x) => [drawUnary(words, node, x)],
  leaf: true,
  columns: ["bits"],
  takes: "item",
  attribute: true,
};
