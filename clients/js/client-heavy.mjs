// client-heavy.mjs: the heavy-hitter node of the JS client (pldp-client.mjs; pldp.channel.heavy): a
// free-text answer's report for PEM, TreeHist or SFP. The input is the answer's row of max_bytes bytes
// (client-answers.mjs: the text normalised as a hashed answer is, UTF-8, cut and padded with 0x00);
// the report is a group j drawn uniformly from 0 .. G-1 (exact rejection), then one local-hashing
// report (client-hashed.mjs, two words) per part, of the item the row and the group give:
//
//   "prefix"    the fingerprint of the row's first (j + 1) s bits (s = 8 for PEM, step_bits for TreeHist)
//   "word"      the fingerprint of the whole row
//   "fragment"  SFP's tagged fragment at position j: tag * 256^b + the row's b bytes at j b (big-endian),
//               tag the word's fingerprint's low hash_bits bits
//
// a fingerprint being XXH32(bytes, seed 0) mod (2^31 - 1). The claim: every part's, and the whole
// report's, the product of the parts' largest ratios within e^epsilon (decided exactly).

import { checkBudget, checkInt, checkKeys, isObject, repr } from "./client-checks.mjs";
import { everyPairRow, logRatio, ratioWithin } from "./client-exact.mjs";
import { drawHashed, parseHashed, toeplitzFits, verifyHashed } from "./client-hashed.mjs";
import { SpecError } from "./client-wire.mjs";
import { xxh32 } from "./client-xxh32.mjs";

/** The fingerprints' range: local hashing's largest number of items (pldp.channel.heavy.FINGERPRINTS). */
export const FINGERPRINTS = 2 ** 31 - 1;
/** The longest answer a node may keep, in bytes. */
export const MAX_BYTES = 64;
/** The bits a TreeHist prefix may grow by per depth. */
const STEPS = [1, 2, 4, 8];
/** Each protocol's parts, in the order of the report's words and columns. */
const PROTOCOL_PARTS = { pem: ["prefix"], treehist: ["prefix", "word"], sfp: ["fragment", "word"] };
/** Each protocol's own members besides the common ones. */
const OWN = { pem: [], treehist: ["step_bits"], sfp: ["fragment_bytes", "hash_bits"] };
/** The group column's name. */
const GROUP_NAMES = { pem: "group", treehist: "depth", sfp: "position" };
const PROTOCOLS = Object.keys(PROTOCOL_PARTS).sort();
/** The subject of the whole report's claim (pldp.channel.heavy.composed_rows). */
const WHOLE = "every pair of answers";

/** XXH32(bytes, 0) mod (2^31 - 1). */
const fingerprint = (bytes) => xxh32(bytes) % FINGERPRINTS;

/** Why the node's members do not make a node (HeavyNode._defect, past what parse checks), or null. */
function defect(node) {
  const { protocol, max_bytes: L, step_bits: s, fragment_bytes: b, hash_bits: h } = node;
  if (protocol === "treehist" && !STEPS.includes(s)) return `step_bits must be one of (${STEPS.join(", ")}), got ${s}`;
  if (protocol === "sfp") {
    if (!(b >= 1 && b <= 8) || L % b) return `fragment_bytes = ${b} must divide max_bytes = ${L} (at most 8)`;
    if (h < 1) return `hash_bits must be at least 1, got ${h}`;
    const why = toeplitzFits(node.dFragments, 2);
    if (why !== null) return `hash_bits = ${h} with fragment_bytes = ${b} does not fit: ${why}`;
  }
  for (let i = 0; i < node.parts.length; i++) {
    const name = node.names[i];
    const part = node.parts[i];
    const [d, family] = name === "fragment" ? [node.dFragments, "toeplitz"] : [FINGERPRINTS, "xxh32"];
    if (part.d !== d || part.family !== family) {
      return `the ${name} part must be a ${family} hashed node over d = ${BigInt(d)}, got ${part.family} over ${part.d}`;
    }
  }
  return null;
}

/** The heavy node at `path` (HeavyNode.parse: the same members, the same refusals). */
export function parseHeavy(obj, path) {
  const protocol = isObject(obj) ? obj.protocol : undefined;
  if (typeof protocol !== "string" || !Object.hasOwn(PROTOCOL_PARTS, protocol)) {
    throw new SpecError(`${path}.protocol must be one of ${repr(PROTOCOLS)}, got ${protocol === undefined ? "None" : repr(protocol)}`);
  }
  const own = OWN[protocol];
  checkKeys(obj, path, ["kind", "protocol", "max_bytes", "parts", "epsilon", ...own]);
  const maxBytes = checkInt(obj.max_bytes, `${path}.max_bytes`, 1, MAX_BYTES);
  const names = PROTOCOL_PARTS[protocol];
  if (!Array.isArray(obj.parts) || obj.parts.length !== names.length) {
    throw new SpecError(`${path}.parts must be a list of ${names.length} hashed nodes (${names.join(", ")})`);
  }
  const parts = obj.parts.map((part, i) => {
    if (!isObject(part) || part.kind !== "hashed") throw new SpecError(`${path}.parts[${i}] must be a hashed node`);
    return parseHashed(part, `${path}.parts[${i}]`);
  });
  const extra = { step_bits: 0, fragment_bytes: 0, hash_bits: 0 };
  for (const k of [...own].sort()) extra[k] = checkInt(obj[k], `${path}.${k}`, 0, 64);
  const epsilon = checkBudget(obj.epsilon, `${path}.epsilon`, false);
  const node = { kind: "heavy", protocol, max_bytes: maxBytes, parts, epsilon, ...extra, names };
  node.dFragments = 2 ** (extra.hash_bits + 8 * extra.fragment_bytes); // exact as a double: at most 2**128
  const why = defect(node);
  if (why !== null) throw new SpecError(`${path}: ${why}`);
  node.group = GROUP_NAMES[protocol];
  node.groups = protocol === "sfp" ? maxBytes / extra.fragment_bytes : (8 * maxBytes) / (protocol === "pem" ? 8 : extra.step_bits);
  node.prefixBits = protocol === "pem" ? 8 : extra.step_bits;
  // the payload's column names per part: PEM's only part unprefixed
  node.partColumns = names.map((name) => (protocol === "pem" ? ["seed", "value"] : [`${name}_seed`, `${name}_value`]));
  return node;
}

/** Every part's claim (part "<part>.<name>") and the whole report's (part `part`): the product of the
 * parts' (weight + keep) / weight within e^epsilon, decided exactly (pldp.channel.heavy.composed_rows). */
export function verifyHeavy(node, part) {
  const rows = [];
  let num = 1n;
  let den = 1n;
  node.parts.forEach((p, i) => {
    rows.push(...verifyHashed(p, `${part}.${node.names[i]}`)[0]);
    num *= BigInt(p.weight + p.keep);
    den *= BigInt(p.weight);
  });
  rows.push({ ...everyPairRow(num, den, node.epsilon, part), subject: WHOLE });
  return [rows, node.epsilon];
}

/** The fingerprint of the row's first `bits` bits (the bits past them cleared). */
function prefixItem(row, bits) {
  const prefix = row.slice(0, Math.ceil(bits / 8));
  if (bits % 8) prefix[prefix.length - 1] &= (0xff << (8 - (bits % 8))) & 0xff;
  return fingerprint(prefix);
}

/** SFP's item at position j: tag * 256^b + the row's b bytes at j b, big-endian (below 2^30 by the
 * Toeplitz fit, so every step is exact in a Number). */
function fragmentItem(row, j, b, hashBits, word) {
  let frag = 0;
  for (let k = j * b; k < (j + 1) * b; k++) frag = frag * 256 + row[k];
  return (word % 2 ** hashBits) * 2 ** (8 * b) + frag;
}

/** One report of an answer's row (a Uint8Array of max_bytes bytes): the group by rejection, then each
 * part's seed and value, as the payload object (group column first, then each part's two columns). */
export function drawHeavy(words, node, row) {
  const j = words.uniform(node.groups);
  const payload = { [node.group]: j };
  const word = node.protocol === "pem" ? 0 : fingerprint(row);
  node.parts.forEach((part, i) => {
    const name = node.names[i];
    let item;
    if (name === "word") item = word;
    else if (name === "fragment") item = fragmentItem(row, j, node.fragment_bytes, node.hash_bits, word);
    else item = prefixItem(row, (j + 1) * node.prefixBits);
    const [seed, value] = drawHashed(words, part, item);
    const [s, v] = node.partColumns[i];
    payload[s] = seed;
    payload[v] = value;
  });
  return payload;
}

/** The heavy kind (client-kinds.mjs): a free-text answer in, a group and a hashed report per part out. */
export const KIND = {
  parse: parseHeavy,
  verify: verifyHeavy,
  words: (node) => 1 + 2 * node.parts.length,
  draw: drawHeavy,
  leaf: false,
  takes: "text",
  attribute: false,
};
