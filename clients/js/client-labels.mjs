// client-labels.mjs: a spec's answer labels in either form (docs/wire-format.md §1), for the client
// (client-spec.mjs, client-answers.mjs) and the collector's pages: the list of the answers' strings,
// or {"range": d}, the integers 0 .. d-1 labelled by their decimal strings (no d strings are made).

import { isObject, repr } from "./client-checks.mjs";
import { SpecError } from "./client-wire.mjs";

/** The decimal label of an integer answer: no sign, no leading zero, no space. */
const DECIMAL = /^(0|[1-9][0-9]*)$/;

/**
 * The labels of the answers 0 .. d-1, read like an array of their decimal strings: `length`,
 * `at(i)`, `indexOf(label)`, `get(label)` (a Map's, as an index of the labels), `map`, `filter`,
 * `some` and iteration, each label made when asked for.
 */
export class AnswerRange {
  constructor(d) {
    this.d = d;
  }

  get length() {
    return this.d;
  }

  /** The label of answer `i` (negative from the end), undefined beyond the answers. */
  at(i) {
    const j = i < 0 ? this.d + i : i;
    return Number.isInteger(j) && j >= 0 && j < this.d ? String(j) : undefined;
  }

  /** The index of `label`, a decimal string below d as String writes it; undefined otherwise. */
  get(label) {
    if (typeof label !== "string" || label.length > String(this.d).length || !DECIMAL.test(label)) return undefined;
    const i = Number(label);
    return i < this.d ? i : undefined;
  }

  indexOf(label) {
    return this.get(label) ?? -1;
  }

  *[Symbol.iterator]() {
    for (let i = 0; i < this.d; i++) yield String(i);
  }

  map(f) {
    return Array.from({ length: this.d }, (_, i) => f(String(i), i));
  }

  filter(f) {
    const out = [];
    for (let i = 0; i < this.d; i++) if (f(String(i), i)) out.push(String(i));
    return out;
  }

  some(f) {
    for (let i = 0; i < this.d; i++) if (f(String(i), i)) return true;
    return false;
  }
}

/**
 * The number of answers of a spec's labels (one attribute's): a list of at least 2 distinct
 * strings, or {"range": d} with d an integer of at least 2; a SpecError naming `path` otherwise.
 * The messages are Python's (pldp.deploy.labels).
 */
export function checkLabels(value, path) {
  if (isObject(value)) {
    const keys = Object.keys(value);
    const d = value.range;
    if (keys.length !== 1 || keys[0] !== "range" || !Number.isSafeInteger(d) || d < 2) {
      throw new SpecError(`${path} must be a list of labels or {"range": d} with d an integer >= 2 and no other member`);
    }
    return d;
  }
  if (!Array.isArray(value) || value.length < 2 || !value.every((v) => typeof v === "string")) {
    throw new SpecError(`${path} must be a list of at least 2 strings (or {"range": d})`);
  }
  const seen = new Set();
  const dup = [];
  for (const v of value) {
    if (seen.has(v)) dup.push(v);
    seen.add(v);
  }
  if (dup.length) throw new SpecError(`${path} has duplicate labels: ${repr(dup.slice(0, 5))}`);
  return value.length;
}

/**
 * A checked labels value (one attribute's) as its answers' labels: the list itself, or an
 * AnswerRange for {"range": d}; `length`, `at(i)`, `indexOf(label)`, `map` and `filter` read both.
 */
export const answerLabels = (value) => (Array.isArray(value) ? value : new AnswerRange(value.range));

/** Each label's index (`get(label)`): a Map of the list, or the AnswerRange, which parses the label. */
export function labelIndex(value) {
  const labels = answerLabels(value);
  return labels instanceof AnswerRange ? labels : new Map(labels.map((lab, i) => [lab, i]));
}
