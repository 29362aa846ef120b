// pldp-client.mjs: the browser/Node client of pldp campaigns (docs/wire-format.md).
//
// One dependency-free ES module, no build step. It loads a campaign spec (`pldp.spec/1`),
// checks its content id and every privacy claim with exact arithmetic, and randomizes answers
// into reports (`pldp.report/1`) with integer comparisons of uniform 32-bit words drawn from the
// platform CSPRNG (crypto.getRandomValues). Given the same word stream it writes byte-identical
// reports to pldp's Python client (pldp.client.Client).
//
// A memoized spec (L-GRR, L-OUE, ...: a permanent randomized response per value, kept on the
// device) needs a memo store: IndexedDB in browsers, a file in Node (the Python client's format,
// pldp.memo/1); its reports are returned as Promises, after the new permanent responses are stored.

/** 2**32: every sampler probability is a numerator over this grid. */
const GRID = 4294967296;
const GRID_N = 4294967296n;
const GRID_BITS = 32;
const SPEC_FORMAT = "pldp.spec/1";
const REPORT_FORMAT = "pldp.report/1";
const BATCH_FORMAT = "pldp.batch/1";
const ID_WORDS = 4;
const CHUNK_WORDS = 16384; // crypto.getRandomValues fills at most 65536 bytes per call

const DIRECT_NOTIONS = ["LDP", "ULDP", "IPLDP"];
const UNARY_NOTIONS = ["LDP", "MinID-LDP", "AvgID-LDP"];
const LEVEL_REPORTS = ["perturbed", "clear", "hidden"];
const KINDS = ["attributes", "direct", "leveled", "memo", "padding", "unary"];
const MEMO_FORMAT = "pldp.memo/1";
const MEMO_KEY_MAX = 256;

// ============================================================================ errors

/**
 * A spec that is malformed, altered (its id does not match its content) or whose privacy claim
 * fails. The message names the offending member (e.g. `sampler.root.keep`).
 */
export class SpecError extends Error {
  constructor(message) {
    super(message);
    this.name = "SpecError";
  }
}

/**
 * An answer or a level choice that the spec does not take. The message never repeats the
 * answer's value.
 */
export class AnswerError extends Error {
  constructor(message) {
    super(message);
    this.name = "AnswerError";
  }
}

/**
 * A memo store that cannot be read, written or trusted (bad JSON, wrong shape, a permanent response
 * outside its domain, a file open to other users, another mechanism under the same memo key): the
 * client refuses to report, since drawing new permanent responses would void the eps_perm claim.
 */
export class MemoStoreError extends Error {
  constructor(message) {
    super(message);
    this.name = "MemoStoreError";
  }
}

// ============================================================================ JCS and the id

/**
 * The JSON Canonicalization Scheme text (RFC 8785) of a JSON value: object members sorted by key
 * (UTF-16 code units), no white space, strings with JSON.stringify's minimal escapes and numbers
 * as ECMAScript's Number.prototype.toString writes them (`1.0` is `1`, `-0` is `0`, `1e21` is
 * `1e+21`).
 *
 * @param {*} value A JSON value: null, boolean, finite number, string, array or plain object.
 * @returns {string} The canonical text.
 * @throws {TypeError} For values with no JSON form (NaN, Infinity, undefined, functions, BigInt).
 */
export function canonicalJSON(value) {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`${value} has no JSON form`);
      return JSON.stringify(value); // -0 -> "0"; shortest round-trip digits
    case "string":
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) return "[" + value.map(canonicalJSON).join(",") + "]";
      const keys = Object.keys(value).sort(); // default sort: UTF-16 code units
      return "{" + keys.map((k) => JSON.stringify(k) + ":" + canonicalJSON(value[k])).join(",") + "}";
    }
    default:
      throw new TypeError(`no JSON form for a ${typeof value}`);
  }
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/**
 * The SHA-256 of the UTF-8 bytes of a string, as 64 lower-case hex digits
 * (crypto.subtle.digest: browsers and Node >= 20).
 *
 * @param {string} text
 * @returns {Promise<string>}
 */
export async function sha256Hex(text) {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  let out = "";
  for (const byte of new Uint8Array(digest)) out += HEX[byte];
  return out;
}

/**
 * A spec's content id (docs/wire-format.md §1.1): the first 32 hex digits of the SHA-256 of the
 * UTF-8 bytes of the JCS text of the spec without its `id` member.
 *
 * @param {object} specObject The spec's JSON object (its `id`, if any, is left out).
 * @returns {Promise<string>} 32 lower-case hex digits.
 */
export async function specId(specObject) {
  const body = {};
  for (const k of Object.keys(specObject)) if (k !== "id") body[k] = specObject[k];
  return (await sha256Hex(canonicalJSON(body))).slice(0, 32);
}

// ============================================================================ base64

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64_INDEX = new Int16Array(128).fill(-1);
for (let i = 0; i < 64; i++) B64_INDEX[B64.charCodeAt(i)] = i;

/**
 * Standard base64 (RFC 4648 §4) with `=` padding.
 *
 * @param {Uint8Array} bytes
 * @returns {string}
 */
export function base64Encode(bytes) {
  let out = "";
  const n = bytes.length;
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += B64[v >> 18] + B64[(v >> 12) & 63] + B64[(v >> 6) & 63] + B64[v & 63];
  }
  if (i + 1 === n) {
    const v = bytes[i] << 16;
    out += B64[v >> 18] + B64[(v >> 12) & 63] + "==";
  } else if (i + 2 === n) {
    const v = (bytes[i] << 16) | (bytes[i + 1] << 8);
    out += B64[v >> 18] + B64[(v >> 12) & 63] + B64[(v >> 6) & 63] + "=";
  }
  return out;
}

/**
 * Strict standard base64 decoding (RFC 4648 §4): the length a multiple of 4, `=` only as final
 * padding, no other characters, and the unused bits of the last symbol zero (canonical text).
 *
 * @param {string} text
 * @returns {Uint8Array}
 * @throws {Error} On any text that is not canonical base64.
 */
export function base64Decode(text) {
  if (typeof text !== "string" || text.length % 4 !== 0) throw new Error("bad base64: the length must be a multiple of 4");
  const pad = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const n = (text.length / 4) * 3 - pad;
  const out = new Uint8Array(n);
  const symbols = text.length - pad;
  let acc = 0;
  let bits = 0;
  let j = 0;
  for (let i = 0; i < symbols; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? B64_INDEX[c] : -1;
    if (v < 0) throw new Error(`bad base64: unexpected character at ${i}`);
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[j++] = (acc >> bits) & 255;
    }
  }
  if (bits && (acc & ((1 << bits) - 1)) !== 0) throw new Error("bad base64: non-zero unused bits");
  return out;
}

// ============================================================================ exact arithmetic

/**
 * A finite binary64 number >= 0 as the exact fraction [numerator, denominator] of BigInts (the
 * denominator a power of two).
 */
function exactFraction(x) {
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
function logRatio(num, den) {
  if (den === 0n) return Infinity;
  return bigLn(num) - bigLn(den);
}

/** a/b > c/d for fractions with positive denominators. */
const fracGreater = (a, b) => a[0] * b[1] > b[0] * a[1];

/** Python's format(x, ".{prec}g"). */
function fmtG(x, prec = 6) {
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

// ============================================================================ parsing nodes

const repr = (v) => {
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s.length > 60 ? s.slice(0, 57) + "..." : s;
  } catch {
    return String(v);
  }
};

function checkInt(value, path, lo, hi) {
  if (typeof value !== "number" || !Number.isInteger(value)) throw new SpecError(`${path} must be an integer, got ${repr(value)}`);
  if (value < lo || value > hi) throw new SpecError(`${path} = ${value} is outside [${lo}, ${hi}]`);
  return value;
}

function checkInts(value, path, n, lo, hi) {
  if (!Array.isArray(value) || value.length !== n) throw new SpecError(`${path} must be a list of ${n} integers`);
  return value.map((v, i) => checkInt(v, `${path}[${i}]`, lo, hi));
}

function checkBudget(value, path, allowInf) {
  if (value === "inf" && allowInf) return Infinity;
  if (typeof value !== "number" || !Number.isFinite(value) || !(value > 0)) {
    throw new SpecError(`${path} must be a budget > 0${allowInf ? ' or "inf"' : ""}, got ${repr(value)}`);
  }
  return value;
}

function checkBudgets(value, path, n, allowInf) {
  if (!Array.isArray(value) || value.length !== n) throw new SpecError(`${path} must be a list of ${n} budgets`);
  return value.map((v, i) => checkBudget(v, `${path}[${i}]`, allowInf));
}

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

function checkKeys(obj, path, required, optional = []) {
  if (!isObject(obj)) throw new SpecError(`${path} must be an object`);
  const keys = Object.keys(obj);
  const missing = required.filter((k) => !keys.includes(k)).sort();
  const extra = keys.filter((k) => !required.includes(k) && !optional.includes(k)).sort();
  if (missing.length) throw new SpecError(`${path} lacks ${repr(missing)}`);
  if (extra.length) throw new SpecError(`${path} has unknown members ${repr(extra)}`);
}

function parseDirect(obj, path) {
  checkKeys(obj, path, ["kind", "d", "keep", "weights", "notion", "epsilons"]);
  const d = checkInt(obj.d, `${path}.d`, 2, 2 ** 31);
  const keep = checkInt(obj.keep, `${path}.keep`, 1, GRID);
  const weights = checkInts(obj.weights, `${path}.weights`, d, 0, GRID);
  const total = weights.reduce((s, w) => s + w, keep); // exact up to 2^53; partial sums never decrease, so == 2^32 is exact
  if (total !== GRID) throw new SpecError(`${path}: keep + sum(weights) = ${total} must be 2**${GRID_BITS} = ${GRID}`);
  if (!DIRECT_NOTIONS.includes(obj.notion)) {
    throw new SpecError(`${path}.notion must be one of ${repr(DIRECT_NOTIONS)}, got ${repr(obj.notion)}`);
  }
  const epsilons = checkBudgets(obj.epsilons, `${path}.epsilons`, d, true);
  return { kind: "direct", d, keep, weights, notion: obj.notion, epsilons, ...directTables(d, weights) };
}

function parseUnary(obj, path) {
  checkKeys(obj, path, ["kind", "d", "a", "b", "notion", "epsilons"]);
  const d = checkInt(obj.d, `${path}.d`, 2, 2 ** 24);
  const a = checkInts(obj.a, `${path}.a`, d, 1, GRID - 1);
  const b = checkInts(obj.b, `${path}.b`, d, 1, GRID - 1);
  const bad = [];
  for (let k = 0; k < d; k++) if (!(b[k] < a[k])) bad.push(k);
  if (bad.length) throw new SpecError(`${path}: need b[k] < a[k] for every bit; not so at ${repr(bad.slice(0, 5))}`);
  if (!UNARY_NOTIONS.includes(obj.notion)) {
    throw new SpecError(`${path}.notion must be one of ${repr(UNARY_NOTIONS)}, got ${repr(obj.notion)}`);
  }
  const epsilons = checkBudgets(obj.epsilons, `${path}.epsilons`, d, false);
  return {
    kind: "unary",
    d,
    a,
    b,
    notion: obj.notion,
    epsilons,
    ta: Uint32Array.from(a),
    tb: Uint32Array.from(b),
    nbytes: (d + 7) >> 3,
  };
}

function parsePadding(obj, path) {
  checkKeys(obj, path, ["kind", "d", "ell", "inner"]);
  const d = checkInt(obj.d, `${path}.d`, 1, 2 ** 24);
  const ell = checkInt(obj.ell, `${path}.ell`, 1, 2 ** 24);
  const inner = parseNode(obj.inner, `${path}.inner`);
  if (inner.kind !== "unary" || inner.d !== d + ell) {
    throw new SpecError(`${path}.inner must be a unary node over d + ell = ${d + ell} items`);
  }
  return { kind: "padding", d, ell, inner };
}

function parseLeveled(obj, path) {
  checkKeys(obj, path, ["kind", "d", "levels", "items", "level_report"], ["level_sampler", "level_epsilon"]);
  const raw = obj.levels;
  if (!Array.isArray(raw) || raw.length === 0) throw new SpecError(`${path}.levels must be a non-empty list of budgets`);
  const levels = checkBudgets(raw, `${path}.levels`, raw.length, false);
  const T = levels.length;
  if (!Array.isArray(obj.items) || obj.items.length !== T) {
    throw new SpecError(`${path}.items must hold one node per level (${T})`);
  }
  const items = obj.items.map((o, i) => parseNode(o, `${path}.items[${i}]`));
  if (items.some((n) => n.kind !== "direct" && n.kind !== "unary")) {
    throw new SpecError(`${path}.items must be direct or unary nodes`);
  }
  const d = checkInt(obj.d, `${path}.d`, 2, Math.min(...items.map((n) => n.d)));
  const mode = obj.level_report;
  if (!LEVEL_REPORTS.includes(mode)) {
    throw new SpecError(`${path}.level_report must be one of ${repr(LEVEL_REPORTS)}, got ${repr(mode)}`);
  }
  if (mode !== "clear" && new Set(items.map((n) => `${n.kind}/${n.d}`)).size > 1) {
    throw new SpecError(`${path}: with the level ${mode}, every level's node must have the same kind and size`);
  }
  if (["direct", "unary"].some((k) => new Set(items.filter((n) => n.kind === k).map((n) => n.d)).size > 1)) {
    throw new SpecError(`${path}: the levels' nodes of one kind must have the same size (one payload column each)`);
  }
  let levelSampler = null;
  if (mode === "perturbed") {
    if (!("level_sampler" in obj)) throw new SpecError(`${path} needs a level_sampler to perturb the level`);
    const node = parseNode(obj.level_sampler, `${path}.level_sampler`);
    if (node.kind !== "direct" || node.d !== T) {
      throw new SpecError(`${path}.level_sampler must be a direct node over the ${T} levels`);
    }
    levelSampler = node;
  } else if ("level_sampler" in obj) {
    throw new SpecError(`${path}.level_sampler is only for a perturbed level`);
  }
  let levelEpsilon = null;
  if (mode === "clear") {
    if ("level_epsilon" in obj) throw new SpecError(`${path}.level_epsilon makes no sense for a level sent in the clear`);
  } else {
    if (!("level_epsilon" in obj)) throw new SpecError(`${path} must state level_epsilon, the protection of the ${mode} level`);
    levelEpsilon = checkBudget(obj.level_epsilon, `${path}.level_epsilon`, true);
  }
  items.forEach((node, i) => {
    if (node.epsilons.some((b) => b !== Infinity && b !== levels[i])) {
      throw new SpecError(`${path}.items[${i}] must claim the level's budget ${fmtG(levels[i], 17)} for every item`);
    }
  });
  return { kind: "leveled", d, levels, items, levelReport: mode, levelSampler, levelEpsilon };
}

function parseAttributes(obj, path) {
  checkKeys(obj, path, ["kind", "parts"]);
  if (!Array.isArray(obj.parts) || obj.parts.length === 0) {
    throw new SpecError(`${path}.parts must be a non-empty list of nodes`);
  }
  const parts = obj.parts.map((o, i) => parseNode(o, `${path}.parts[${i}]`));
  if (parts.some((n) => n.kind === "attributes" || n.kind === "padding" || n.kind === "memo")) {
    throw new SpecError(`${path}.parts must be direct, unary or leveled nodes`);
  }
  return { kind: "attributes", parts };
}

/** A direct response's sampling tables (cumulative weights; the common weight if all are equal). */
function directTables(d, weights) {
  const cum = new Float64Array(d);
  let s = 0;
  for (let y = 0; y < d; y++) cum[y] = s += weights[y];
  return { cum, uniform: weights.every((w) => w === weights[0]) ? weights[0] : 0 };
}

function parseMemo(obj, path) {
  checkKeys(obj, path, ["kind", "d", "permanent", "instantaneous", "notion", "epsilons"]);
  const permanent = parseNode(obj.permanent, `${path}.permanent`);
  if (permanent.kind !== "direct" && permanent.kind !== "unary") throw new SpecError(`${path}.permanent must be a direct or unary node`);
  const d = checkInt(obj.d, `${path}.d`, permanent.d, permanent.d);
  const where = `${path}.instantaneous`;
  const raw = obj.instantaneous;
  let irr;
  if (permanent.kind === "direct") {
    checkKeys(raw, where, ["keep", "weights"]);
    const keep = checkInt(raw.keep, `${where}.keep`, 1, GRID);
    const weights = checkInts(raw.weights, `${where}.weights`, d, 0, GRID);
    const total = weights.reduce((s, w) => s + w, keep);
    if (total !== GRID) throw new SpecError(`${where}: keep + sum(weights) = ${total} must be 2**${GRID_BITS} = ${GRID}`);
    irr = { d, keep, weights, ...directTables(d, weights) };
  } else {
    checkKeys(raw, where, ["a", "b"]);
    const a = checkInts(raw.a, `${where}.a`, d, 1, GRID - 1);
    const b = checkInts(raw.b, `${where}.b`, d, 1, GRID - 1);
    const bad = [];
    for (let k = 0; k < d; k++) if (!(b[k] < a[k])) bad.push(k);
    if (bad.length) throw new SpecError(`${where}: need b[k] < a[k] for every bit; not so at ${repr(bad.slice(0, 5))}`);
    irr = { d, a, b, ta: Uint32Array.from(a), tb: Uint32Array.from(b), nbytes: (d + 7) >> 3 };
  }
  const notions = permanent.kind === "direct" ? DIRECT_NOTIONS : UNARY_NOTIONS;
  if (!notions.includes(obj.notion)) throw new SpecError(`${path}.notion must be one of ${repr(notions)}, got ${repr(obj.notion)}`);
  const epsilons = checkBudgets(obj.epsilons, `${path}.epsilons`, d, permanent.kind === "direct");
  return { kind: "memo", d, permanent, instantaneous: irr, notion: obj.notion, epsilons };
}

const PARSERS = {
  memo: parseMemo,
  direct: parseDirect,
  unary: parseUnary,
  padding: parsePadding,
  leveled: parseLeveled,
  attributes: parseAttributes,
};

function parseNode(obj, path = "sampler.root") {
  if (!isObject(obj) || !Object.hasOwn(PARSERS, obj.kind)) {
    const kind = isObject(obj) ? obj.kind : undefined;
    throw new SpecError(`${path} must be a node with kind one of ${repr(KINDS)}, got ${kind === undefined ? "none" : repr(kind)}`);
  }
  return PARSERS[obj.kind](obj, path);
}

function parseSampler(sampler) {
  if (!isObject(sampler) || Object.keys(sampler).sort().join() !== "grid_bits,root") {
    throw new SpecError("sampler must be an object with exactly 'grid_bits' and 'root'");
  }
  if (sampler.grid_bits !== GRID_BITS) throw new SpecError(`sampler.grid_bits must be ${GRID_BITS}, got ${repr(sampler.grid_bits)}`);
  return parseNode(sampler.root);
}

/** A `memo` member exactly when the sampler is memoized: {"key": a string of 1 to 256 characters}. */
function checkMemo(root, memo) {
  if (root.kind !== "memo") {
    if (memo !== undefined) throw new SpecError("the spec has a memo member but its sampler is not memoized");
    return;
  }
  if (memo === undefined) throw new SpecError("the sampler is memoized: the spec must state its memo key ({'memo': {'key': ...}})");
  if (!isObject(memo) || Object.keys(memo).join() !== "key") throw new SpecError("memo must be an object with exactly 'key'");
  if (typeof memo.key !== "string" || memo.key.length === 0 || [...memo.key].length > MEMO_KEY_MAX) {
    throw new SpecError(`memo.key must be a string of 1 to ${MEMO_KEY_MAX} characters, got ${repr(memo.key)}`);
  }
}

function checkLabels(value, path) {
  if (!Array.isArray(value) || value.length < 2 || !value.every((v) => typeof v === "string")) {
    throw new SpecError(`${path} must be a list of at least 2 strings`);
  }
  const seen = new Set();
  const dup = [];
  for (const v of value) {
    if (seen.has(v)) dup.push(v);
    seen.add(v);
  }
  if (dup.length) throw new SpecError(`${path} has duplicate labels: ${repr(dup.slice(0, 5))}`);
  return value;
}

function checkAnswers(root, labels, question) {
  if (root.kind === "attributes") {
    const P = root.parts.length;
    if (!Array.isArray(labels) || labels.length !== P) throw new SpecError(`labels must hold one list per attribute (${P})`);
    if (!Array.isArray(question) || question.length !== P || !question.every((q) => typeof q === "string")) {
      throw new SpecError(`question must hold one question per attribute (${P})`);
    }
    root.parts.forEach((part, i) => {
      const n = checkLabels(labels[i], `labels[${i}]`).length;
      if (n !== part.d) throw new SpecError(`labels[${i}] has ${n} answers but attribute ${i} takes ${part.d}`);
    });
    return;
  }
  if (typeof question !== "string") throw new SpecError("question must be a string");
  const n = checkLabels(labels, "labels").length;
  if (n !== root.d) throw new SpecError(`labels has ${n} answers but the sampler takes ${root.d}`);
}

// ============================================================================ verify

function groups(keys) {
  const out = new Map();
  keys.forEach((k, i) => {
    if (!out.has(k)) out.set(k, []);
    out.get(k).push(i);
  });
  return out;
}

const who = (items) => `item ${items[0]}` + (items.length > 1 ? ` (+${items.length - 1})` : "");

/**
 * The claims of a direct channel Pr(y | x) = (weights[y] + keep [x = y]) / G (the grid cancels: a
 * node's 2^32, or the 2^64 one-report channel of a memo node), one row per group of outputs of
 * equal (weight, budget): (weights[y] + keep) / weights[y] <= e^eps_y. Numbers or BigInts.
 */
function outputRows(keep, weights, epsilons, part) {
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

const directRows = (node, part) => outputRows(node.keep, node.weights, node.epsilons, part);
const unaryRows = (node, part) => pairRows(node.a, node.b, node.epsilons, node.notion, GRID_N, part);

/**
 * The pair claims of independent bits, bit k set w.p. a[k] / grid for item k and b[k] / grid for
 * another (Gu et al. eq. 5), one row per pair of groups of equal (a, b, budget). `grid` a BigInt:
 * 2^32 for a node, 2^64 for the one-report channel of a memo node.
 */
function pairRows(aIn, bIn, epsilons, notion, grid, part) {
  const a = aIn.map(BigInt);
  const b = bIn.map(BigInt);
  const keys = a.map((v, k) => `${v}|${b[k]}|${epsilons[k]}`);
  const gs = [...groups(keys).values()];
  const epsMin = Math.min(...epsilons);
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

/** The larger of a bit's ratios of being 1 and 0 under probabilities p vs p2 (over 2^32). */
function bitRatio(p, p2) {
  const one = [BigInt(p), BigInt(p2)];
  const zero = [GRID_N - BigInt(p), GRID_N - BigInt(p2)];
  return fracGreater(zero, one) ? zero : one;
}

/** Largest Pr(o | x, node) / Pr(o | x, other) over items x and outputs o; null if infinite. */
function itemRatio(node, other) {
  if (node.kind === "direct" && other.kind === "direct") {
    let best = [0n, 1n];
    const seen = new Set();
    for (let y = 0; y < node.d; y++) {
      const [w, k, w2, k2] = [node.weights[y], node.keep, other.weights[y], other.keep];
      const key = `${w}|${w2}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if ((w > 0 && w2 === 0) || (w + k > 0 && w2 + k2 === 0)) return null;
      const cands = [[BigInt(w + k), BigInt(w2 + k2)]];
      if (w2 > 0) cands.push([BigInt(w), BigInt(w2)]);
      for (const c of cands) if (fracGreater(c, best)) best = c;
    }
    return best;
  }
  // unary: the product over bits of the larger ratio, the own bit x taking a instead of b
  const counts = new Map();
  const rb = [];
  for (let k = 0; k < node.d; k++) {
    const key = `${node.b[k]}|${other.b[k]}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    rb.push(bitRatio(node.b[k], other.b[k]));
  }
  let total = [1n, 1n];
  for (const [key, count] of counts) {
    const [b, b2] = key.split("|").map(Number);
    const r = bitRatio(b, b2);
    const c = BigInt(count);
    total = [total[0] * r[0] ** c, total[1] * r[1] ** c];
  }
  let own = null;
  for (let k = 0; k < node.d; k++) {
    const ra = bitRatio(node.a[k], other.a[k]);
    const cand = [ra[0] * rb[k][1], ra[1] * rb[k][0]];
    if (own === null || fracGreater(cand, own)) own = cand;
  }
  return [total[0] * own[0], total[1] * own[1]];
}

/**
 * The exact largest Pr(report | x, t) / Pr(report | x, t') over items, outputs and levels
 * t != t' of a leveled node, as [num, den] BigInts ([1n, 0n] when infinite): the item report's
 * ratio times, when the level is perturbed, the level report's max_l pi(l|t)/pi(l|t') (a hidden
 * level has no level report: factor 1). docs/wire-format.md §3.4.
 */
function levelRatio(node) {
  let best = [1n, 1n];
  const T = node.items.length;
  for (let t = 0; t < T; t++) {
    for (let u = 0; u < T; u++) {
      if (t === u) continue;
      const item = itemRatio(node.items[t], node.items[u]);
      if (item === null) return [1n, 0n];
      let lv = [1n, 1n];
      const s = node.levelSampler;
      if (s !== null) {
        let m = null;
        for (let y = 0; y < s.d; y++) {
          const c = BigInt(s.weights[y] + (y === t ? s.keep : 0));
          const c2 = BigInt(s.weights[y] + (y === u ? s.keep : 0));
          if (c2 === 0n) {
            if (c > 0n) return [1n, 0n];
            continue;
          }
          if (m === null || fracGreater([c, c2], m)) m = [c, c2];
        }
        lv = m;
      }
      const cand = [item[0] * lv[0], item[1] * lv[1]];
      if (fracGreater(cand, best)) best = cand;
    }
  }
  return best;
}

/**
 * The one-report channel of a memo node over 2^64 (docs/wire-format.md §2, §3.6): [K, W] of a direct
 * chain (Pr(y | x) 2^64 = K [x = y] + W[y]), [p*, q*] of a unary one; BigInts.
 */
function chained(node) {
  const [p, irr] = [node.permanent, node.instantaneous];
  if (p.kind === "direct") {
    const [k1, k2] = [BigInt(p.keep), BigInt(irr.keep)];
    return [k1 * k2, p.weights.map((w1, y) => GRID_N * BigInt(irr.weights[y]) + k2 * BigInt(w1))];
  }
  const through = (p1) => p1.map((v, k) => BigInt(v) * BigInt(irr.a[k]) + (GRID_N - BigInt(v)) * BigInt(irr.b[k]));
  return [through(p.a), through(p.b)];
}

function verifyNode(node, part) {
  switch (node.kind) {
    case "memo": {
      const [rows] = verifyNode(node.permanent, `${part} permanent (any number of reports of one value)`);
      const [first, second] = chained(node);
      const one = `${part} one report`;
      if (node.permanent.kind === "direct") rows.push(...outputRows(first, second, node.epsilons, one));
      else rows.push(...pairRows(first, second, node.epsilons, node.notion, GRID_N * GRID_N, one));
      return [rows, Math.max(...node.epsilons)];
    }
    case "direct":
      return [directRows(node, part), Math.max(...node.epsilons)];
    case "unary":
      return [unaryRows(node, part), Math.max(...node.epsilons)];
    case "padding":
      return verifyNode(node.inner, `${part}: sampled item`);
    case "leveled": {
      const rows = [];
      node.items.forEach((item, i) => {
        rows.push(...verifyNode(item, `${part} level ${i} (eps=${fmtG(node.levels[i])})`)[0]);
      });
      let total = Math.max(...node.levels);
      if (node.levelSampler !== null) {
        const [r, eP] = verifyNode(node.levelSampler, `${part} level report`);
        rows.push(...r);
        total += eP;
      }
      if (node.levelReport !== "clear" && node.levels.length > 1) {
        const [num, den] = levelRatio(node);
        const claimed = node.levelEpsilon ?? 0;
        rows.push({
          part: `${part} the level itself`,
          subject: "any item, levels t vs t'",
          claimed,
          realised: logRatio(num, den),
          holds: ratioWithin(num, den, claimed),
        });
      }
      return [rows, total];
    }
    case "attributes": {
      const rows = [];
      let total = 0;
      node.parts.forEach((p, i) => {
        const [r, e] = verifyNode(p, `attribute ${i}`);
        rows.push(...r);
        total += e;
      });
      return [rows, total];
    }
    default:
      throw new SpecError(`not a sampler node: ${node.kind}`);
  }
}

const PROGRAMS = new WeakMap(); // loaded spec -> {root, id, labelIndex}

/**
 * Check every privacy claim of a spec's sampler exactly (docs/wire-format.md §3): direct outputs'
 * `(weights[y] + keep) / weights[y] <= e^eps_y`; unary pairs `a_i (2^32 - b_j) / (b_i (2^32 - a_j))
 * <= e^c(i, j)` (LDP, MinID-LDP, AvgID-LDP); padding's inner node; leveled nodes' items, level
 * report and `level_epsilon` (the level's protection by the whole report); attributes' parts.
 * Ratios are BigInt rationals, budgets exact binary64 rationals, decided against rigorous bounds of
 * e^eps. The format, labels and sampler structure are checked too (SpecError); the id is not
 * (that needs a hash: see {@link loadSpec}, which also runs these checks and refuses a spec whose
 * claim fails).
 *
 * @param {object|string} spec A spec returned by loadSpec, or a spec's JSON object or text.
 * @returns {{holds: boolean, rows: Array<{part: string, subject: string, claimed: number,
 *   realised: number, holds: boolean}>, ldp_epsilon: number}} One row per claim (unary pairs
 *   grouped by equal parameters); `realised` is ln of the exact ratio, as a float for display
 *   (Infinity if unbounded); `ldp_epsilon` the whole report's LDP budget implied by the claims.
 * @throws {SpecError} If the sampler is malformed.
 */
export function verify(spec) {
  let root;
  const prog = PROGRAMS.get(spec);
  if (prog) {
    root = prog.root;
  } else {
    let data = spec;
    if (typeof spec === "string") {
      try {
        data = JSON.parse(spec);
      } catch (exc) {
        throw new SpecError(`the spec is not valid JSON: ${exc.message}`);
      }
    }
    if (!isObject(data)) throw new SpecError("a spec must be a JSON object");
    if (data.format !== SPEC_FORMAT) throw new SpecError(`unknown spec format ${repr(data.format)}; this client reads ${repr(SPEC_FORMAT)}`);
    root = parseSampler(data.sampler);
    checkAnswers(root, data.labels, data.question);
    checkMemo(root, data.memo);
    if (Object.hasOwn(data, "caps")) checkSpecCaps(data.caps);
  }
  const [rows, eps] = verifyNode(root, "root");
  return { holds: rows.every((r) => r.holds), rows, ldp_epsilon: eps };
}

/**
 * The optional `caps` member, when present: {"day": eps, "total": eps, "rounds": n}, one or more:
 * day and total positive finite numbers (the most one device may spend on the spec's family), rounds
 * a positive (safe) integer (the most reports one device sends on the family: one per round of a
 * recurring campaign); pldp-ledger.mjs enforces them. The messages are Python's (pldp.deploy.spec).
 */
function checkSpecCaps(caps) {
  if (!isObject(caps) || Object.keys(caps).length === 0) throw new SpecError("caps must be an object with one or more of 'day', 'total' and 'rounds'");
  const extra = Object.keys(caps).filter((k) => !["day", "total", "rounds"].includes(k)).sort();
  if (extra.length) throw new SpecError(`caps has unknown members ${extra.join(", ")}; a spec's caps are 'day', 'total' and 'rounds'`);
  for (const name of ["day", "total"]) {
    const v = caps[name];
    if (Object.hasOwn(caps, name) && !(typeof v === "number" && Number.isFinite(v) && v > 0)) {
      throw new SpecError(`caps.${name} must be a positive finite number (an epsilon)`);
    }
  }
  if (Object.hasOwn(caps, "rounds") && !(Number.isSafeInteger(caps.rounds) && caps.rounds >= 1)) {
    throw new SpecError("caps.rounds must be a positive integer (the most reports one device sends)");
  }
}

// ============================================================================ loadSpec

function deepFreeze(v) {
  if (typeof v === "object" && v !== null) {
    for (const k of Object.keys(v)) deepFreeze(v[k]);
    Object.freeze(v);
  }
  return v;
}

/**
 * Read and check a campaign spec (`pldp.spec/1`) before any report is made: its format and
 * members, its id against its content (JCS + SHA-256), its labels (distinct strings, one list per
 * attribute for MPLDP), the sampler's structure (grid_bits 32, every node's kind, lengths,
 * integer thresholds on the grid) and every privacy claim ({@link verify}).
 *
 * @param {string|object} jsonTextOrObject The spec's JSON text or parsed object (copied).
 * @returns {Promise<object>} The spec as a deeply frozen JSON object, accepted by {@link Client}.
 * @throws {SpecError} Naming the first problem found.
 */
export async function loadSpec(jsonTextOrObject) {
  let data = jsonTextOrObject;
  if (typeof data === "string") {
    try {
      data = JSON.parse(data);
    } catch (exc) {
      throw new SpecError(`the spec is not valid JSON: ${exc.message}`);
    }
  } else {
    if (!isObject(data)) throw new SpecError("a spec must be a JSON object");
    try {
      data = JSON.parse(canonicalJSON(data)); // a private copy, JSON values only
    } catch (exc) {
      throw new SpecError(`the spec is not JSON: ${exc.message}`);
    }
  }
  if (!isObject(data)) throw new SpecError("a spec must be a JSON object");
  if (data.format !== SPEC_FORMAT) throw new SpecError(`unknown spec format ${repr(data.format)}; this client reads ${repr(SPEC_FORMAT)}`);
  const members = ["format", "id", "question", "labels", "oracle", "sampler"];
  const missing = members.filter((k) => !Object.hasOwn(data, k)).sort();
  if (missing.length) throw new SpecError(`the spec lacks ${repr(missing)}`);
  const extra = Object.keys(data).filter((k) => !members.includes(k) && k !== "memo" && k !== "caps").sort();
  if (extra.length) throw new SpecError(`the spec has unknown members ${repr(extra)}`);
  if (Object.hasOwn(data, "caps")) checkSpecCaps(data.caps);
  if (typeof data.id !== "string" || !/^[0-9a-f]{32}$/.test(data.id)) {
    throw new SpecError(`the spec id must be 32 lower-case hex digits, got ${repr(data.id)}`);
  }
  const actual = await specId(data);
  if (actual !== data.id) {
    throw new SpecError(`the spec id ${data.id} does not match its content (which hashes to ${actual}): it was altered`);
  }
  const root = parseSampler(data.sampler);
  checkAnswers(root, data.labels, data.question);
  checkMemo(root, data.memo);
  const [rows] = verifyNode(root, "root");
  const failures = rows.filter((r) => !r.holds);
  if (failures.length) {
    const bad = failures[0];
    throw new SpecError(
      `the spec's privacy claim fails: ${bad.part}, ${bad.subject}: realised epsilon ${fmtG(bad.realised, 9)} > ` +
        `claimed ${fmtG(bad.claimed, 9)} (${failures.length} failing check(s))`,
    );
  }
  const lists = root.kind === "attributes" ? data.labels : [data.labels];
  const labelIndex = lists.map((l) => new Map(l.map((lab, i) => [lab, i])));
  let memo = null;
  if (root.kind === "memo") {
    const text = canonicalJSON({ labels: data.labels, permanent: data.sampler.root.permanent });
    memo = { key: data.memo.key, fingerprint: (await sha256Hex(text)).slice(0, 32) };
  }
  const spec = deepFreeze(data);
  PROGRAMS.set(spec, { root, id: data.id, labelIndex, memo });
  return spec;
}

// ============================================================================ the memo store

const HEX32 = /^[0-9a-f]{32}$/;
const INDEX = /^(0|[1-9][0-9]*)$/;

function memoBad(where, why) {
  return new MemoStoreError(
    `the memo store ${where} ${why}; refusing to report (drawing new permanent responses would void the eps_perm ` +
      "claim). Repair or restore it, or move it away to start an empty memo.",
  );
}

/** Whether z is a permanent response of a node of this kind over d items (canonical form). */
function memoResponseOk(z, kind, d) {
  if (kind === "direct") return Number.isInteger(z) && z >= 0 && z < d;
  if (typeof z !== "string") return false;
  let raw;
  try {
    raw = base64Decode(z);
  } catch {
    return false;
  }
  const nbytes = (d + 7) >> 3;
  return raw.length === nbytes && (raw[nbytes - 1] & (0xff >> (d - 8 * nbytes + 8))) === 0;
}

/** The memos of a store's text (null: a missing store, empty), every member checked. */
function readMemos(text, where) {
  if (text === null || text === undefined) return {};
  if (typeof text !== "string") throw memoBad(where, "does not hold JSON text");
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (exc) {
    throw memoBad(where, `is not valid JSON (${exc.message})`);
  }
  if (!isObject(doc) || Object.keys(doc).sort().join() !== "format,memos" || doc.format !== MEMO_FORMAT) {
    throw memoBad(where, `is not a ${MEMO_FORMAT} object with exactly 'format' and 'memos'`);
  }
  if (!isObject(doc.memos)) throw memoBad(where, "has memos that are not an object");
  for (const [key, entry] of Object.entries(doc.memos)) {
    const k = repr(key);
    if (!isObject(entry) || Object.keys(entry).sort().join() !== "d,kind,permanent,responses") {
      throw memoBad(where, `has a memo ${k} without exactly 'permanent', 'kind', 'd' and 'responses'`);
    }
    const { d, kind, responses } = entry;
    if (typeof entry.permanent !== "string" || !HEX32.test(entry.permanent)) {
      throw memoBad(where, `has a memo ${k} whose permanent fingerprint is not 32 hex digits`);
    }
    if (!["direct", "unary"].includes(kind) || !Number.isInteger(d) || d < 2) throw memoBad(where, `has a memo ${k} with a bad kind or size`);
    if (!isObject(responses)) throw memoBad(where, `has a memo ${k} whose responses are not an object`);
    for (const [value, z] of Object.entries(responses)) {
      if (!INDEX.test(value) || Number(value) >= d) throw memoBad(where, `has a memo ${k} with a value ${repr(value)} outside 0..${d - 1}`);
      if (!memoResponseOk(z, kind, d)) throw memoBad(where, `has a memo ${k} whose permanent response of value ${value} is outside the domain`);
    }
  }
  return doc.memos;
}

/** The memo text to store (keys sorted at every level, as the Python client writes it). */
function memoText(memos) {
  return canonicalJSON({ format: MEMO_FORMAT, memos });
}

/**
 * Permanent responses kept in memory (tests and simulations): they die with the page or process,
 * and a later one would draw new ones, voiding the eps_perm claim.
 */
export class MemoryMemoStore {
  #text = null;

  /** Run `fn(text, where)` -> {text, result} on the stored text (null if empty); keep the new text. */
  async update(fn) {
    const { text, result } = fn(this.#text, "(in memory)");
    if (text !== null) this.#text = text;
    return result;
  }
}

// ============================================================================ file locks (Node)

/*
 * A file a client rewrites (the memo store, the privacy ledger) is read, changed and written again
 * under an exclusive lock on PATH.lock: the very lock the Python client takes (a POSIX flock(2) on
 * PATH.lock, pldp.devicefiles.file_lock), so that Node and Python processes of one device never
 * lose each other's writes. Node has no flock in its standard library: the lock file is opened
 * here (created with mode 0600, its folder 0700, as Python does) and util-linux's flock command is
 * run on that open file (`flock -x 3`, the descriptor passed to it as its fd 3). flock(2) locks the
 * open file itself, which this process keeps open after the command exits: the lock is held until
 * the descriptor is closed, and dies with the process (a crash frees it).
 *
 * Where no flock command exists (macOS without util-linux, Windows), Node falls back to a lock
 * file created exclusively (O_EXCL) beside it, PATH.lock.excl, holding the holder's pid: it
 * orders the Node processes of the device among themselves, NOT with the Python client's flock
 * (on Windows Python takes no lock either). A PATH.lock.excl left by a process that died is
 * removed by the next one (its pid is not alive); one removed on normal exit by the process.
 */

/** node:fs, node:path and node:child_process, once loaded (Node only). */
let nodeLib = null;

async function loadNodeLib() {
  if (nodeLib === null) {
    const [fs, path, cp] = await Promise.all([import("node:fs"), import("node:path"), import("node:child_process")]);
    nodeLib = { fs, path, cp };
  }
  return nodeLib;
}

/** The O_EXCL lock files this process holds (removed if it exits while holding them). */
const EXCL_HELD = new Set();
let exclCleanup = false;

/** Whether process `pid` is alive (a process of another user counts as alive). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (exc) {
    return exc.code === "EPERM";
  }
}

/**
 * One attempt at the O_EXCL lock `excl`: a release function, or null while another live process
 * holds it (a lock whose holder died is broken on the way).
 */
function tryExcl(fs, excl) {
  try {
    const fd = fs.openSync(excl, "wx", 0o600);
    try {
      fs.writeSync(fd, `${process.pid}\n`);
    } finally {
      fs.closeSync(fd);
    }
    EXCL_HELD.add(excl);
    if (!exclCleanup) {
      exclCleanup = true;
      process.once("exit", () => EXCL_HELD.forEach((f) => fs.rmSync(f, { force: true })));
    }
    return () => {
      EXCL_HELD.delete(excl);
      fs.rmSync(excl, { force: true });
    };
  } catch (exc) {
    if (exc.code !== "EEXIST") throw exc;
  }
  let holder = NaN;
  let age = 0;
  try {
    holder = Number.parseInt(fs.readFileSync(excl, "utf8"), 10);
    age = Date.now() - fs.statSync(excl).mtimeMs;
  } catch {
    return null; // released meanwhile: the next attempt takes it
  }
  const dead = Number.isInteger(holder) ? !alive(holder) : age > 10000; // no pid 10 s on: its writer died
  if (dead) {
    // break it: move it away and check that what moved is the dead holder's (not a new lock)
    const moved = `${excl}.${process.pid}.stale`;
    try {
      fs.renameSync(excl, moved);
      const was = Number.parseInt(fs.readFileSync(moved, "utf8"), 10);
      if (was !== holder && !(Number.isNaN(was) && Number.isNaN(holder))) {
        try {
          fs.linkSync(moved, excl); // a live lock taken meanwhile: put it back
        } catch {
          // taken again meanwhile: its new holder keeps it
        }
      }
      fs.rmSync(moved, { force: true });
    } catch {
      // another process broke it first
    }
  }
  return null;
}

/** Backoff (ms) of the n-th wait for an O_EXCL lock: 1, 2, 4, ... up to 50. */
const exclDelay = (n) => Math.min(50, 2 ** n);

/**
 * How to take the lock on `lockPath` with util-linux flock: a release function, or null where the
 * command is missing. Throws when the lock file cannot be opened or flock fails.
 */
function flockSync(lib, lockPath) {
  const fd = lib.fs.openSync(lockPath, lib.fs.constants.O_RDWR | lib.fs.constants.O_CREAT, 0o600);
  const run = lib.cp.spawnSync("flock", ["-x", "3"], { stdio: ["ignore", "ignore", "pipe", fd] });
  return flockDone(lib, fd, run.error, run.status, run.stderr);
}

async function flockAsync(lib, lockPath) {
  const fd = lib.fs.openSync(lockPath, lib.fs.constants.O_RDWR | lib.fs.constants.O_CREAT, 0o600);
  const [error, status, stderr] = await new Promise((resolve) => {
    let child;
    try {
      child = lib.cp.spawn("flock", ["-x", "3"], { stdio: ["ignore", "ignore", "pipe", fd] });
    } catch (exc) {
      resolve([exc, null, ""]);
      return;
    }
    let err = "";
    child.stderr.on("data", (b) => (err += b));
    child.once("error", (exc) => resolve([exc, null, err]));
    child.once("close", (status) => resolve([null, status, err]));
  });
  return flockDone(lib, fd, error, status, stderr);
}

function flockDone(lib, fd, error, status, stderr) {
  if (error || status !== 0) {
    lib.fs.closeSync(fd);
    if (error?.code === "ENOENT") return null; // no flock command: the O_EXCL fallback
    throw new Error(error ? error.message : `flock failed (${String(stderr).trim() || `exit status ${status}`})`);
  }
  return () => lib.fs.closeSync(fd); // closing the last descriptor of the open file releases the lock
}

/** Where flock is missing, remembered (the O_EXCL fallback from then on). */
let noFlock = false;

/**
 * Node: run `fn()` (which may return a Promise) holding an exclusive lock on `PATH.lock`, the lock
 * the Python client takes (see above: util-linux flock, else an O_EXCL fallback among Node
 * processes). The folder of `path` is made (mode 0700) if missing. Other work of the process goes
 * on while the lock is awaited.
 *
 * @param {string} path The file the lock protects (the lock is `${path}.lock`).
 * @param {function(): *} fn
 * @returns {Promise<*>} What `fn` returns, once the lock is released.
 * @throws {Error} When the lock cannot be taken (the folder or the lock file cannot be made).
 */
export async function withFileLock(path, fn) {
  const lib = await loadNodeLib();
  lib.fs.mkdirSync(lib.path.dirname(path), { recursive: true, mode: 0o700 });
  let release = noFlock ? null : await flockAsync(lib, `${path}.lock`);
  if (release === null) {
    noFlock = true;
    for (let n = 0; (release = tryExcl(lib.fs, `${path}.lock.excl`)) === null; n++) {
      await new Promise((resolve) => setTimeout(resolve, exclDelay(n)));
    }
  }
  try {
    return await fn();
  } finally {
    release();
  }
}

/**
 * {@link withFileLock} for a synchronous `fn`, blocking this thread while the lock is awaited
 * (what the privacy ledger's charge takes: it must stay synchronous in a memo store's update).
 * Needs {@link loadFileLocks} awaited once before.
 *
 * @param {string} path
 * @param {function(): *} fn
 * @returns {*} What `fn` returns.
 */
export function withFileLockSync(path, fn) {
  const lib = nodeLib;
  if (lib === null) throw new TypeError("await loadFileLocks() before withFileLockSync");
  lib.fs.mkdirSync(lib.path.dirname(path), { recursive: true, mode: 0o700 });
  let release = noFlock ? null : flockSync(lib, `${path}.lock`);
  if (release === null) {
    noFlock = true;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let n = 0; (release = tryExcl(lib.fs, `${path}.lock.excl`)) === null; n++) Atomics.wait(pause, 0, 0, exclDelay(n));
  }
  try {
    return fn();
  } finally {
    release();
  }
}

/** Load what the file locks need (Node modules): once, before {@link withFileLockSync}. */
export async function loadFileLocks() {
  await loadNodeLib();
}

const FILE_QUEUES = new Map(); // path -> the promise of its last update (one at a time per path)

/** The default memo file of Node (docs/wire-format.md §6): what the Python client uses. */
async function defaultMemoPath() {
  const { join } = await import("node:path");
  const { homedir } = await import("node:os");
  const env = process.env;
  if (env.PLDP_MEMO_STORE) return env.PLDP_MEMO_STORE;
  let base;
  if (process.platform === "win32") base = env.APPDATA || join(homedir(), "AppData", "Roaming");
  else if (process.platform === "darwin") base = join(homedir(), "Library", "Application Support");
  else base = env.XDG_DATA_HOME || join(homedir(), ".local", "share");
  return join(base, "pldp", "memo.json");
}

/**
 * Node: permanent responses in a JSON file (`pldp.memo/1`, the Python client's format), mode 0600,
 * replaced atomically (a temporary file in the same folder, fsync, rename), each update under the
 * lock the Python client takes ({@link withFileLock}: flock on `PATH.lock`); updates of one path
 * also run one at a time in this process. Default path: `$PLDP_MEMO_STORE`, else `pldp/memo.json` in
 * the user's data directory (`$XDG_DATA_HOME` or `~/.local/share`; macOS `~/Library/Application
 * Support`; Windows `%APPDATA%`).
 */
export class FileMemoStore {
  /** @param {string} [path] */
  constructor(path) {
    this.path = path;
  }

  async #run(fn) {
    const fs = await import("node:fs/promises");
    const { dirname, join } = await import("node:path");
    const path = this.path ?? (await defaultMemoPath());
    let held = false;
    try {
      return await withFileLock(path, () => {
        held = true;
        return this.#locked(fs, dirname(path), join, path, fn);
      });
    } catch (exc) {
      if (held) throw exc;
      throw memoBad(path, `cannot be locked (${exc.code ?? exc.message})`);
    }
  }

  /** Read, update and write the file, under its lock. */
  async #locked(fs, dir, join, path, fn) {
    let text = null;
    try {
      const st = await fs.stat(path);
      if (process.platform !== "win32" && st.mode & 0o077) {
        throw memoBad(path, `is open to other users (mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}); chmod 600 it`);
      }
      text = await fs.readFile(path, "utf8");
    } catch (exc) {
      if (exc instanceof MemoStoreError) throw exc;
      if (exc.code !== "ENOENT") throw memoBad(path, `cannot be read (${exc.code ?? exc.message})`);
    }
    const { text: next, result } = fn(text, path);
    if (next !== null) {
      const tmp = join(dir, `.memo-${Date.now()}-${Math.random().toString(16).slice(2)}.tmp`);
      try {
        const fh = await fs.open(tmp, "wx", 0o600);
        try {
          await fh.writeFile(next, "utf8");
          await fh.sync();
        } finally {
          await fh.close();
        }
        await fs.rename(tmp, path);
        if (process.platform !== "win32") {
          const dh = await fs.open(dir, "r");
          await dh.sync().finally(() => dh.close());
        }
      } catch (exc) {
        await fs.rm(tmp, { force: true });
        throw memoBad(path, `cannot be written (${exc.code ?? exc.message})`);
      }
    }
    return result;
  }

  /** Run `fn(text, where)` -> {text, result} on the file's text (null if missing); write the new text. */
  update(fn) {
    const key = this.path ?? "";
    const run = () => this.#run(fn);
    const done = (FILE_QUEUES.get(key) ?? Promise.resolve()).then(run, run);
    FILE_QUEUES.set(key, done.catch(() => undefined));
    return done;
  }
}

/**
 * Browsers: permanent responses in IndexedDB (database `name`, object store `memo`, one record: the
 * `pldp.memo/1` text), read and rewritten in one readwrite transaction (strict durability), so two
 * tabs cannot draw two permanent responses of one value.
 */
export class IndexedDBMemoStore {
  /** @param {string} [name="pldp-memo"] The database's name. */
  constructor(name = "pldp-memo") {
    this.name = name;
  }

  #open() {
    return new Promise((resolve, reject) => {
      const req = globalThis.indexedDB.open(this.name, 1);
      req.onupgradeneeded = () => req.result.createObjectStore("memo");
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(memoBad(`(IndexedDB ${this.name})`, `cannot be opened (${req.error?.message})`));
      req.onblocked = () => reject(memoBad(`(IndexedDB ${this.name})`, "is blocked by another page"));
    });
  }

  /** Run `fn(text, where)` -> {text, result} in one transaction on the stored text (null if none). */
  async update(fn) {
    const where = `(IndexedDB ${this.name})`;
    const db = await this.#open();
    try {
      return await new Promise((resolve, reject) => {
        const tx = db.transaction("memo", "readwrite", { durability: "strict" });
        const store = tx.objectStore("memo");
        let result;
        let failed = null;
        const get = store.get("memo");
        get.onsuccess = () => {
          try {
            const out = fn(get.result === undefined ? null : get.result, where);
            result = out.result;
            if (out.text !== null) store.put(out.text, "memo");
          } catch (exc) {
            failed = exc;
            tx.abort();
          }
        };
        tx.oncomplete = () => resolve(result);
        tx.onabort = tx.onerror = () => reject(failed ?? memoBad(where, `cannot be read or written (${tx.error?.message})`));
      });
    } finally {
      db.close();
    }
  }
}

/** The platform's memo store: IndexedDB in a browser, the default file in Node. */
export function defaultMemoStore() {
  if (globalThis.indexedDB) return new IndexedDBMemoStore();
  if (globalThis.process?.versions?.node) return new FileMemoStore();
  throw new MemoStoreError("this platform has no memo store (no IndexedDB, not Node): give one as {store}");
}

// ============================================================================ the client

/** n uniform words from the platform CSPRNG. */
function cryptoWords(n) {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i += CHUNK_WORDS) globalThis.crypto.getRandomValues(out.subarray(i, Math.min(n, i + CHUNK_WORDS)));
  return out;
}

/** Words a node draws when no rejection happens. */
function wordCount(node, input) {
  switch (node.kind) {
    case "direct":
      return 1;
    case "unary":
      return node.d;
    case "padding":
      return 2 + node.inner.d;
    case "leveled": {
      const item = node.items[input.t];
      return (item.kind === "direct" ? 1 : item.d) + (node.levelSampler !== null ? 1 : 0);
    }
    default: {
      let n = 0;
      node.parts.forEach((p, i) => (n += wordCount(p, input[i])));
      return n;
    }
  }
}

const describe = (v) => (v === null ? "null" : Array.isArray(v) ? "an array" : `a ${typeof v}`);

/**
 * Randomizes answers by a loaded campaign spec: every decision an integer comparison of a uniform
 * 32-bit word with one of the spec's thresholds (docs/wire-format.md §2). Answers are used once
 * and never stored or logged.
 */
export class Client {
  #prog;
  #random;
  #crypto;
  #store = null;
  #spec;
  #ledger;
  #buf = new Uint32Array(0);
  #pos = 0;

  /**
   * @param {object} spec A spec returned by {@link loadSpec} (verified; anything else is refused).
   * @param {{random?: function(number): Uint32Array}} [options] `random(n)` returns n uniform
   *   32-bit words. Default: crypto.getRandomValues, buffered in chunks of 16384 words. Inject a
   *   source only for tests: the words are drawn in the order of the wire format, so two clients
   *   given the same word stream write the same bytes.
   * @param {{update: function}} [options.store] A memoized spec's memo store: {@link FileMemoStore}
   *   (Node), {@link IndexedDBMemoStore} (browsers) or {@link MemoryMemoStore} (tests only).
   *   Default {@link defaultMemoStore}; not used for a spec that is not memoized.
   * @param {{charge: function}} [options.ledger] A privacy ledger (pldp-ledger.mjs): every batch is
   *   charged to it, and refused (LedgerCapError) before any word is drawn if it would go over a cap
   *   (the owner's, or the spec's own caps member). Required for a spec that sets caps (a TypeError
   *   without one: nothing else would keep the spend).
   */
  constructor(spec, { random, store, ledger } = {}) {
    const prog = PROGRAMS.get(spec);
    if (!prog) throw new TypeError("Client needs a spec returned by loadSpec (id and privacy claims verified)");
    if (random !== undefined && typeof random !== "function") throw new TypeError("random must be a function n -> Uint32Array");
    this.#prog = prog;
    this.#crypto = random === undefined;
    this.#random = random ?? cryptoWords;
    this.#spec = spec;
    this.#ledger = ledger ?? null;
    if (spec.caps !== undefined && this.#ledger === null) {
      throw new TypeError(
        "this spec sets caps on what a device may spend or send (its caps member): give the client a ledger that keeps " +
          "the spend (new Client(spec, {ledger: Ledger.browser()}) or await Ledger.file(path) in Node)",
      );
    }
    /** The spec's id. */
    this.specId = prog.id;
    /** The spec's memo key (a memoized spec), else null. */
    this.memoKey = prog.memo?.key ?? null;
    /**
     * How many distinct values of the last report(s) call were new to the memo (each drew its
     * permanent response): what a ledger records as the per-value spend, for display only (its caps
     * are checked against a charge that does not depend on the answers, pldp-ledger.mjs).
     */
    this.lastNewValues = 0;
    /** Those values (item indices, ascending): on the device only, like the memo. */
    this.lastNewItems = [];
    if (prog.memo !== null) {
      if (store !== undefined && (store === null || typeof store.update !== "function")) {
        throw new TypeError("store must be a memo store (an object with update(fn))");
      }
      this.#store = store ?? defaultMemoStore();
    }
  }

  // ------------------------------------------------------------------ words
  /** Make sure n words are buffered from the current position. */
  #ensure(n) {
    const have = this.#buf.length - this.#pos;
    if (have >= n) return;
    const want = this.#crypto ? Math.max(CHUNK_WORDS, n - have) : n - have;
    let more = this.#random(want);
    if (!(more instanceof Uint32Array)) {
      if (!more || typeof more.length !== "number") throw new TypeError("random(n) must return a Uint32Array");
      for (let i = 0; i < more.length; i++) {
        const v = more[i];
        if (!Number.isInteger(v) || v < 0 || v >= GRID) throw new TypeError("random(n) must return 32-bit unsigned words");
      }
      more = Uint32Array.from(more);
    }
    if (more.length !== want) throw new TypeError(`random(${want}) returned ${more.length} words`);
    const buf = new Uint32Array(have + want);
    buf.set(this.#buf.subarray(this.#pos));
    buf.set(more, have);
    this.#buf = buf;
    this.#pos = 0;
  }

  #word() {
    this.#ensure(1);
    return this.#buf[this.#pos++];
  }

  /** Exact uniform integer in [0, m) by rejection (docs §2, padding). */
  #uniform(m) {
    const limit = GRID - (GRID % m);
    for (;;) {
      const w = this.#word();
      if (w < limit) return w % m;
    }
  }

  // ------------------------------------------------------------------ sampling
  #direct(node, x) {
    const w = this.#word();
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

  #unary(node, x) {
    const d = node.d;
    this.#ensure(d);
    const buf = this.#buf;
    const p = this.#pos;
    const tb = node.tb;
    const bytes = new Uint8Array(node.nbytes);
    for (let k = 0; k < d; k++) if (buf[p + k] < tb[k]) bytes[k >> 3] |= 128 >> (k & 7);
    if (buf[p + x] < node.ta[x]) bytes[x >> 3] |= 128 >> (x & 7);
    else bytes[x >> 3] &= ~(128 >> (x & 7));
    this.#pos = p + d;
    return base64Encode(bytes);
  }

  #draw(node, input) {
    switch (node.kind) {
      case "direct":
        return this.#direct(node, input);
      case "unary":
        return this.#unary(node, input);
      case "padding": {
        const s = input.length;
        const j = this.#uniform(Math.max(s, node.ell));
        const k = this.#uniform(node.ell);
        return this.#unary(node.inner, j < s ? input[j] : node.d + k);
      }
      case "memo":
        throw new TypeError("a memo node is drawn by #memoOne");
      case "leveled": {
        const data = this.#draw(node.items[input.t], input.x);
        if (node.levelReport === "perturbed") return { level: this.#direct(node.levelSampler, input.t), data };
        if (node.levelReport === "clear") return { level: input.t, data };
        return { data };
      }
      default:
        return node.parts.map((p, i) => this.#draw(p, input[i]));
    }
  }

  // ------------------------------------------------------------------ answers
  #item(answer, part, d) {
    if (typeof answer === "number") {
      if (!Number.isInteger(answer) || answer < 0 || answer >= d) {
        throw new AnswerError(`an answer index must be an integer in [0, ${d})`);
      }
      return answer;
    }
    if (typeof answer === "string") {
      const i = this.#prog.labelIndex[part].get(answer);
      if (i === undefined || i >= d) throw new AnswerError("the answer is not one of the spec's labels");
      return i;
    }
    throw new AnswerError(`an answer must be a label (string) or an index (integer), got ${describe(answer)}`);
  }

  #level(level, T, name) {
    if (level === undefined || level === null) {
      throw new AnswerError(`this spec needs the user's chosen ${name} (an index in [0, ${T}))`);
    }
    if (typeof level !== "number" || !Number.isInteger(level) || level < 0 || level >= T) {
      throw new AnswerError(`${name} must be an integer index in [0, ${T})`);
    }
    return level;
  }

  /** The sampler's input for one answer, validated before any word is drawn. */
  #input(node, answer, level, levels) {
    const given = (v) => v !== undefined && v !== null;
    if (node.kind !== "leveled" && given(level)) throw new AnswerError("this spec has no level choice (level)");
    if (node.kind !== "attributes" && given(levels)) throw new AnswerError("this spec has no per-attribute levels (levels)");
    const part = 0;
    switch (node.kind) {
      case "direct":
      case "unary":
      case "memo":
        return this.#item(answer, part, node.d);
      case "padding": {
        if (!Array.isArray(answer)) throw new AnswerError(`this spec takes a set of answers (an array), got ${describe(answer)}`);
        const items = answer.map((a) => this.#item(a, part, node.d)).sort((a, b) => a - b);
        for (let i = 1; i < items.length; i++) {
          if (items[i] === items[i - 1]) throw new AnswerError("an item-set repeats an item");
        }
        return items;
      }
      case "leveled":
        return { x: this.#item(answer, part, node.d), t: this.#level(level, node.levels.length, "level") };
      default: {
        const P = node.parts.length;
        if (!Array.isArray(answer) || answer.length !== P) throw new AnswerError(`each answer needs one value per attribute (${P})`);
        const anyLeveled = node.parts.some((p) => p.kind === "leveled");
        if (levels === undefined || levels === null) {
          if (anyLeveled) throw new AnswerError(`this spec needs levels: one level index per attribute (${P})`);
          levels = new Array(P).fill(null);
        }
        if (!Array.isArray(levels) || levels.length !== P) throw new AnswerError(`levels must hold one entry per attribute (${P})`);
        return node.parts.map((p, i) => {
          if (p.kind === "leveled") {
            return { x: this.#item(answer[i], i, p.d), t: this.#level(levels[i], p.levels.length, `levels[${i}]`) };
          }
          if (levels[i] !== null && levels[i] !== undefined) throw new AnswerError(`attribute ${i} has no level: levels[${i}] must be null`);
          return this.#item(answer[i], i, p.d);
        });
      }
    }
  }

  /** The report id from the next ID_WORDS words (buffered by the caller). */
  #id() {
    const buf = this.#buf;
    const p = this.#pos;
    let id = "";
    for (let i = 0; i < ID_WORDS; i++) {
      const w = buf[p + i];
      id += HEX[w >>> 24] + HEX[(w >>> 16) & 255] + HEX[(w >>> 8) & 255] + HEX[w & 255];
    }
    this.#pos = p + ID_WORDS;
    return id;
  }

  #one(input) {
    const root = this.#prog.root;
    this.#ensure(ID_WORDS + wordCount(root, input));
    const id = this.#id();
    return { id, payload: this.#draw(root, input) };
  }

  /**
   * One report of item x of a memo root (docs/wire-format.md §2): the id, then, if `responses`
   * (the memo's entry, a Map item -> response) lacks x, the permanent response's words (kept in `responses`), then the
   * instantaneous response's words applied to the permanent response.
   */
  #memoOne(node, x, responses, fresh) {
    const [prr, irr] = [node.permanent, node.instantaneous];
    const direct = prr.kind === "direct";
    let z = responses.get(x);
    const irrWords = direct ? 1 : node.d;
    this.#ensure(ID_WORDS + (z === undefined ? (direct ? 1 : node.d) : 0) + irrWords);
    const id = this.#id();
    if (z === undefined) {
      z = direct ? this.#direct(prr, x) : this.#unary(prr, x);
      responses.set(x, z);
      fresh.add(x);
    }
    if (direct) return { id, payload: this.#direct(irr, z) };
    const zb = base64Decode(z);
    const buf = this.#buf;
    const p = this.#pos;
    const bytes = new Uint8Array(irr.nbytes);
    for (let k = 0; k < node.d; k++) {
      const bit = 128 >> (k & 7);
      if (buf[p + k] < (zb[k >> 3] & bit ? irr.ta[k] : irr.tb[k])) bytes[k >> 3] |= bit;
    }
    this.#pos = p + node.d;
    return { id, payload: base64Encode(bytes) };
  }

  /**
   * Reports of items of a memo root, in one update of the memo store: its text read and checked
   * (MemoStoreError if it cannot be trusted), the memo key's entry checked against this spec, the
   * reports drawn, and the memo with their new permanent responses written before they are returned.
   */
  #memoReports(items) {
    const node = this.#prog.root;
    const { key, fingerprint } = this.#prog.memo;
    const kind = node.permanent.kind;
    return this.#store.update((text, where) => {
      const memos = readMemos(text, where);
      let entry = memos[key];
      if (entry === undefined) {
        entry = { permanent: fingerprint, kind, d: node.d, responses: {} };
      } else if (entry.permanent !== fingerprint || entry.kind !== kind || entry.d !== node.d) {
        throw new MemoStoreError(
          `the memo key ${repr(key)} holds the permanent responses of another permanent randomized response or ` +
            `other labels (fingerprint ${entry.permanent}, this spec's is ${fingerprint}); refusing to report: reusing ` +
            "them would void both claims. Give this spec another memo key.",
        );
      }
      const responses = new Map(Object.entries(entry.responses).map(([v, z]) => [Number(v), z]));
      // before any word is drawn; the refusal depends on the count and the ledger only, the values
      // new to the memo are recorded for display (the per-value spend) and decide nothing
      this.#ledger?.charge(this.#spec, items.length, new Set(items.filter((x) => !responses.has(x))).size);
      const fresh = new Set();
      const reports = items.map((x) => this.#memoOne(node, x, responses, fresh));
      this.lastNewItems = [...fresh].sort((a, b) => a - b);
      this.lastNewValues = fresh.size;
      if (!fresh.size) return { text: null, result: reports };
      const out = {};
      for (const [v, z] of responses) out[String(v)] = z;
      memos[key] = { ...entry, responses: out };
      return { text: memoText(memos), result: reports };
    });
  }

  // ------------------------------------------------------------------ reports
  /**
   * Randomize one user's answer.
   *
   * @param {*} answer A label or index (direct, unary, leveled roots); an array of distinct labels
   *   or indices (padding: an item-set, possibly empty); an array with one such answer per
   *   attribute (attributes).
   * @param {{level?: number, levels?: Array<number|null>}} [choices] `level`: the user's budget
   *   level index (leveled root); `levels`: one level index per attribute, null for a part that is
   *   not leveled (attributes root).
   * @returns {{format: string, spec: string, id: string, payload: *}} The report
   *   (`pldp.report/1`), members in the wire order.
   * @throws {AnswerError} For an answer or level the spec does not take (no word is drawn then).
   */
  report(answer, choices = {}) {
    const { level, levels } = choices ?? {};
    const input = this.#input(this.#prog.root, answer, level, levels);
    if (this.#store !== null) {
      return this.#memoReports([input]).then(([{ id, payload }]) => ({ format: REPORT_FORMAT, spec: this.#prog.id, id, payload }));
    }
    this.lastNewValues = 0;
    this.#ledger?.charge(this.#spec, 1, 0); // before any word is drawn
    const { id, payload } = this.#one(input);
    return { format: REPORT_FORMAT, spec: this.#prog.id, id, payload };
  }

  /**
   * {@link Client#report} as its compact JSON text (what JSON.stringify writes; byte-identical to
   * the Python client's `json.dumps(report, separators=(",", ":"))`).
   *
   * @param {*} answer
   * @param {object} [choices]
   * @returns {string}
   */
  reportJSON(answer, choices = {}) {
    const report = this.report(answer, choices);
    return report instanceof Promise ? report.then((r) => JSON.stringify(r)) : JSON.stringify(report);
  }

  /**
   * Randomize a batch of answers, in order (the same words as one report at a time).
   *
   * @param {Array} answers One answer per report (as for {@link Client#report}).
   * @param {{level?: number|number[], levels?: Array}} [choices] `level`: one index per answer, or
   *   one index for all; `levels`: one levels array per answer, or one levels array for all.
   *   Every answer is checked before any word is drawn.
   * @returns {{format: string, spec: string, reports: Array<{id: string, payload: *}>}} The batch
   *   (`pldp.batch/1`).
   */
  reports(answers, choices = {}) {
    if (!Array.isArray(answers)) throw new AnswerError("answers must be an array (one answer per report)");
    const n = answers.length;
    const { level, levels } = choices ?? {};
    const perLevel = Array.isArray(level);
    const perLevels = Array.isArray(levels) && levels.length > 0 && levels.every(Array.isArray);
    if (perLevel && level.length !== n) throw new AnswerError(`level must hold one index per answer (${n})`);
    if (perLevels && levels.length !== n) throw new AnswerError(`levels must hold one array per answer (${n})`);
    const root = this.#prog.root;
    const inputs = answers.map((a, i) =>
      this.#input(root, a, perLevel ? level[i] : level, perLevels ? levels[i] : levels),
    );
    if (this.#store !== null) return this.#memoReports(inputs).then((reports) => ({ format: BATCH_FORMAT, spec: this.#prog.id, reports }));
    this.lastNewValues = 0;
    this.#ledger?.charge(this.#spec, n, 0); // before any word is drawn
    return { format: BATCH_FORMAT, spec: this.#prog.id, reports: inputs.map((input) => this.#one(input)) };
  }
}
