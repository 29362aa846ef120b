// Exact arithmetic: rigorous bounds of e^x and ratio <= e^eps decided without rounding error.
import test from "node:test";
import assert from "node:assert/strict";
import { expBounds, ratioWithin, verify, loadSpec } from "../pldp-client.mjs";
import { makeSpec, febsfLike, hiddenUnary, tightBinary, G } from "./fixtures.mjs";

// e to 53 decimals (OEIS A001113)
const E53 = 271828182845904523536028747135266249775724709369995957n; // e * 10^53, truncated
const TEN53 = 10n ** 53n;

/** floor(e * 2^bits) from the series sum 1/n!, computed independently of expBounds. */
function floorE(bits) {
  const extra = 64n;
  const one = 1n << (BigInt(bits) + extra);
  let term = one;
  let sum = 0n;
  for (let n = 1n; term > 0n; n++) {
    sum += term;
    term /= n; // each floor loses < 1 unit; far fewer than 2^64 terms
  }
  return sum >> extra;
}

test("floor(e * 2^60) / 2^60 holds against eps = 1 and ceil(e * 2^60) / 2^60 fails", () => {
  const F = (E53 << 60n) / TEN53;
  assert.equal(F, floorE(60));
  const den = 1n << 60n;
  assert.equal(ratioWithin(F, den, 1), true);
  assert.equal(ratioWithin(F + 1n, den, 1), false);
});

test("the decision refines past 64 bits when it must: floor/ceil of e * 2^300", () => {
  const F = floorE(300);
  const den = 1n << 300n;
  assert.equal(ratioWithin(F, den, 1), true);
  assert.equal(ratioWithin(F + 1n, den, 1), false);
  assert.equal(ratioWithin(F * 3n, den * 3n, 1), true); // unreduced fractions
});

test("expBounds brackets e^x tightly for small, mid and large x", () => {
  for (const [num, den] of [
    [1n, 3n],
    [1n, 1n],
    [22n, 7n],
    [700n, 1n],
    [1n, 1n << 60n],
  ]) {
    const { lo, hi, p } = expBounds(num, den, 64);
    assert.ok(lo <= hi);
    assert.ok((hi - lo) * (1n << 58n) < lo, "hi/lo - 1 < 2^-58");
    const x = Number(num) / Number(den);
    const approx = Number((lo * 10n ** 15n) >> BigInt(p)) / 1e15;
    if (x < 100) assert.ok(Math.abs(approx / Math.exp(x) - 1) < 1e-14, `${num}/${den}`);
  }
  assert.deepEqual(expBounds(0n, 5n), { lo: 1n, hi: 1n, p: 0 });
});

test("ratioWithin edge cases: infinite budget, infinite ratio, ratio <= 1, budgets as exact binary64", () => {
  assert.equal(ratioWithin(5n, 0n, Infinity), true);
  assert.equal(ratioWithin(5n, 0n, 3), false);
  assert.equal(ratioWithin(7n, 7n, 0), true);
  assert.equal(ratioWithin(8n, 7n, 0), false);
  assert.equal(ratioWithin(3n, 1n, 1.098613), true); // ln 3 = 1.0986122886...
  assert.equal(ratioWithin(3n, 1n, 1.098612), false);
  // 0.5 is exact in binary64; e^0.5 = 1.6487212707001282...
  assert.equal(ratioWithin(16487212707n, 10n ** 10n, 0.5), true);
  assert.equal(ratioWithin(16487212708n, 10n ** 10n, 0.5), false);
  // exact fractions as budgets: [1, 2] is 0.5
  assert.equal(ratioWithin(16487212707n, 10n ** 10n, [1n, 2n]), true);
});

test("verify: an epsilon-tight spec holds; realised is ln of the exact ratio", async () => {
  const node = tightBinary();
  const v = verify(await loadSpec(await makeSpec(node)));
  assert.equal(v.holds, true);
  assert.equal(v.rows.length, 1);
  const [row] = v.rows;
  assert.equal(row.part, "root");
  assert.equal(row.subject, "output 0 (+1)");
  assert.equal(row.claimed, 1);
  assert.ok(row.realised <= 1 && row.realised > 1 - 1e-8, String(row.realised));
  // one unit less weight is past the claim
  const w = node.weights[0] - 1;
  const over = { ...node, keep: G - 2 * w, weights: [w, w] };
  assert.equal(verify(await makeSpec(over)).holds, false);
});

test("verify: the level's protection by the whole report (§3.4), hand-computed", async () => {
  // perturbed level, direct items: max_l pi(l|t)/pi(l|t') = 3 times the item part 2: ratio 6
  const v = verify(await makeSpec(febsfLike(1.8)));
  const row = v.rows.at(-1);
  assert.equal(row.part, "root the level itself");
  assert.ok(Math.abs(row.realised - Math.log(6)) < 1e-12);
  assert.equal(v.holds, true);
  assert.equal(verify(await makeSpec(febsfLike(1.79))).holds, false);
  assert.equal(verify(await makeSpec(febsfLike("inf"))).holds, true);
  // the level report's own rows and the items' rows are there too
  assert.deepEqual(
    v.rows.map((r) => r.part),
    ["root level 0 (eps=1.1)", "root level 1 (eps=2)", "root level report", "root the level itself"],
  );
  assert.equal(v.ldp_epsilon, 2 + 1.1);
  // hidden level, unary items: no level report (factor 1); bits 2 * 2 = 4
  const h = verify(await makeSpec(hiddenUnary(1.39)));
  assert.ok(Math.abs(h.rows.at(-1).realised - Math.log(4)) < 1e-12);
  assert.equal(h.holds, true);
  assert.equal(verify(await makeSpec(hiddenUnary(1.38))).holds, false);
});
