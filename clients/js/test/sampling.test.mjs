// Sampling of every node kind from hand-made word streams, with hand-computed reports.
import test from "node:test";
import assert from "node:assert/strict";
import { loadSpec, Client, AnswerError } from "../pldp-client.mjs";
import { makeSpec, krr, oue, lumpy, febsfLike, hiddenUnary, stream, G, ID, ID_HEX } from "./fixtures.mjs";

async function clientOf(root, words, opts) {
  const spec = await loadSpec(await makeSpec(root, opts));
  const random = stream(words);
  return { spec, client: new Client(spec, { random }), random };
}

test("report: members in the wire order, the id from the first 4 words, word 0 first", async () => {
  const { spec, client, random } = await clientOf(krr(3, 1), [...ID, 0]);
  const report = client.report("b");
  assert.deepEqual(Object.keys(report), ["format", "spec", "id", "payload"]);
  assert.deepEqual(report, { format: "pldp.report/1", spec: spec.id, id: ID_HEX, payload: 1 });
  assert.equal(random.used, 5);
  const again = (await clientOf(krr(3, 1), [...ID, 0])).client;
  assert.equal(again.reportJSON(1), `{"format":"pldp.report/1","spec":"${spec.id}","id":"${ID_HEX}","payload":1}`);
});

test("direct: keep branch, then the lie branch's binary search at v = cum - 1 and v = cum", async () => {
  const node = lumpy(); // keep 1000, weights [100, 0, 200, rest]: cum [100, 100, 300, 2^32 - 1000]
  const cases = [
    [999, 1], // w < keep: the true item (1)
    [1000, 0], // v = 0
    [1099, 0], // v = 99 = cum[0] - 1
    [1100, 2], // v = 100 = cum[0] = cum[1]: item 1 has weight 0, so 2
    [1299, 2], // v = 299 = cum[2] - 1
    [1300, 3], // v = 300 = cum[2]
    [G - 1, 3], // the last word
  ];
  const { client } = await clientOf(node, cases.flatMap(([w]) => [...ID, w]));
  for (const [w, want] of cases) assert.equal(client.report(1).payload, want, `word ${w}`);
});

test("direct with equal weights: y = floor((w - keep) / weight) at the boundaries", async () => {
  const node = krr(3, 1);
  const { keep } = node;
  const w = node.weights[0];
  const cases = [
    [keep - 1, 2],
    [keep, 0],
    [keep + w - 1, 0],
    [keep + w, 1],
    [keep + 2 * w - 1, 1],
    [keep + 2 * w, 2],
    [G - 1, 2],
  ];
  const { client } = await clientOf(node, cases.flatMap(([word]) => [...ID, word]));
  for (const [word, want] of cases) assert.equal(client.report("c").payload, want, `word ${word}`);
});

test("unary: bit k is w[k] < (k == x ? a[k] : b[k]), packed MSB first, base64", async () => {
  const node = oue(10, 1);
  const B = node.b[0];
  const A = node.a[0]; // 2^31 > B
  // bit:   0      1  2  3 (x)   4      5      6  7      8  9
  const coins = [B - 1, B, 0, A - 1, A - 1, G - 1, B, B - 1, A, 5];
  // for x = 3: 1 0 1 1 0 0 0 1 0 1 -> 10110001 01000000 -> 0xB1 0x40
  const { client, random } = await clientOf(node, [...ID, ...coins, ...ID, ...coins]);
  assert.equal(client.report(3).payload, "sUA=");
  assert.equal(random.used, 14);
  // the same coins for x = 8: bit 3 is now 0 (A - 1 >= B) and bit 8 is A < A: 0 -> 0xA1 0x40
  assert.equal(client.report(8).payload, "oUA=");
});

test("padding: uniform(m)'s rejection branch, K always drawn, the own item and the dummy", async () => {
  const root = { kind: "padding", d: 3, ell: 3, inner: oue(6, 1) };
  const B = root.inner.b[0];
  const inner = Array(6).fill(B); // b-bits 0, the sampled item's bit 1 (B < a)
  // set {c, a, 1} = [0, 1, 2], L = 3: 2^32 - 1 is rejected (2^32 mod 3 = 1), then J = 4 mod 3 = 1
  // -> item 1; K: 2^32 - 1 rejected, 5 mod 3 = 2 (drawn though unused); bits 010000 -> 0x40
  const { client, random } = await clientOf(root, [...ID, G - 1, 4, G - 1, 5, ...inner, ...ID, 2, 4, ...inner, ...ID, 1, 0, ...inner]);
  assert.equal(client.report(["c", "a", 1]).payload, "QA==");
  assert.equal(random.used, 14);
  // the empty set: L = ell = 3, J = 2 >= s = 0 -> the dummy d + K with K = 4 mod 3 = 1: item 4
  assert.equal(client.report([]).payload, "CA=="); // 000010 -> 0x08
  assert.equal(random.used, 26);
  // {b} = [1]: L = 3, J = 1 >= s = 1 -> dummy 3 + (0 mod 3) = 3: bits 000100 -> 0x10
  assert.equal(client.report(["b"]).payload, "EA==");
  assert.equal(random.used, 38);
});

test("padding: a set larger than ell samples from its own items, L = s", async () => {
  const root = { kind: "padding", d: 5, ell: 2, inner: oue(7, 1) };
  const B = root.inner.b[0];
  // s = 5 > ell: J = 9 mod 5 = 4 -> the largest item (4); K = 7 mod 2 = 1
  const { client } = await clientOf(root, [...ID, 9, 7, ...Array(7).fill(B)]);
  assert.equal(client.report([4, 0, 3, 1, 2]).payload, "CA=="); // 0000100 -> 0x08
});

test("leveled: the item's words, then the perturbed level's word; clear; hidden", async () => {
  // level 1 keeps w.p. 3/4 (keep 3G/4, weights G/8); the level report keeps w.p. 1/2 (weights G/4)
  const perturbed = await clientOf(febsfLike(1.8), [
    ...ID, (3 * G) / 4 - 1, G / 2 + 5, // item kept (1); level lie v = 5 < G/4 -> level 0
    ...ID, (3 * G) / 4, 0, // item lie v = 0 -> 0; level kept -> 1
  ]);
  assert.deepEqual(perturbed.client.report("b", { level: 1 }).payload, { level: 0, data: 1 });
  assert.deepEqual(perturbed.client.report(1, { level: 1 }).payload, { level: 1, data: 0 });
  assert.equal(perturbed.random.used, 12);

  const clearNode = febsfLike(1.8);
  clearNode.level_report = "clear";
  delete clearNode.level_sampler;
  delete clearNode.level_epsilon;
  const clear = await clientOf(clearNode, [...ID, G / 2 + G / 4]); // level 0: v = G/4 -> 1
  const report = clear.client.report(0, { level: 0 });
  assert.deepEqual(Object.keys(report.payload), ["level", "data"]);
  assert.deepEqual(report.payload, { level: 0, data: 1 });
  assert.equal(clear.random.used, 5);

  // hidden, unary items at level 0 (a = G/2, b = G/4): bit 0 G/4 - 1 -> 1, bit 1 (x) G/2 - 1 -> 1
  const hidden = await clientOf(hiddenUnary(1.39), [...ID, G / 4 - 1, G / 2 - 1]);
  assert.deepEqual(hidden.client.report(1, { level: 0 }).payload, { data: "wA==" });
  assert.equal(hidden.random.used, 6);
});

test("attributes: every part in order, one payload each", async () => {
  const leveled = hiddenUnary(1.39);
  leveled.level_report = "clear";
  delete leveled.level_epsilon;
  const root = { kind: "attributes", parts: [leveled, lumpy()] };
  // part 0 at level 1 (a = 3G/4, b = G/8): bit 0 G/8 -> 0, bit 1 (x) 3G/4 - 1 -> 1: 0x40
  // part 1: 1100 -> v = 100 -> 2
  const { client, random } = await clientOf(root, [...ID, G / 8, (3 * G) / 4 - 1, 1100]);
  assert.deepEqual(client.report(["p1", 2], { levels: [1, null] }).payload, [{ level: 1, data: "QA==" }, 2]);
  assert.equal(random.used, 7);
});

test("reports: a batch is the reports made one at a time; level per answer or for all", async () => {
  const words = Array.from({ length: 400 }, (_, i) => (i * 2654435761 + 12345) >>> 0);
  const answers = ["a", 1, "b", 0, 1, "a"];
  const levels = [0, 1, 1, 0, 0, 1];
  const a = await clientOf(febsfLike(1.8), words);
  const b = await clientOf(febsfLike(1.8), words);
  const batch = a.client.reports(answers, { level: levels });
  assert.deepEqual(Object.keys(batch), ["format", "spec", "reports"]);
  assert.equal(batch.format, "pldp.batch/1");
  assert.equal(batch.spec, a.spec.id);
  const single = answers.map((x, i) => b.client.report(x, { level: levels[i] }));
  assert.deepEqual(batch.reports, single.map(({ id, payload }) => ({ id, payload })));
  const c = await clientOf(febsfLike(1.8), words);
  const d = await clientOf(febsfLike(1.8), words);
  assert.deepEqual(c.client.reports(answers, { level: 1 }).reports, d.client.reports(answers, { level: Array(6).fill(1) }).reports);
  // attributes: one levels array for all, or one per answer
  const leveled = hiddenUnary(1.39);
  leveled.level_report = "clear";
  delete leveled.level_epsilon;
  const root = { kind: "attributes", parts: [leveled, krr(3, 1)] };
  const e = await clientOf(root, words);
  const f = await clientOf(root, words);
  const rows = [["p0", 1], [1, "p2"], [0, 0]];
  assert.deepEqual(e.client.reports(rows, { levels: [1, null] }).reports, f.client.reports(rows, { levels: [[1, null], [1, null], [1, null]] }).reports);
});

test("bad answers and levels are refused before any word is drawn", async () => {
  const check = async (root, calls, opts) => {
    const { client, random } = await clientOf(root, [], opts);
    for (const [call, message] of calls) {
      assert.throws(() => call(client), (err) => err instanceof AnswerError && message.test(err.message));
      assert.equal(random.used, 0);
    }
  };
  await check(krr(3, 1), [
    [(c) => c.report("maybe"), /not one of the spec's labels/],
    [(c) => c.report(3), /integer in \[0, 3\)/],
    [(c) => c.report(-1), /integer in \[0, 3\)/],
    [(c) => c.report(1.5), /integer in \[0, 3\)/],
    [(c) => c.report(true), /a label \(string\) or an index/],
    [(c) => c.report(null), /a label \(string\) or an index/],
    [(c) => c.report(1, { level: 0 }), /no level choice/],
    [(c) => c.reports(["a", "zzz"]), /not one of the spec's labels/], // the whole batch is checked first
    [(c) => c.reports("a"), /answers must be an array/],
  ]);
  await check(febsfLike(1.8), [
    [(c) => c.report(1), /needs the user's chosen level \(an index in \[0, 2\)\)/],
    [(c) => c.report(1, { level: 2 }), /level must be an integer index in \[0, 2\)/],
    [(c) => c.report(1, { level: "1" }), /level must be an integer index/],
    [(c) => c.reports([1, 0], { level: [0] }), /one index per answer \(2\)/],
  ]);
  await check({ kind: "padding", d: 3, ell: 2, inner: oue(5, 1) }, [
    [(c) => c.report(["a", 0]), /repeats an item/],
    [(c) => c.report("a"), /a set of answers \(an array\)/],
    [(c) => c.report([3]), /integer in \[0, 3\)/],
  ]);
  const leveled = hiddenUnary(1.39);
  leveled.level_report = "clear";
  delete leveled.level_epsilon;
  await check({ kind: "attributes", parts: [leveled, krr(3, 1)] }, [
    [(c) => c.report(["p0"], { levels: [0, null] }), /one value per attribute \(2\)/],
    [(c) => c.report(["p0", 1]), /needs levels/],
    [(c) => c.report(["p0", 1], { levels: [0, 0] }), /attribute 1 has no level: levels\[1\] must be null/],
    [(c) => c.report(["p0", 1], { levels: [2, null] }), /levels\[0\] must be an integer index in \[0, 2\)/],
    [(c) => c.report(["p0", 1], { level: 0 }), /no level choice/],
    [(c) => c.report(["p9", 1], { levels: [0, null] }), /not one of the spec's labels/],
  ]);
});

test("the default source is the CSPRNG: distinct ids, hex form, batches of many reports", async () => {
  const spec = await loadSpec(await makeSpec(krr(3, 1)));
  const client = new Client(spec);
  const batch = client.reports(Array(40000).fill("a"));
  const ids = new Set(batch.reports.map((r) => r.id));
  assert.equal(ids.size, 40000);
  for (const id of ids) assert.match(id, /^[0-9a-f]{32}$/);
  assert.ok(batch.reports.every((r) => [0, 1, 2].includes(r.payload)));
});

test("an injected source must give n 32-bit words", async () => {
  const spec = await loadSpec(await makeSpec(krr(3, 1)));
  assert.throws(() => new Client(spec, { random: (n) => new Uint32Array(n - 1) }).report(0), /returned \d+ words/);
  assert.throws(() => new Client(spec, { random: (n) => Array(n).fill(-1) }).report(0), /32-bit unsigned words/);
  assert.equal(new Client(spec, { random: (n) => Array(n).fill(7) }).report(0).id, "00000007".repeat(4));
});
