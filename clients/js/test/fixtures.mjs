// Specs and word streams made by hand for the tests (ids computed with specId).
// Every .mjs file of this folder is run by `node --test`, so this one carries its own test:
// every fixture spec loads and verifies.

import { fileURLToPath } from "node:url";
import { resolve } from "node:path";
import { specId, loadSpec, verify } from "../pldp-client.mjs";

export const G = 2 ** 32;

/** A signed spec (its id computed) around a sampler root. */
export async function makeSpec(root, { labels, question = "q?", oracle = {} } = {}) {
  if (labels === undefined) {
    const d = root.kind === "attributes" ? null : root.d;
    labels = d === null ? root.parts.map((p) => Array.from({ length: p.d }, (_, i) => `p${i}`)) : Array.from({ length: d }, (_, i) => String.fromCharCode(97 + (i % 26)) + (i >= 26 ? i : ""));
  }
  if (root.kind === "attributes" && !Array.isArray(question)) question = root.parts.map((_, i) => `q${i}?`);
  const spec = { format: "pldp.spec/1", question, labels, oracle, sampler: { grid_bits: 32, root } };
  spec.id = await specId(spec);
  return spec;
}

/** Re-sign a spec after an edit. */
export async function resign(spec) {
  spec.id = await specId(spec);
  return spec;
}

/** A deep copy of a JSON value. */
export const clone = (v) => JSON.parse(JSON.stringify(v));

/** k-RR with a comfortable margin below eps (weights all equal). */
export function krr(d, eps) {
  const w = Math.ceil(G / (Math.exp(eps) - 1 + d)) + 16;
  return { kind: "direct", d, keep: G - d * w, weights: Array(d).fill(w), notion: "LDP", epsilons: Array(d).fill(eps) };
}

/** Binary k-RR at eps = 1, tight: w = ceil(2^32 / (e + 1)) is the smallest weight the claim allows. */
export function tightBinary() {
  const w = Math.ceil(G / (Math.E + 1));
  return { kind: "direct", d: 2, keep: G - 2 * w, weights: [w, w], notion: "LDP", epsilons: [1, 1] };
}

/** OUE-like unary node with a margin below eps. */
export function oue(d, eps) {
  const b = Math.ceil(G / (Math.exp(eps) + 1)) + 16;
  return { kind: "unary", d, a: Array(d).fill(G / 2), b: Array(d).fill(b), notion: "LDP", epsilons: Array(d).fill(eps) };
}

/** Non-uniform direct node: weights [100, 0, 200, rest], keep 1000 (IPLDP; output 1 non-sensitive). */
export function lumpy() {
  const keep = 1000;
  return {
    kind: "direct",
    d: 4,
    keep,
    weights: [100, 0, 200, G - keep - 300],
    notion: "IPLDP",
    epsilons: [2.5, "inf", 2.5, 2.5],
  };
}

/**
 * FEBSF-like leveled node with numbers simple enough to check by hand: level 0 keeps w.p. 1/2
 * (weights 1/4 each), level 1 w.p. 3/4 (weights 1/8); the level report keeps w.p. 1/2 (weights
 * 1/4). Worst level ratio: max_l pi = 3 times the item part max(6/7, 2) = 2, i.e. 6.
 */
export function febsfLike(levelEpsilon) {
  return {
    kind: "leveled",
    d: 2,
    levels: [1.1, 2],
    items: [
      { kind: "direct", d: 2, keep: G / 2, weights: [G / 4, G / 4], notion: "LDP", epsilons: [1.1, 1.1] },
      { kind: "direct", d: 2, keep: (3 * G) / 4, weights: [G / 8, G / 8], notion: "LDP", epsilons: [2, 2] },
    ],
    level_report: "perturbed",
    level_sampler: { kind: "direct", d: 2, keep: G / 2, weights: [G / 4, G / 4], notion: "LDP", epsilons: [1.1, 1.1] },
    level_epsilon: levelEpsilon,
  };
}

/**
 * PBP-like hidden leveled node of unary items: level 0 a = 1/2, b = 1/4 (ratio 3), level 1
 * a = 3/4, b = 1/8 (ratio 21). Worst level ratio: bits 2 * 2 = 4 (levels 0 vs 1).
 */
export function hiddenUnary(levelEpsilon) {
  return {
    kind: "leveled",
    d: 2,
    levels: [1.1, 3.1],
    items: [
      { kind: "unary", d: 2, a: [G / 2, G / 2], b: [G / 4, G / 4], notion: "LDP", epsilons: [1.1, 1.1] },
      { kind: "unary", d: 2, a: [(3 * G) / 4, (3 * G) / 4], b: [G / 8, G / 8], notion: "LDP", epsilons: [3.1, 3.1] },
    ],
    level_report: "hidden",
    level_epsilon: levelEpsilon,
  };
}

/** A word source over a fixed list; `.used` counts the words drawn; throws when it runs out. */
export function stream(words) {
  const src = Uint32Array.from(words);
  const random = (n) => {
    if (random.used + n > src.length) throw new Error(`stream ran out: ${n} more words wanted after ${random.used}`);
    const out = src.slice(random.used, random.used + n);
    random.used += n;
    return out;
  };
  random.used = 0;
  return random;
}

/** Words as the 32-hex-digit report id they make. */
export const idOf = (w) => w.map((x) => x.toString(16).padStart(8, "0")).join("");

export const ID = [0x01234567, 0x89abcdef, 0xdeadbeef, 0x00000000];
export const ID_HEX = "0123456789abcdefdeadbeef00000000";

export const FIXTURES = {
  krr: () => krr(3, 1),
  tight: tightBinary,
  lumpy,
  oue: () => oue(10, 1),
  febsf: () => febsfLike(1.8),
  hidden: () => hiddenUnary(1.39),
};

if (resolve(process.argv[1] ?? "") === fileURLToPath(import.meta.url)) {
  const { test } = await import("node:test");
  const assert = (await import("node:assert/strict")).default;
  test("fixtures: every hand-made spec loads and verifies", async () => {
    for (const [name, make] of Object.entries(FIXTURES)) {
      const spec = await loadSpec(await makeSpec(make()));
      assert.ok(verify(spec).holds, name);
    }
  });
}
