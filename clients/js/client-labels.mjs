// client-labels.mjs: a spec's answer labels in any of their three forms (docs/wire-format.md §1), for
// the client (client-spec.mjs, client-answers.mjs) and the collector's pages: the list of the answers'
// strings; {"range": d}, the integers 0 .. d-1 labelled by their decimal strings (no d strings are
// made); or {"hashed": d, "hash": "xxh32", "normalize": "NFC"}, any text hashed to one of d buckets
// (textBucket), the buckets labelled by their decimal strings; a free-text spec's labels,
// {"text": max_bytes, "normalize": "NFC"}, are checked here too (checkTextLabels). The rules are
// pldp.deploy.labels'.

import { isObject, repr } from "./client-checks.mjs";
import { AnswerError, SpecError } from "./client-wire.mjs";
import { xxh32 } from "./client-xxh32.mjs";

/** The hashed form's members besides "hashed": d (the only hash and normalisation this version knows). */
export const HASHED_FORM = { hash: "xxh32", normalize: "NFC" };
/** The most UTF-8 bytes of a hashed answer's text, once normalised. */
export const MAX_TEXT_BYTES = 256;
/** The white space trimmed from both ends of a hashed answer: ASCII space, tab, line feed, carriage return. */
const TRIMMED = /^[ \t\n\r]+|[ \t\n\r]+$/g;
/** A lone surrogate (a pair is one code point under the u flag): text with no UTF-8 form. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const encoder = new TextEncoder();

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

/** The d buckets of a hashed form, labelled "0" .. "d-1" like an AnswerRange; `bucket(text)` hashes an answer. */
export class HashedAnswers extends AnswerRange {
  /** The bucket of an answer's text (textBucket); an AnswerError saying why it cannot be hashed. */
  bucket(text) {
    return textBucket(text, this.d);
  }
}

/**
 * A hashed answer's text as hashed: Unicode NFC, then ASCII space, tab, LF and CR trimmed from both
 * ends; an AnswerError for anything but a string, a lone surrogate (no UTF-8), an empty result or
 * one over `limit` UTF-8 bytes (MAX_TEXT_BYTES; null: no bound, for a caller that cuts the bytes
 * itself, as a free-text answer's row is cut). Returns the UTF-8 bytes. The messages never repeat the text.
 */
export function normalizeText(text, limit = MAX_TEXT_BYTES) {
  if (typeof text !== "string") {
    throw new AnswerError(`this spec's answers are text (a string), got ${text === null ? "null" : `a ${typeof text}`}`);
  }
  if (LONE_SURROGATE.test(text)) throw new AnswerError("the answer's text holds a lone surrogate: it has no UTF-8 form");
  const out = text.normalize("NFC").replace(TRIMMED, "");
  if (!out) throw new AnswerError("the answer's text is empty (after trimming white space)");
  const bytes = encoder.encode(out);
  if (limit !== null && bytes.length > limit) {
    throw new AnswerError(`the answer's text is ${bytes.length} UTF-8 bytes, over the ${limit} allowed`);
  }
  return bytes;
}

/** The bucket of a hashed answer: XXH32(UTF-8 of the normalised text, seed 0) mod d. */
export const textBucket = (text, d) => xxh32(normalizeText(text)) % d;

/**
 * The labels of a free-text spec whose sampler keeps `maxBytes` bytes of an answer (a heavy-hitter
 * node's max_bytes): {"text": maxBytes, "normalize": "NFC"} exactly, else a SpecError; the answers are
 * discovered, not listed (pldp.deploy.labels.text_labels, checked as pldp.deploy.spec does).
 */
export function checkTextLabels(value, maxBytes) {
  const keys = isObject(value) ? Object.keys(value).sort().join() : "";
  if (keys !== "normalize,text" || value.text !== maxBytes || value.normalize !== HASHED_FORM.normalize) {
    const want = `{"text": ${maxBytes}, "normalize": ${repr(HASHED_FORM.normalize)}}`;
    throw new SpecError(`labels of a free-text sampler must be ${want}, got ${repr(value)}`);
  }
}

const isCount = (d) => Number.isSafeInteger(d) && d >= 2;

/**
 * The number of answers of a spec's labels (one attribute's): a list of at least 2 distinct
 * strings, {"range": d}, or {"hashed": d, "hash": "xxh32", "normalize": "NFC"}, with d an integer
 * of at least 2; a SpecError naming `path` otherwise. The messages are Python's (pldp.deploy.labels).
 */
export function checkLabels(value, path) {
  if (isObject(value) && Object.hasOwn(value, "hashed")) {
    const keys = Object.keys(value).sort();
    const want = ["hashed", ...Object.keys(HASHED_FORM)].sort();
    if (keys.length !== want.length || keys.some((k, i) => k !== want[i]) || !isCount(value.hashed)) {
      throw new SpecError(`${path} must be {"hashed": d, "hash", "normalize"} with d an integer >= 2`);
    }
    for (const [key, known] of Object.entries(HASHED_FORM)) {
      if (value[key] !== known) {
        throw new SpecError(`${path}.${key} must be ${repr(known)} (the only one this version knows), got ${repr(value[key])}`);
      }
    }
    return value.hashed;
  }
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
 * A checked labels value (one attribute's) as its answers' labels: the list itself, an AnswerRange
 * for {"range": d}, a HashedAnswers (its buckets) for the hashed form; `length`, `at(i)`,
 * `indexOf(label)`, `map` and `filter` read them all.
 */
export function answerLabels(value) {
  if (Array.isArray(value)) return value;
  return Object.hasOwn(value, "hashed") ? new HashedAnswers(value.hashed) : new AnswerRange(value.range);
}

/**
 * Each label's index (`get(label)`): a Map of the list, or the AnswerRange, which parses the label;
 * for the hashed form the HashedAnswers, whose answers are text reaching a bucket through `bucket(text)`
 * (client-answers.mjs takes nothing else: an index would skip the hash).
 */
export function labelIndex(value) {
  const labels = answerLabels(value);
  return labels instanceof AnswerRange ? labels : new Map(labels.map((lab, i) => [lab, i]));
}
