// client-leveled.mjs: the leveled node of the JS client (pldp-client.mjs; pldp.channel.leveled):
// one node per privacy level, the level itself perturbed, sent in the clear or hidden
// (docs/wire-format.md §2, §3.4). A level in the clear may use any kind of ITEM_KINDS (each level
// its own parameters, e.g. OLH's g); a perturbed or hidden level needs every level's node of one
// report format (reportFormat: one kind and size, one g for local hashing, one k for subsets).

import { checkBudget, checkBudgets, checkInt, checkKeys, repr } from "./client-checks.mjs";
import { drawDirect } from "./client-direct.mjs";
import { everyPairRatio, fmtG, fracGreater, logRatio, ratioWithin } from "./client-exact.mjs";
import { GRID_N } from "./client-grid.mjs";
import { SpecError } from "./client-wire.mjs";

const LEVEL_REPORTS = ["perturbed", "clear", "hidden"];
/** The kinds a level's node may be (pldp.channel.leveled.ITEM_KINDS). */
const ITEM_KINDS = ["direct", "unary", "hashed", "hadamard", "subset"];
/** The payload columns whose size every level that has one must share (one packed width, one item range). */
const SHARED_COLUMNS = ["item", "bits"];
/** What two levels' nodes must share for the level to stay hidden (pldp.channel.leveled._report_format). */
const reportFormat = (n) => (n.everyPair ? n.everyPair.format : `${n.kind}/${n.d}`);

/** The leveled node at `path`; `parseNode` parses its items' nodes and its level sampler. */
export function parseLeveled(obj, path, parseNode) {
  checkKeys(obj, path, ["kind", "d", "levels", "items", "level_report"], ["level_sampler", "level_epsilon"]);
  const raw = obj.levels;
  if (!Array.isArray(raw) || raw.length === 0) throw new SpecError(`${path}.levels must be a non-empty list of budgets`);
  const levels = checkBudgets(raw, `${path}.levels`, raw.length, false);
  const T = levels.length;
  if (!Array.isArray(obj.items) || obj.items.length !== T) {
    throw new SpecError(`${path}.items must hold one node per level (${T})`);
  }
  const items = obj.items.map((o, i) => parseNode(o, `${path}.items[${i}]`));
  if (items.some((n) => !ITEM_KINDS.includes(n.kind))) {
    throw new SpecError(`${path}.items must be ${ITEM_KINDS.slice(0, -1).join(", ")} or ${ITEM_KINDS.at(-1)} nodes`);
  }
  // a level's claim is its budget for every item; a ULDP node may reveal its input
  if (items.some((n) => n.kind === "unary" && n.notion === "ULDP")) {
    throw new SpecError(`${path}.items must protect every item: a ULDP node may reveal one`);
  }
  const d = checkInt(obj.d, `${path}.d`, 2, Math.min(...items.map((n) => n.d)));
  const mode = obj.level_report;
  if (!LEVEL_REPORTS.includes(mode)) {
    throw new SpecError(`${path}.level_report must be one of ${repr(LEVEL_REPORTS)}, got ${repr(mode)}`);
  }
  if (mode !== "clear" && new Set(items.map(reportFormat)).size > 1) {
    throw new SpecError(`${path}: with the level ${mode}, every level's node must have the same kind and size, and one report format`);
  }
  // an item or bits column is as large as the node's d (direct, unary, subset)
  if (SHARED_COLUMNS.some((c) => new Set(items.filter((n) => n.columns.includes(c)).map((n) => n.d)).size > 1)) {
    throw new SpecError(`${path}: the levels' nodes with an item or a bits column must have the same size (one payload column each)`);
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
    if ((node.epsilons ?? [node.epsilon]).some((b) => b !== Infinity && b !== levels[i])) {
      throw new SpecError(`${path}.items[${i}] must claim the level's budget ${fmtG(levels[i], 17)} for every item`);
    }
  });
  return { kind: "leveled", d, levels, items, levelReport: mode, levelSampler, levelEpsilon };
}

/** The larger of a bit's ratios of being 1 and 0 under probabilities p vs p2 (over 2^32). */
function bitRatio(p, p2) {
  const one = [BigInt(p), BigInt(p2)];
  const zero = [GRID_N - BigInt(p), GRID_N - BigInt(p2)];
  return fracGreater(zero, one) ? zero : one;
}

/** Largest Pr(o | x, node) / Pr(o | x, other) over items x and outputs o; null if infinite. */
function itemRatio(node, other) {
  if (node.kind !== other.kind) return null;
  if (node.everyPair) return everyPairRatio(node, other, GRID_N);
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

/** The claims of a leveled node: its levels' items, its level report, the level's own protection. */
export function verifyLeveled(node, part, verifyNode) {
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

/** The report of item input.x at level input.t, drawn from `words` (`draw` draws the item's node). */
export function drawLeveled(words, node, input, draw) {
  const data = draw(words, node.items[input.t], input.x);
  if (node.levelReport === "perturbed") return { level: drawDirect(words, node.levelSampler, input.t), data };
  if (node.levelReport === "clear") return { level: input.t, data };
  return { data };
}

/** The leveled kind (client-kinds.mjs): an item and the user's level in, {level?, data} out. */
export const KIND = {
  parse: parseLeveled,
  verify: verifyLeveled,
  words: (node, input, wordCount) => wordCount(node.items[input.t], input.x) + (node.levelSampler !== null ? 1 : 0),
  draw: drawLeveled,
  takes: "item and level",
  attribute: true,
};
