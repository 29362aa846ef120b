// Goodness of fit of the CSPRNG-driven sampling against the spec's channel (chi-square,
// significance 1e-6, 2e4 reports), with a power check: a client of a slightly different channel
// is caught by the same test.
import test from "node:test";
import assert from "node:assert/strict";
import { loadSpec, Client, base64Decode } from "../pldp-client.mjs";
import { makeSpec, G } from "./fixtures.mjs";

const ALPHA = 1e-6;
const N = 20000;

// ---------------------------------------------------------------- the chi-square distribution
function lnGamma(x) {
  const c = [76.18009172947146, -86.50532032941677, 24.01409824083091, -1.231739572450155, 0.1208650973866179e-2, -0.5395239384953e-5];
  let y = x;
  const tmp = x + 5.5 - (x + 0.5) * Math.log(x + 5.5);
  let ser = 1.000000000190015;
  for (const cj of c) ser += cj / ++y;
  return -tmp + Math.log((2.5066282746310005 * ser) / x);
}

/** The regularized upper incomplete gamma Q(a, x) (series / continued fraction). */
function gammaQ(a, x) {
  if (x <= 0) return 1;
  const gln = lnGamma(a);
  if (x < a + 1) {
    let sum = 1 / a;
    let del = sum;
    for (let ap = a; Math.abs(del) > Math.abs(sum) * 1e-15; ) {
      del *= x / ++ap;
      sum += del;
    }
    return 1 - sum * Math.exp(-x + a * Math.log(x) - gln);
  }
  let b = x + 1 - a;
  let c = 1e300;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 1000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < 1e-300) d = 1e-300;
    c = b + an / c;
    if (Math.abs(c) < 1e-300) c = 1e-300;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return Math.exp(-x + a * Math.log(x) - gln) * h;
}

/** P(chi2_df >= stat). */
const chi2sf = (stat, df) => gammaQ(df / 2, stat / 2);

test("the chi-square survival function: closed forms and a table value", () => {
  for (const s of [0.1, 1, 5, 30]) assert.ok(Math.abs(chi2sf(s, 2) - Math.exp(-s / 2)) < 1e-12);
  assert.ok(Math.abs(chi2sf(3.841458820694124, 1) - 0.05) < 1e-9);
  assert.ok(Math.abs(chi2sf(18.307038053275146, 10) - 0.05) < 1e-9);
});

// ---------------------------------------------------------------- direct
/** IPRR-like direct node over 4 items (item 3 non-sensitive), keep scaled by `boost`. */
function direct(boost = 1) {
  const keep = Math.round(G * 0.3 * boost);
  const rest = G - keep;
  const weights = [Math.round(rest * 0.4), Math.round(rest * 0.3), Math.round(rest * 0.2)];
  weights.push(rest - weights[0] - weights[1] - weights[2]);
  return { kind: "direct", d: 4, keep, weights, notion: "IPLDP", epsilons: [3, 3, 3, 3] };
}

function answersMix(d, heavy) {
  // half the users on `heavy`, the rest spread evenly (deterministic)
  return Array.from({ length: N }, (_, i) => (i % 2 === 0 ? heavy : (i >> 1) % d));
}

async function directPvalue(sampled, truth) {
  const spec = await loadSpec(await makeSpec(sampled));
  const answers = answersMix(4, 3);
  const counts = new Float64Array(4);
  for (const r of new Client(spec).reports(answers).reports) counts[r.payload]++;
  const expected = new Float64Array(4);
  for (const x of answers) for (let y = 0; y < 4; y++) expected[y] += (truth.weights[y] + (x === y ? truth.keep : 0)) / G;
  let stat = 0;
  for (let y = 0; y < 4; y++) stat += (counts[y] - expected[y]) ** 2 / expected[y];
  return chi2sf(stat, 3);
}

test("direct sampling with crypto randomness fits the channel (chi-square, alpha 1e-6)", async () => {
  assert.ok((await directPvalue(direct(), direct())) > ALPHA);
});

test("power: a direct client keeping 25 % more often fails the same test", async () => {
  assert.ok((await directPvalue(direct(1.25), direct())) < ALPHA);
});

// ---------------------------------------------------------------- unary
function unary(boost = 1) {
  const d = 10;
  const a = Array.from({ length: d }, (_, k) => Math.round(G * (0.5 + 0.02 * k) * boost));
  const b = Array.from({ length: d }, (_, k) => Math.round(G * (0.2 + 0.01 * k)));
  return { kind: "unary", d, a, b, notion: "LDP", epsilons: Array(d).fill(3) };
}

async function unaryPvalue(sampled, truth) {
  const spec = await loadSpec(await makeSpec(sampled));
  const d = truth.d;
  const answers = answersMix(d, 0);
  const ones = new Float64Array(d);
  for (const r of new Client(spec).reports(answers).reports) {
    const bytes = base64Decode(r.payload);
    for (let k = 0; k < d; k++) ones[k] += (bytes[k >> 3] >> (7 - (k & 7))) & 1;
  }
  const holders = new Float64Array(d);
  for (const x of answers) holders[x]++;
  // bits of one report use distinct words, so the d bit counts are independent binomial sums
  let stat = 0;
  for (let k = 0; k < d; k++) {
    const pa = truth.a[k] / G;
    const pb = truth.b[k] / G;
    const mean = holders[k] * pa + (N - holders[k]) * pb;
    const variance = holders[k] * pa * (1 - pa) + (N - holders[k]) * pb * (1 - pb);
    stat += (ones[k] - mean) ** 2 / variance;
  }
  return chi2sf(stat, d);
}

test("unary sampling with crypto randomness fits the channel (chi-square over bits, alpha 1e-6)", async () => {
  assert.ok((await unaryPvalue(unary(), unary())) > ALPHA);
});

test("power: a unary client whose own bit is 10 % likelier fails the same test", async () => {
  assert.ok((await unaryPvalue(unary(1.1), unary())) < ALPHA);
});
