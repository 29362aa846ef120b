// loadSpec: what it accepts, and each refusal with its message.
import test from "node:test";
import assert from "node:assert/strict";
import { loadSpec, verify, Client, SpecError } from "../pldp-client.mjs";
import { AnswerRange, HashedAnswers, answerLabels, labelIndex, textBucket } from "../client-labels.mjs";
import { xxh32 } from "../client-xxh32.mjs";
import { largest, smallest } from "../client-checks.mjs";
import { makeSpec, resign, clone, krr, oue, tightBinary, febsfLike, hiddenUnary, lumpy, G } from "./fixtures.mjs";

/** Edit a copy of a spec, re-sign it, and expect loadSpec to refuse it with `message`. */
async function refused(spec, edit, message, { sign = true } = {}) {
  const copy = clone(spec);
  edit(copy);
  if (sign) await resign(copy);
  await assert.rejects(loadSpec(copy), (err) => {
    assert.ok(err instanceof SpecError, `expected a SpecError, got ${err}`);
    assert.match(err.message, message);
    return true;
  });
}

const root = (s) => s.sampler.root;

test("a good spec loads from text or object, deeply frozen and equal to its JSON", async () => {
  const spec = await makeSpec(krr(3, 1), { labels: ["linux", "mac", "windows"] });
  for (const input of [spec, JSON.stringify(spec), JSON.stringify(spec, null, 2)]) {
    const loaded = await loadSpec(input);
    assert.deepEqual(JSON.parse(JSON.stringify(loaded)), spec);
    assert.ok(Object.isFrozen(loaded) && Object.isFrozen(loaded.sampler.root.weights) && Object.isFrozen(loaded.labels));
  }
  const copy = clone(spec);
  const loaded = await loadSpec(copy);
  copy.labels[0] = "changed"; // the loaded spec is a private copy
  assert.equal(loaded.labels[0], "linux");
});

test("the format, the members and the id", async () => {
  const spec = await makeSpec(krr(3, 1));
  await assert.rejects(loadSpec("{not json"), /not valid JSON/);
  await assert.rejects(loadSpec("[1, 2]"), /must be a JSON object/);
  await refused(spec, (s) => (s.format = "pldp.spec/2"), /unknown spec format "pldp\.spec\/2"/);
  await refused(spec, (s) => delete s.oracle, /the spec lacks \["oracle"\]/);
  await refused(spec, (s) => (s.extra = 1), /unknown members \["extra"\]/);
  await refused(spec, (s) => (s.id = s.id.toUpperCase()), /32 lower-case hex digits/, { sign: false });
  // any edit without a new id: refused as altered
  await refused(spec, (s) => (s.question = "another question"), /does not match its content .*: it was altered/, { sign: false });
  await refused(spec, (s) => (root(s).keep -= 1), /does not match its content/, { sign: false });
});

test("labels: distinct strings, as many as the sampler's items; MPLDP one list per attribute", async () => {
  const spec = await makeSpec(krr(3, 1));
  await refused(spec, (s) => (s.labels = ["a", "a", "c"]), /labels has duplicate labels: \["a"\]/);
  await refused(spec, (s) => (s.labels = ["a", "b"]), /labels has 2 answers but the sampler takes 3/);
  await refused(spec, (s) => (s.labels = ["a", 2, "c"]), /labels must be a list of at least 2 strings/);
  await refused(spec, (s) => (s.labels = "abc"), /labels must be a list/);
  await refused(spec, (s) => (s.question = ["q"]), /question must be a string/);
  const multi = await makeSpec({ kind: "attributes", parts: [krr(2, 1), oue(3, 1)] });
  await loadSpec(multi);
  await refused(multi, (s) => (s.labels = [["a", "b"]]), /labels must hold one list per attribute \(2\)/);
  await refused(multi, (s) => (s.labels[1] = ["x", "y", "x"]), /labels\[1\] has duplicate labels/);
  await refused(multi, (s) => (s.labels[0] = ["x", "y", "z"]), /labels\[0\] has 3 answers but attribute 0 takes 2/);
  await refused(multi, (s) => (s.question = "one?"), /question must hold one question per attribute \(2\)/);
});

test('labels {"range": d}: the answers 0 .. d-1, given as integers or their decimal strings; any other object refused', async () => {
  const spec = await makeSpec(krr(3, 1), { labels: { range: 3 } });
  const client = new Client(await loadSpec(spec), { random: (n) => new Uint32Array(n) });
  assert.deepEqual(client.report("2"), client.report(2));
  for (const bad of ["3", "02", "-1", " 1", "1.0", "x"]) assert.throws(() => client.report(bad), /not one of the spec's labels/);
  const wrong = /labels must be a list of labels or \{"range": d\} with d an integer >= 2 and no other member/;
  for (const value of [{ range: -1 }, { range: 1 }, { range: 2.5 }, { range: true }, { range: "3" }, { range: 3, extra: 1 }, {}]) {
    await refused(spec, (s) => (s.labels = value), wrong);
  }
  await refused(spec, (s) => (s.labels = { range: 4 }), /labels has 4 answers but the sampler takes 3/);
  const multi = await makeSpec({ kind: "attributes", parts: [krr(2, 1), oue(3, 1)] }, { labels: [["a", "b"], { range: 3 }] });
  await loadSpec(multi);
  await refused(multi, (s) => (s.labels[1] = { range: 3, d: 3 }), /labels\[1\] must be a list of labels or \{"range": d\}/);
});

test("answerLabels reads both forms alike; the range's labels are made when asked for", () => {
  const range = answerLabels({ range: 12 });
  const list = answerLabels(Array.from({ length: 12 }, (_, i) => String(i)));
  for (const labels of [range, list]) {
    assert.equal(labels.length, 12);
    assert.deepEqual([labels.at(0), labels.at(11), labels.at(-1), labels.at(12)], ["0", "11", "11", undefined]);
    assert.deepEqual([labels.indexOf("7"), labels.indexOf("12"), labels.indexOf("07"), labels.indexOf(7)], [7, -1, -1, -1]);
    assert.deepEqual(labels.filter((_, i) => i % 5 === 0), ["0", "5", "10"]);
    assert.deepEqual([...labels], list);
  }
  assert.ok(range instanceof AnswerRange && labelIndex({ range: 12 }).get("11") === 11 && labelIndex({ range: 12 }).get("1e1") === undefined);
});

test("xxh32 of bytes: the specification's vectors", () => {
  const utf8 = (s) => new TextEncoder().encode(s);
  const got = ["", "a", "abc", "Nobody inspects the spammish repetition"].map((s) => xxh32(utf8(s)));
  assert.deepEqual(got, [0x02cc5d05, 0x550d7456, 0x32d153ff, 0xe2293b2f]);
  assert.equal(xxh32(new Uint8Array([0x39, 0x30, 0, 0]), 987654321), 3404038053); // the sampler's item hash of 12345
});

test('labels {"hashed": d, ...}: text only, normalised (NFC, ASCII white space trimmed), bounded; any other object refused', async () => {
  const form = { hashed: 5, hash: "xxh32", normalize: "NFC" };
  const spec = await makeSpec(krr(5, 1), { labels: form });
  const client = new Client(await loadSpec(spec), { random: (n) => new Uint32Array(n) });
  assert.deepEqual(client.report(" cafe\u0301\n"), client.report("café"));
  assert.equal(textBucket("\u00a0café", 1000) === textBucket("café", 1000), false); // NBSP is not trimmed
  for (const [bad, why] of [[2, /text \(a string\)/], ["", /empty/], [" \t\r\n", /empty/], ["é".repeat(129), /258 UTF-8 bytes/], ["\ud800", /lone surrogate/]]) {
    assert.throws(() => client.report(bad), why);
  }
  assert.doesNotThrow(() => client.report(` ${"a".repeat(256)} `)); // 256 bytes once trimmed
  const wrong = /labels must be \{"hashed": d, "hash", "normalize"\} with d an integer >= 2/;
  for (const value of [{ ...form, hashed: 1 }, { ...form, hashed: true }, { ...form, hashed: "5" }, { hashed: 5 }, { ...form, max: 256 }, { ...form, range: 5 }]) {
    await refused(spec, (s) => (s.labels = value), wrong);
  }
  await refused(spec, (s) => (s.labels = { ...form, hash: "xxh64" }), /labels\.hash must be "xxh32" \(the only one this version knows\), got "xxh64"/);
  await refused(spec, (s) => (s.labels = { ...form, normalize: "NFKC" }), /labels\.normalize must be "NFC"/);
  await refused(spec, (s) => (s.labels = { ...form, hashed: 6 }), /labels has 6 answers but the sampler takes 5/);
  const labels = answerLabels(form);
  assert.ok(labels instanceof HashedAnswers && labelIndex(form) instanceof HashedAnswers);
  assert.deepEqual([labels.length, labels.at(4), labels.indexOf("4")], [5, "4", 4]); // the buckets, by number
});

test("the sampler: grid_bits 32, known kinds, exact members", async () => {
  const spec = await makeSpec(krr(3, 1));
  await refused(spec, (s) => (s.sampler.grid_bits = 31), /sampler\.grid_bits must be 32, got 31/);
  await refused(spec, (s) => (s.sampler.extra = 0), /exactly 'grid_bits' and 'root'/);
  await refused(spec, (s) => (root(s).kind = "gaussian"), /sampler\.root must be a node with kind one of .*got "gaussian"/);
  await refused(spec, (s) => (s.sampler.root = [1]), /sampler\.root must be a node/);
  await refused(spec, (s) => delete root(s).notion, /sampler\.root lacks \["notion"\]/);
  await refused(spec, (s) => (root(s).bias = 1), /sampler\.root has unknown members \["bias"\]/);
});

test("direct nodes: integers on the grid, keep >= 1, weights >= 0, keep + sum(weights) = 2^32", async () => {
  const spec = await makeSpec(krr(3, 1));
  const moveTo = (s, keep) => {
    const r = root(s);
    r.weights[0] += r.keep - keep;
    r.keep = keep;
  };
  await refused(spec, (s) => moveTo(s, 0), /sampler\.root\.keep = 0 is outside \[1, 4294967296\]/);
  await refused(spec, (s) => (root(s).weights[1] += 0.5), /sampler\.root\.weights\[1\] must be an integer, got \d+\.5/);
  await refused(spec, (s) => (root(s).weights[2] = "5"), /weights\[2\] must be an integer/);
  await refused(spec, (s) => (root(s).weights = root(s).weights.slice(1)), /weights must be a list of 3 integers/);
  await refused(spec, (s) => ((root(s).weights[0] = -1), (root(s).keep += root(s).weights[0] + 1)), /weights\[0\] = -1 is outside/);
  await refused(spec, (s) => (root(s).weights[0] += 1), /sampler\.root: keep \+ sum\(weights\) = 4294967297 must be 2\*\*32 = 4294967296/);
  await refused(spec, (s) => (root(s).keep -= 1), /keep \+ sum\(weights\) = 4294967295 must be 2\*\*32/);
  await refused(spec, (s) => (root(s).d = 2.5), /sampler\.root\.d must be an integer/);
  await refused(spec, (s) => (root(s).notion = "DP"), /notion must be one of/);
  await refused(spec, (s) => (root(s).epsilons[0] = 0), /epsilons\[0\] must be a budget > 0 or "inf", got 0/);
  await refused(spec, (s) => (root(s).epsilons[0] = "infinite"), /epsilons\[0\] must be a budget/);
  await refused(spec, (s) => root(s).epsilons.pop(), /epsilons must be a list of 3 budgets/);
});

test("unary nodes: 0 < b < a < 2^32, finite budgets", async () => {
  const spec = await makeSpec(oue(4, 1));
  await refused(spec, (s) => (root(s).b[2] = root(s).a[2]), /sampler\.root: need b\[k\] < a\[k\] for every bit; not so at \[2\]/);
  await refused(spec, (s) => (root(s).a[0] = G), /sampler\.root\.a\[0\] = 4294967296 is outside \[1, 4294967295\]/);
  await refused(spec, (s) => (root(s).b[3] = 0), /sampler\.root\.b\[3\] = 0 is outside/);
  await refused(spec, (s) => root(s).a.pop(), /sampler\.root\.a must be a list of 4 integers/);
  await refused(spec, (s) => (root(s).epsilons[1] = "inf"), /epsilons\[1\] must be a budget > 0, got "inf"/);
  await refused(spec, (s) => (root(s).notion = "IPLDP"), /notion must be one of \["LDP","MinID-LDP","AvgID-LDP","ULDP"\]/);
});

test("unary nodes under ULDP: b = 0 exactly on the items of budget inf, one sensitive item at least", async () => {
  const uldp = (s) => {
    root(s).notion = "ULDP";
    root(s).epsilons[3] = "inf";
    root(s).b[3] = 0;
    root(s).a[3] = Math.floor(0.3 * G); // at most 1 - a / (b e) = 0.316 of 2^32 for OUE's a, b at 1
  };
  const spec = await makeSpec(oue(4, 1));
  const ok = clone(spec);
  uldp(ok);
  await resign(ok);
  await loadSpec(ok);
  const bits = /sampler\.root: under ULDP b\[k\] = 0 exactly for the items of budget inf; not so at \[/;
  await refused(spec, (s) => (uldp(s), (root(s).b[3] = 1)), bits);
  const claim = /privacy claim fails: root, item 0 \(\+2\) vs item 3: realised epsilon 1\.313/;
  await refused(spec, (s) => (uldp(s), (root(s).a[3] = root(s).a[0])), claim); // OUE's own a = 1/2 is too large
  await refused(spec, (s) => (uldp(s), (root(s).b[0] = 0)), bits);
  await refused(spec, (s) => (root(s).b[3] = 0), /sampler\.root\.b\[3\] = 0 is outside/);
  const none = (s) => {
    root(s).notion = "ULDP";
    root(s).epsilons = root(s).epsilons.map(() => "inf");
    root(s).b = root(s).b.map(() => 0);
  };
  await refused(spec, none, /a ULDP node needs at least one sensitive item/);
});

test("padding nodes: a unary inner node over d + ell items", async () => {
  const spec = await makeSpec({ kind: "padding", d: 3, ell: 2, inner: oue(5, 1) });
  await loadSpec(spec);
  await refused(spec, (s) => (root(s).ell = 3), /sampler\.root\.inner must be a unary node over d \+ ell = 6 items/);
  await refused(spec, (s) => (root(s).inner = krr(5, 1)), /inner must be a unary node/);
  await refused(spec, (s) => (root(s).ell = 0), /sampler\.root\.ell = 0 is outside/);
});

test("leveled nodes: structure, the level report and the claims of each level", async () => {
  const spec = await makeSpec(febsfLike(1.8));
  await refused(spec, (s) => root(s).items.pop(), /sampler\.root\.items must hold one node per level \(2\)/);
  await refused(spec, (s) => (root(s).items[1] = oue(2, 2)), /with the level perturbed, every level's node must have the same kind and size/);
  await refused(spec, (s) => delete root(s).level_sampler, /needs a level_sampler to perturb the level/);
  await refused(spec, (s) => (root(s).level_sampler = krr(3, 1.1)), /level_sampler must be a direct node over the 2 levels/);
  await refused(spec, (s) => delete root(s).level_epsilon, /must state level_epsilon, the protection of the perturbed level/);
  await refused(spec, (s) => (root(s).level_report = "clear"), /level_sampler is only for a perturbed level/);
  await refused(
    spec,
    (s) => ((root(s).level_report = "clear"), delete root(s).level_sampler),
    /level_epsilon makes no sense for a level sent in the clear/,
  );
  await refused(spec, (s) => (root(s).level_report = "secret"), /level_report must be one of/);
  await refused(spec, (s) => (root(s).levels[0] = 1.2), /items\[0\] must claim the level's budget 1\.2 for every item/);
  await refused(spec, (s) => (root(s).d = 3), /sampler\.root\.d = 3 is outside \[2, 2\]/);
  await refused(spec, (s) => (root(s).levels = []), /levels must be a non-empty list/);
  await refused(
    spec,
    (s) => (root(s).items[0] = { kind: "padding", d: 1, ell: 1, inner: oue(2, 1.1) }),
    /items must be direct, unary, hashed, hadamard or subset nodes/,
  );
  // Hadamard response over 2 items at the second level's budget (pldp.HR(2.0, 2).sampler())
  const hadamard = { kind: "hadamard", d: 2, K: 4, keep: 3782994644, epsilon: 2 };
  await refused(spec, (s) => (root(s).items[1] = hadamard), /with the level perturbed, every level's node must have the same kind and size, and one report format/);
  // a clear level may mix kinds (APLDP), large-domain leaves too
  const mixed = febsfLike(1.8);
  mixed.level_report = "clear";
  delete mixed.level_sampler;
  delete mixed.level_epsilon;
  mixed.items[1] = oue(2, 2);
  await loadSpec(await makeSpec(mixed));
  mixed.items[1] = hadamard;
  await loadSpec(await makeSpec(mixed));
});

test("attributes nodes: non-empty parts, no nesting, no padding", async () => {
  const spec = await makeSpec({ kind: "attributes", parts: [krr(2, 1), oue(3, 1)] });
  await refused(spec, (s) => ((root(s).parts = []), (s.labels = []), (s.question = [])), /sampler\.root\.parts must be a non-empty list/);
  await refused(spec, (s) => (root(s).parts[1] = { kind: "attributes", parts: [oue(3, 1)] }), /parts must be direct, unary or leveled nodes/);
});

test("a threshold raised past its claim is refused by loadSpec and failed by verify", async () => {
  const spec = await makeSpec(tightBinary());
  await loadSpec(spec);
  const raised = clone(spec);
  root(raised).keep += 1000;
  root(raised).weights = root(raised).weights.map((w) => w - 500);
  await resign(raised);
  await assert.rejects(loadSpec(raised), /the spec's privacy claim fails: root, output 0 \(\+1\): realised epsilon 1\.0000\d+ > claimed 1 \(1 failing check\(s\)\)/);
  const v = verify(raised);
  assert.equal(v.holds, false);
  assert.ok(v.rows[0].realised > 1 && !v.rows[0].holds);
  // unary: a raised past its claim
  const u = await makeSpec(oue(4, 1));
  await refused(u, (s) => (root(s).a[0] += 2 ** 28), /privacy claim fails: root, item 0 vs item 1 \(\+2\)/);
  // a zero weight under a finite budget: the output would reveal its holder
  await refused(await makeSpec(lumpy()), (s) => (root(s).epsilons[1] = 10), /privacy claim fails: root, output 1/);
  // the level's protection: a spec claiming less than the truth is refused
  await refused(await makeSpec(febsfLike(1.8)), (s) => (root(s).level_epsilon = 1.79), /privacy claim fails: root the level itself/);
  await refused(await makeSpec(hiddenUnary(1.39)), (s) => (root(s).level_epsilon = 1.38), /privacy claim fails: root the level itself/);
});

test("MinID-LDP and AvgID-LDP pair claims", async () => {
  // items 0, 1 at eps 0.5 and item 2 at eps 2; thresholds of the 0.5 items tight enough for 0.5
  const lo = oue(2, 0.5);
  const node = {
    kind: "unary",
    d: 3,
    a: [G / 2, G / 2, G / 2],
    b: [lo.b[0], lo.b[0], lo.b[0]],
    notion: "MinID-LDP",
    epsilons: [0.5, 0.5, 2],
  };
  const v = verify(await makeSpec(node));
  assert.equal(v.holds, true);
  assert.deepEqual(
    v.rows.map((r) => [r.subject, r.claimed]),
    [
      ["item 0 (+1) vs item 0 (+1)", 0.5],
      ["item 0 (+1) vs item 2", 0.5],
      ["item 2 vs item 0 (+1)", 0.5],
    ],
  );
  const avg = verify(await makeSpec({ ...node, notion: "AvgID-LDP" }));
  assert.deepEqual(avg.rows.map((r) => r.claimed), [0.5, 1.25, 1.25]);
  assert.equal(avg.holds, true);
  // item 2's own bit may be as informative as AvgID allows but not as LDP at min(eps) allows
  const strong = { ...node, notion: "AvgID-LDP", a: [G / 2, G / 2, Math.floor(G * 0.7)] };
  assert.equal(verify(await makeSpec(strong)).holds, true);
  assert.equal(verify(await makeSpec({ ...strong, notion: "LDP" })).holds, false);
});

test("a Client takes only a spec returned by loadSpec", async () => {
  const spec = await makeSpec(krr(3, 1));
  assert.throws(() => new Client(spec), /needs a spec returned by loadSpec/);
  assert.throws(() => new Client(Object.freeze(clone(spec))), /needs a spec returned by loadSpec/);
  const loaded = await loadSpec(spec);
  assert.throws(() => new Client(loaded, { random: 5 }), /random must be a function/);
  assert.equal(new Client(loaded).specId, spec.id);
});

test("largest and smallest take a large domain's million values, where spreading them throws", () => {
  const values = new Float64Array(1_000_000).fill(0.5);
  values[777_777] = 3;
  values[12] = 0.25;
  assert.throws(() => Math.max(...values), RangeError); // what the pages and the client did before
  assert.equal(largest(values), 3);
  assert.equal(smallest(values), 0.25);
  assert.equal(largest([]), -Infinity);
  assert.equal(smallest([Infinity, 2, Infinity]), 2);
  assert.ok(Number.isNaN(largest([1, NaN, 2]))); // as Math.max: a NaN anywhere is the answer
});

