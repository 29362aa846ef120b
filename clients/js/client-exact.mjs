// client-exact.mjs: the exact arithmetic of the JS client's privacy checks (pldp-client.mjs):
// binary64 budgets as exact fractions, rigorous bounds of e^x, ratio <= e^eps decided exactly, and
// the floats shown for display.

/**
 * A finite binary64 number >= 0 as the exact fraction [numerator, denominator] of BigInts (the
 * denominator a power of two).
 */
export function exactFraction(x) {
  if (!Number.isFinite(x) || x < 0) throw new RangeError(`need a finite number >= 0, got ${x}`);
  if (x === 0) return [0n, 1n];
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const exp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e;
  if (exp === 0) e = -1074;
  else {
    mant |= 1n << 52n;
    e = exp - 1075;
  }
  while (e < 0 && (mant & 1n) === 0n) {
    mant >>= 1n;
    e++;
  }
  return e >= 0 ? [mant << BigInt(e), 1n] : [mant, 1n << BigInt(-e)];
}

const expCache = new Map();

/**
 * Rigorous rational bounds on e^x for a rational x = num/den >= 0: integers lo, hi and a
 * precision p with lo / 2^p <= e^x <= hi / 2^p. Argument halving to x / 2^k <= 1/2, the Taylor
 * series to a term below 2^-(p+4) with its remainder bound (at most twice that term), rounded
 * outwards to p = bits + k + 8 fraction bits, then squared back k times with outward rounding.
 * The same construction as pldp.channel.exact.exp_bounds.
 *
 * @param {bigint} num
 * @param {bigint} den  > 0
 * @param {number} [bits=64] Working precision.
 * @returns {{lo: bigint, hi: bigint, p: number}}
 */
export function expBounds(num, den, bits = 64) {
  if (den <= 0n || num < 0n) throw new RangeError("expBounds needs num >= 0 and den > 0");
  const key = `${num}/${den}/${bits}`;
  const hit = expCache.get(key);
  if (hit) return hit;
  let result;
  if (num === 0n) {
    result = { lo: 1n, hi: 1n, p: 0 };
  } else {
    let k = 0;
    let d = den;
    while (2n * num > d) {
      d *= 2n; // y = num / d, halved until y <= 1/2
      k++;
    }
    const p = bits + k + 8;
    const P = BigInt(p);
    // total = sum_{i < n} y^i / i! and term = y^n / n!, both over the common denominator D
    let totN = 0n;
    let tN = 1n;
    let D = 1n;
    for (let i = 1; ; i++) {
      totN += tN;
      const f = d * BigInt(i);
      totN *= f;
      D *= f;
      tN *= num;
      if (tN << (P + 4n) < D) break; // term < 2^-(p+4)
    }
    // the remainder after the partial sum is at most term / (1 - y) <= 2 term, since y <= 1/2
    let lo = (totN << P) / D;
    const hiNum = (totN + 2n * tN) << P;
    let hi = (hiNum + D - 1n) / D;
    const mask = (1n << P) - 1n;
    for (let j = 0; j < k; j++) {
      lo = (lo * lo) >> P;
      const sq = hi * hi;
      hi = (sq >> P) + ((sq & mask) === 0n ? 0n : 1n);
    }
    result = { lo, hi, p };
  }
  if (expCache.size > 4096) expCache.clear();
  expCache.set(key, result);
  return result;
}

/** A budget as an exact fraction [num, den], or null for an infinite budget. */
function budgetFraction(eps) {
  if (eps === Infinity) return null;
  if (Array.isArray(eps)) return eps;
  return exactFraction(eps);
}

/**
 * Whether num / den <= e^eps, decided exactly. `num`, `den` are BigInts >= 0 (`den = 0` is an
 * infinite ratio, within only an infinite budget); `eps` a number >= 0 (an exact binary64
 * rational), `Infinity`, or an exact fraction [num, den] of BigInts. The bounds of e^eps are
 * refined until they decide, which they always do for eps > 0 since e^eps is irrational.
 *
 * @param {bigint} num
 * @param {bigint} den
 * @param {number|bigint[]} eps
 * @returns {boolean}
 */
export function ratioWithin(num, den, eps) {
  const x = budgetFraction(eps);
  if (x === null) return true;
  if (den === 0n) return false;
  if (num <= den) return true; // ratio <= 1 <= e^eps
  for (let bits = 64; ; bits *= 2) {
    const { lo, hi, p } = expBounds(x[0], x[1], bits);
    const scaled = num << BigInt(p);
    if (scaled <= lo * den) return true;
    if (scaled > hi * den) return false;
  }
}

/** ln of a positive BigInt as a float (for display). */
function bigLn(x) {
  const len = x.toString(16).length * 4;
  const shift = Math.max(0, len - 64);
  return Math.log(Number(x >> BigInt(shift))) + shift * Math.LN2;
}

/** ln(num / den) as a float, for display (Infinity when den = 0). */
export function logRatio(num, den) {
  if (den === 0n) return Infinity;
  return bigLn(num) - bigLn(den);
}

/** a/b > c/d for fractions with positive denominators. */
export const fracGreater = (a, b) => a[0] * b[1] > b[0] * a[1];

/** Python's format(x, ".{prec}g"). */
export function fmtG(x, prec = 6) {
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (Number.isNaN(x)) return "nan";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const exp = Number(x.toExponential(prec - 1).split("e")[1]);
  const strip = (s) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
  if (exp >= -4 && exp < prec) return strip(x.toFixed(prec - 1 - exp));
  const [mant] = x.toExponential(prec - 1).split("e");
  return strip(mant) + "e" + (exp < 0 ? "-" : "+") + String(Math.abs(exp)).padStart(2, "0");
}

/** The subject of the one claim of a node that protects every pair of items alike at one budget. */
export const EVERY_PAIR = "every pair of items";

/** That claim's row: the largest ratio num / den (BigInts) of a report's probabilities under two items within e^eps, exactly. */
export function everyPairRow(num, den, eps, part) {
  return { part, subject: EVERY_PAIR, claimed: eps, realised: logRatio(num, den), holds: ratioWithin(num, den, eps) };
}

/**
 * Largest Pr(o | x, node) / Pr(o | x, other) over items x and outputs o of two nodes that protect every
 * pair of items alike, of one report format (pldp.channel.every_pair.EveryPairLeaf.ratio_to): under any
 * item the outputs that support it share the mass `hit` (over `grid`), the others the rest, each class
 * of a size the format fixes, so the ratio is the larger of hit / hit2 and (grid - hit) / (grid - hit2).
 * [num, den] BigInts; null (not bounded here) for nodes of different formats.
 */
export function everyPairRatio(node, other, grid) {
  if (node.everyPair.format !== other.everyPair.format) return null;
  const [h, h2] = [BigInt(node.everyPair.hit), BigInt(other.everyPair.hit)];
  const [a, b] = [[h, h2], [grid - h, grid - h2]];
  return fracGreater(a, b) ? a : b;
}

/**
 * The claims of a node that protects every pair of items alike at eps (local hashing, Hadamard
 * response, subset selection), as a kind's `verify` returns them: [[row], eps], the row that of the
 * larger of a, b (BigInts, the probabilities of a report under two items, up to one factor) over the
 * smaller.
 */
export function everyPairClaim(a, b, eps, part) {
  const [num, den] = a >= b ? [a, b] : [b, a];
  return [[everyPairRow(num, den, eps, part)], eps];
}
