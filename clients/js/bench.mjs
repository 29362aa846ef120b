// Speed of the JS client in Node with crypto randomness: serialized reports per second of a direct
// (k-RR) and a unary (OUE) spec over d = 100 items, and of a free-text spec (a heavy node: TreeHist,
// max_bytes 16, step_bits 8, two OLH parts at epsilon 2 each) over answers of a few words.
//
//   node clients/js/bench.mjs            -> {"direct_per_s": ..., "unary_per_s": ..., "heavy_per_s": ...}
import { specId, loadSpec, Client } from "./pldp-client.mjs";

const G = 2 ** 32;
const D = 100;

async function spec(root) {
  const labels = root.kind === "heavy" ? { text: root.max_bytes, normalize: "NFC" } : Array.from({ length: root.d }, (_, i) => `item ${i}`);
  const data = { format: "pldp.spec/1", question: "bench", labels, oracle: {}, sampler: { grid_bits: 32, root } };
  data.id = await specId(data);
  return loadSpec(data);
}

function krr(d, eps) {
  const w = Math.ceil(G / (Math.exp(eps) - 1 + d)) + 16;
  return { kind: "direct", d, keep: G - d * w, weights: Array(d).fill(w), notion: "LDP", epsilons: Array(d).fill(eps) };
}

function oue(d, eps) {
  const b = Math.ceil(G / (Math.exp(eps) + 1)) + 16;
  return { kind: "unary", d, a: Array(d).fill(G / 2), b: Array(d).fill(b), notion: "LDP", epsilons: Array(d).fill(eps) };
}

/** OLH over the fingerprints (2**31 - 1 items), g values, a margin below eps (a heavy node's part). */
function olh(g, eps) {
  const w = Math.ceil(G / (Math.exp(eps) - 1 + g)) + 16;
  return { kind: "hashed", d: 2 ** 31 - 1, g, family: "xxh32", keep: G - g * w, weight: w, epsilon: eps };
}

/** TreeHist's node: a prefix part and a word part, eps / 2 each. */
function treehist(maxBytes, stepBits, eps) {
  const parts = [olh(8, eps / 2), olh(8, eps / 2)];
  return { kind: "heavy", protocol: "treehist", max_bytes: maxBytes, step_bits: stepBits, parts, epsilon: eps };
}

const WORDS = Array.from({ length: D }, (_, i) => `answer ${i} café ${"日本語".slice(0, i % 4)}`);

/** Reports per second over about `seconds` of reportJSON calls (after a warm-up), answers `answer(i)`. */
function rate(client, seconds = 1, answer = (i) => i % D) {
  let sink = 0;
  for (let i = 0; i < 20000; i++) sink += client.reportJSON(answer(i)).length;
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < seconds * 1000) {
    for (let i = 0; i < 5000; i++) sink += client.reportJSON(answer(n + i)).length;
    n += 5000;
    t = performance.now();
  }
  if (sink < 0) console.log(sink);
  return Math.round((n * 1000) / (t - t0));
}

const direct = rate(new Client(await spec(krr(D, 2))));
const unary = rate(new Client(await spec(oue(D, 1))));
const heavy = rate(new Client(await spec(treehist(16, 8, 4))), 1, (i) => WORDS[i % D]);
console.log(JSON.stringify({ direct_per_s: direct, unary_per_s: unary, heavy_per_s: heavy }));
