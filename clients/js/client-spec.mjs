// client-spec.mjs: a campaign spec in the JS client (pldp-client.mjs): loadSpec reads and checks
// one (format, members, id, labels, sampler, every privacy claim), verify checks its claims.

import { isObject, repr } from "./client-checks.mjs";
import { fmtG } from "./client-exact.mjs";
import { checkLabels, checkTextLabels, labelIndex as indexOfLabels } from "./client-labels.mjs";
import { checkMemo } from "./client-memo.mjs";
import { parseSampler, verifyNode } from "./client-nodes.mjs";
import { SPEC_FORMAT, SpecError, canonicalJSON, sha256Hex, specId } from "./client-wire.mjs";

function checkAnswers(root, labels, question) {
  if (root.takes === "parts") {
    const P = root.parts.length;
    if (!Array.isArray(labels) || labels.length !== P) throw new SpecError(`labels must hold one list per attribute (${P})`);
    if (!Array.isArray(question) || question.length !== P || !question.every((q) => typeof q === "string")) {
      throw new SpecError(`question must hold one question per attribute (${P})`);
    }
    root.parts.forEach((part, i) => {
      const n = checkLabels(labels[i], `labels[${i}]`);
      if (n !== part.d) throw new SpecError(`labels[${i}] has ${n} answers but attribute ${i} takes ${part.d}`);
    });
    return;
  }
  if (typeof question !== "string") throw new SpecError("question must be a string");
  if (root.takes === "text") return checkTextLabels(labels, root.max_bytes); // free text: no labels listed
  const n = checkLabels(labels, "labels");
  if (n !== root.d) throw new SpecError(`labels has ${n} answers but the sampler takes ${root.d}`);
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

/** The program of a spec returned by {@link loadSpec} ({root, id, labelIndex, memo}), else undefined. */
export const program = (spec) => PROGRAMS.get(spec);

function deepFreeze(v) {
  if (typeof v === "object" && v !== null) {
    for (const k of Object.keys(v)) deepFreeze(v[k]);
    Object.freeze(v);
  }
  return v;
}

/**
 * Read and check a campaign spec (`pldp.spec/1`) before any report is made: its format and
 * members, its id against its content (JCS + SHA-256), its labels (distinct strings or {"range": d}, one
 * per attribute for MPLDP), the sampler's structure (grid_bits 32, every node's kind, lengths,
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
  const lists = root.takes === "parts" ? data.labels : [data.labels];
  // a range form parses its labels: no d strings; free text has none (its answers are rows, not items)
  const labelIndex = root.takes === "text" ? [null] : lists.map((l) => indexOfLabels(l));
  let memo = null;
  if (root.memoized) {
    const text = canonicalJSON({ labels: data.labels, permanent: data.sampler.root.permanent });
    memo = { key: data.memo.key, fingerprint: (await sha256Hex(text)).slice(0, 32) };
  }
  const spec = deepFreeze(data);
  PROGRAMS.set(spec, { root, id: data.id, labelIndex, memo });
  return spec;
}
