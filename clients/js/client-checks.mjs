// client-checks.mjs: the checks every node parser of the JS client uses (pldp-client.mjs), and
// the grouping of a node's claims into rows.

import { SpecError } from "./client-wire.mjs";

/** A value as a message shows it: its JSON, cut to 60 characters. */
export const repr = (v) => {
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s.length > 60 ? s.slice(0, 57) + "..." : s;
  } catch {
    return String(v);
  }
};

/** `value`, an integer in [lo, hi] (else a SpecError naming `path`). */
export function checkInt(value, path, lo, hi) {
  if (typeof value !== "number" || !Number.isInteger(value)) throw new SpecError(`${path} must be an integer, got ${repr(value)}`);
  if (value < lo || value > hi) throw new SpecError(`${path} = ${value} is outside [${lo}, ${hi}]`);
  return value;
}

/** `value`, a list of n integers in [lo, hi]. */
export function checkInts(value, path, n, lo, hi) {
  if (!Array.isArray(value) || value.length !== n) throw new SpecError(`${path} must be a list of ${n} integers`);
  return value.map((v, i) => checkInt(v, `${path}[${i}]`, lo, hi));
}

/** `value`, a budget > 0 (`"inf"`: Infinity, where allowed). */
export function checkBudget(value, path, allowInf) {
  if (value === "inf" && allowInf) return Infinity;
  if (typeof value !== "number" || !Number.isFinite(value) || !(value > 0)) {
    throw new SpecError(`${path} must be a budget > 0${allowInf ? ' or "inf"' : ""}, got ${repr(value)}`);
  }
  return value;
}

/** `value`, a list of n budgets. */
export function checkBudgets(value, path, n, allowInf) {
  if (!Array.isArray(value) || value.length !== n) throw new SpecError(`${path} must be a list of ${n} budgets`);
  return value.map((v, i) => checkBudget(v, `${path}[${i}]`, allowInf));
}

/** Whether v is a JSON object (not null, not an array). */
export const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/** `obj`, an object with every `required` member and no member outside `required` and `optional`. */
export function checkKeys(obj, path, required, optional = []) {
  if (!isObject(obj)) throw new SpecError(`${path} must be an object`);
  const keys = Object.keys(obj);
  const missing = required.filter((k) => !keys.includes(k)).sort();
  const extra = keys.filter((k) => !required.includes(k) && !optional.includes(k)).sort();
  if (missing.length) throw new SpecError(`${path} lacks ${repr(missing)}`);
  if (extra.length) throw new SpecError(`${path} has unknown members ${repr(extra)}`);
}

/** The indices of each distinct key, in order of first appearance. */
export function groups(keys) {
  const out = new Map();
  keys.forEach((k, i) => {
    if (!out.has(k)) out.set(k, []);
    out.get(k).push(i);
  });
  return out;
}

/** A group of items as a row's subject names it: its first item, and how many more. */
export const who = (items) => `item ${items[0]}` + (items.length > 1 ? ` (+${items.length - 1})` : "");

/** The largest of `values` (-Infinity when empty) by one loop: `Math.max(...values)` spreads every
 * value as an argument and throws a RangeError past the engine's limit (about 10^5 in V8), which a
 * large domain's d per-answer values reach. */
export function largest(values) {
  let out = -Infinity;
  for (const v of values) if (v > out || Number.isNaN(v)) out = v;
  return out;
}

/** The smallest of `values` (Infinity when empty), by one loop (see `largest`). */
export function smallest(values) {
  let out = Infinity;
  for (const v of values) if (v < out || Number.isNaN(v)) out = v;
  return out;
}
