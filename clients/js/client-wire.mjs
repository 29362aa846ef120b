// client-wire.mjs: the wire format's shared pieces of the JS client (pldp-client.mjs): the format
// tags, the errors it throws, the JSON Canonicalization Scheme and the spec id, base64.

export const SPEC_FORMAT = "pldp.spec/1";
export const REPORT_FORMAT = "pldp.report/1";
export const BATCH_FORMAT = "pldp.batch/1";

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

/** Two lower-case hex digits per byte value. */
export const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

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
