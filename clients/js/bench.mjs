// Speed of the JS client in Node with crypto randomness: serialized reports per second of a direct
// (k-RR) and a unary (OUE) spec over d = 100 items.
//
//   node clients/js/bench.mjs            -> {"direct_per_s": ..., "unary_per_s": ...}
import { specId, loadSpec, Client } from "./pldp-client.mjs";

const G = 2 ** 32;
const D = 100;

async function spec(root) {
  const labels = Array.from({ length: root.d }, (_, i) => `item ${i}`);
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

/** Reports per second over about `seconds` of reportJSON calls (after a warm-up). */
function rate(client, seconds = 1) {
  let sink = 0;
  for (let i = 0; i < 20000; i++) sink += client.reportJSON(i % D).length;
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < seconds * 1000) {
    for (let i = 0; i < 5000; i++) sink += client.reportJSON((n + i) % D).length;
    n += 5000;
    t = performance.now();
  }
  if (sink < 0) console.log(sink);
  return Math.round((n * 1000) / (t - t0));
}

const direct = rate(new Client(await spec(krr(D, 2))));
const unary = rate(new Client(await spec(oue(D, 1))));
console.log(JSON.stringify({ direct_per_s: direct, unary_per_s: unary }));
