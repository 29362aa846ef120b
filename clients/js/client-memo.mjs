// client-memo.mjs: the memo node of the JS client (pldp-client.mjs; pldp.channel.memo): a
// permanent randomized response per value, drawn once and kept on the device, and a fresh
// instantaneous response of it in every report (docs/wire-format.md §2, §3.6); the spec's memo
// key, and the memo store's text (`pldp.memo/1`, docs/wire-format.md §6), read and checked.

import { checkBudgets, checkInt, checkKeys, isObject, largest, repr } from "./client-checks.mjs";
import { DIRECT_NOTIONS, directThresholds, drawDirect, outputRows } from "./client-direct.mjs";
import { GRID_N, ID_WORDS } from "./client-grid.mjs";
import { UNARY_NOTIONS, drawUnary, pairRows, unaryThresholds } from "./client-unary.mjs";
import { MemoStoreError, SpecError, base64Decode, base64Encode, canonicalJSON } from "./client-wire.mjs";

const MEMO_FORMAT = "pldp.memo/1";
const MEMO_KEY_MAX = 256;

/** The memo node at `path`; `parseNode` parses its permanent response's node. */
export function parseMemo(obj, path, parseNode) {
  checkKeys(obj, path, ["kind", "d", "permanent", "instantaneous", "notion", "epsilons"]);
  const permanent = parseNode(obj.permanent, `${path}.permanent`);
  if (permanent.kind !== "direct" && permanent.kind !== "unary") throw new SpecError(`${path}.permanent must be a direct or unary node`);
  const d = checkInt(obj.d, `${path}.d`, permanent.d, permanent.d);
  const where = `${path}.instantaneous`;
  const raw = obj.instantaneous;
  let irr;
  if (permanent.kind === "direct") {
    checkKeys(raw, where, ["keep", "weights"]);
    irr = { d, ...directThresholds(raw, where, d) };
  } else {
    checkKeys(raw, where, ["a", "b"]);
    irr = { d, ...unaryThresholds(raw, where, d) };
  }
  const notions = permanent.kind === "direct" ? DIRECT_NOTIONS : UNARY_NOTIONS;
  if (!notions.includes(obj.notion)) throw new SpecError(`${path}.notion must be one of ${repr(notions)}, got ${repr(obj.notion)}`);
  const epsilons = checkBudgets(obj.epsilons, `${path}.epsilons`, d, permanent.kind === "direct");
  return { kind: "memo", d, permanent, instantaneous: irr, notion: obj.notion, epsilons };
}

export function checkMemo(root, memo) {
  if (!root.memoized) {
    if (memo !== undefined) throw new SpecError("the spec has a memo member but its sampler is not memoized");
    return;
  }
  if (memo === undefined) throw new SpecError("the sampler is memoized: the spec must state its memo key ({'memo': {'key': ...}})");
  if (!isObject(memo) || Object.keys(memo).join() !== "key") throw new SpecError("memo must be an object with exactly 'key'");
  if (typeof memo.key !== "string" || memo.key.length === 0 || [...memo.key].length > MEMO_KEY_MAX) {
    throw new SpecError(`memo.key must be a string of 1 to ${MEMO_KEY_MAX} characters, got ${repr(memo.key)}`);
  }
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

/** The claims of a memo node: its permanent response's (any number of reports), then one report's. */
export function verifyMemo(node, part, verifyNode) {
  const [rows] = verifyNode(node.permanent, `${part} permanent (any number of reports of one value)`);
  const [first, second] = chained(node);
  const one = `${part} one report`;
  if (node.permanent.kind === "direct") rows.push(...outputRows(first, second, node.epsilons, one));
  else rows.push(...pairRows(first, second, node.epsilons, node.notion, GRID_N * GRID_N, one));
  return [rows, largest(node.epsilons)];
}

// ---------------------------------------------------------------------------- the memo's text

const HEX32 = /^[0-9a-f]{32}$/;
const INDEX = /^(0|[1-9][0-9]*)$/;

export function memoBad(where, why) {
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
 * The memo key's entry of a store's text for this spec's memo node (`memo`: {key, fingerprint}):
 * {memos, entry, responses}, the responses a Map item -> permanent response. Throws
 * MemoStoreError if the text cannot be trusted or the key holds another mechanism's responses.
 */
export function openMemo(text, where, node, memo) {
  const { key, fingerprint } = memo;
  const kind = node.permanent.kind;
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
  return { memos, entry, responses };
}

/** The store's new text: `memos` with the key's entry holding `responses` (from {@link openMemo}). */
export function closeMemo(memos, key, entry, responses) {
  const out = {};
  for (const [v, z] of responses) out[String(v)] = z;
  memos[key] = { ...entry, responses: out };
  return memoText(memos);
}

// ---------------------------------------------------------------------------- drawing

/**
 * One report of item x of a memo root (docs/wire-format.md §2), from `words` (a {@link Words}
 * stream): the id, then, if `responses` (the memo's entry, a Map item -> response) lacks x, the
 * permanent response's words (kept in `responses`, x added to `fresh`), then the instantaneous
 * response's words applied to the permanent response.
 */
export function drawMemo(words, node, x, responses, fresh) {
  const [prr, irr] = [node.permanent, node.instantaneous];
  const direct = prr.kind === "direct";
  let z = responses.get(x);
  const irrWords = direct ? 1 : node.d;
  words.ensure(ID_WORDS + (z === undefined ? (direct ? 1 : node.d) : 0) + irrWords);
  const id = words.id();
  if (z === undefined) {
    z = direct ? drawDirect(words, prr, x) : drawUnary(words, prr, x);
    responses.set(x, z);
    fresh.add(x);
  }
  if (direct) return { id, payload: drawDirect(words, irr, z) };
  const zb = base64Decode(z);
  const buf = words.buf;
  const p = words.pos;
  const bytes = new Uint8Array(irr.nbytes);
  for (let k = 0; k < node.d; k++) {
    const bit = 128 >> (k & 7);
    if (buf[p + k] < (zb[k >> 3] & bit ? irr.ta[k] : irr.tb[k])) bytes[k >> 3] |= bit;
  }
  words.pos = p + node.d;
  return { id, payload: base64Encode(bytes) };
}

function drawnByMemo() {
  throw new TypeError("a memo node is drawn by drawMemo");
}

/** The memo kind (client-kinds.mjs): a root only, drawn by drawMemo; an item in, the instantaneous response out. */
export const KIND = { parse: parseMemo, verify: verifyMemo, words: drawnByMemo, draw: drawnByMemo, takes: "item", memoized: true };
