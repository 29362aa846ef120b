// The heavy-hitter node (client-heavy.mjs) from hand-made word streams: the group by rejection, each
// part's item (a prefix's fingerprint, the word's, SFP's tagged fragment) and the words it draws; the
// free-text answer's row; the free-text labels; the whole report's claim.
import test from "node:test";
import assert from "node:assert/strict";
import { AnswerError, Client, loadSpec, verify } from "../pldp-client.mjs";
import { hashValue } from "../client-hashed.mjs";
import { xxh32 } from "../client-xxh32.mjs";
import { clone, makeSpec, resign, stream, G, ID } from "./fixtures.mjs";

const M = 2 ** 31 - 1; // the fingerprints' range
const FP_ABC = 852579327; // XXH32("abc") = 0x32d153ff, mod 2^31 - 1
const TEXT = { normalize: "NFC" };

/** OLH over the fingerprints, g values, a margin below eps. */
function olh(g, eps, d = M, family = "xxh32") {
  const w = Math.ceil(G / (Math.exp(eps) - 1 + g)) + 16;
  return { kind: "hashed", d, g, family, keep: G - g * w, weight: w, epsilon: eps };
}

const treehist = (maxBytes, stepBits) => ({
  kind: "heavy", protocol: "treehist", max_bytes: maxBytes, step_bits: stepBits, parts: [olh(8, 1), olh(8, 1)], epsilon: 2,
});

async function clientOf(root, words) {
  const spec = await loadSpec(await makeSpec(root, { labels: { text: root.max_bytes, ...TEXT } }));
  const random = stream(words);
  return { spec, client: new Client(spec, { random }), random };
}

test("heavy: the group by rejection, then each part's seed and value of its item (TreeHist)", async () => {
  const root = treehist(3, 4); // G = 24 / 4 = 6 depths; 2^32 mod 6 = 4: the last 4 words are refused
  const [prefix, word] = root.parts;
  // depth: G - 4 refused, then 6 * 7 + 5 -> depth 5, a prefix of 24 bits: the whole row "abc"
  // prefix part: seed 2 * 9 >>> 1 = 9, w = 0 < keep: H_9(fp("abc")); word part: seed 5, a lie to value 3
  const words = [...ID, G - 4, 47, 18, 0, 10, word.keep + 3 * word.weight];
  const { client, random } = await clientOf(root, words);
  const { payload } = client.report(" abc\n");
  assert.deepEqual(Object.keys(payload), ["depth", "prefix_seed", "prefix_value", "word_seed", "word_value"]);
  assert.deepEqual(payload, { depth: 5, prefix_seed: 9, prefix_value: hashValue(FP_ABC, 9, prefix.g), word_seed: 5, word_value: 3 });
  assert.equal(random.used, 10);
});

test("heavy: a prefix's last byte keeps its top bits only; the word is the whole padded row", async () => {
  const root = treehist(4, 4); // G = 8 (nothing refused); depth 0: 4 bits
  const fp = (bytes) => xxh32(Uint8Array.from(bytes)) % M;
  // "abc" = 61 62 63 00: depth 0 -> [0x60], depth 2 -> [0x61, 0x60]; the word -> 61 62 63 00
  for (const [depth, prefix] of [[0, [0x60]], [2, [0x61, 0x60]], [7, [0x61, 0x62, 0x63, 0]]]) {
    const { client } = await clientOf(root, [...ID, depth, 2 * 3, 0, 2 * 4, 0]);
    const { payload } = client.report("abc");
    assert.equal(payload.prefix_value, hashValue(fp(prefix), 3, 8), `depth ${depth}`);
    assert.equal(payload.word_value, hashValue(fp([0x61, 0x62, 0x63, 0]), 4, 8));
  }
});

test("heavy: SFP's fragment at position j, tagged by the word's fingerprint's low hash_bits bits (Toeplitz)", async () => {
  const dFrag = 2 ** (8 + 16);
  const root = {
    kind: "heavy", protocol: "sfp", max_bytes: 6, fragment_bytes: 2, hash_bits: 8,
    parts: [olh(4, 1, dFrag, "toeplitz"), olh(8, 1)], epsilon: 2,
  };
  // "abc" = 61 62 63 00 00 00; position 1 (G = 3, 2^32 mod 3 = 1: G - 1 refused): bytes 63 00
  const fp = xxh32(Uint8Array.from([0x61, 0x62, 0x63, 0, 0, 0])) % M;
  const item = (fp % 256) * 65536 + 0x6300;
  const { client, random } = await clientOf(root, [...ID, G - 1, 4, 2 * 77, 0, 2 * 5, 0]);
  const { payload } = client.report("abc");
  assert.deepEqual(Object.keys(payload), ["position", "fragment_seed", "fragment_value", "word_seed", "word_value"]);
  assert.deepEqual(payload, {
    position: 1, fragment_seed: 77, fragment_value: hashValue(item, 77, 4, "toeplitz"), word_seed: 5, word_value: hashValue(fp, 5, 8),
  });
  assert.equal(random.used, 10);
});

test("heavy: PEM's one part is named seed and value; its group a byte longer each", async () => {
  const root = { kind: "heavy", protocol: "pem", max_bytes: 3, parts: [olh(8, 2)], epsilon: 2 };
  const { client } = await clientOf(root, [...ID, 2, 2 * 6, 0]); // group 2 (3 groups, 2^32 mod 3 = 1): "abc"
  assert.deepEqual(client.report("abcdef").payload, { group: 2, seed: 6, value: hashValue(FP_ABC, 6, 8) });
});

test("heavy: answers are text, normalised and cut to max_bytes (inside a character too); bad ones draw no word", async () => {
  const root = { kind: "heavy", protocol: "pem", max_bytes: 4, parts: [olh(8, 2)], epsilon: 2 };
  const fp = (bytes) => xxh32(Uint8Array.from(bytes)) % M;
  // "日本" = e6 97 a5 e6 9c ac: cut to e6 97 a5 e6; "cafe\u0301" is "café" after NFC: 63 61 66 c3
  for (const [answer, row] of [["日本", [0xe6, 0x97, 0xa5, 0xe6]], ["\tcafe\u0301 ", [0x63, 0x61, 0x66, 0xc3]]]) {
    const { client } = await clientOf(root, [...ID, 3, 2 * 6, 0]);
    assert.equal(client.report(answer).payload.value, hashValue(fp(row), 6, 8));
  }
  const { client, random } = await clientOf(root, []);
  for (const bad of ["", " \t\r\n", 5, null, ["a"], "a\u0000b", "\ud800"]) assert.throws(() => client.report(bad), AnswerError);
  assert.throws(() => client.report("a", { level: 0 }), AnswerError);
  assert.equal(random.used, 0);
});

test("heavy: the labels are {text: max_bytes, normalize: NFC}; the claim is the parts' product within epsilon", async () => {
  const root = treehist(3, 4);
  const good = await makeSpec(root, { labels: { text: 3, ...TEXT } });
  const { rows, holds, ldp_epsilon } = verify(await loadSpec(good));
  assert.ok(holds && ldp_epsilon === 2);
  assert.deepEqual(rows.map((r) => [r.part, r.subject]), [
    ["root.prefix", "every pair of items"], ["root.word", "every pair of items"], ["root", "every pair of answers"],
  ]);
  for (const labels of [{ text: 4, ...TEXT }, { text: 3, normalize: "NFD" }, { text: 3 }, ["a", "b"], { range: 3 }]) {
    await assert.rejects(loadSpec(await resign({ ...clone(good), labels })), /labels of a free-text sampler must be/);
  }
  // each part within its own budget, the whole report not: 1 + 1 > 1.5
  const over = await resign({ ...clone(good), sampler: { grid_bits: 32, root: { ...root, epsilon: 1.5 } } });
  await assert.rejects(loadSpec(over), /root, every pair of answers: realised epsilon 1\.99/);
  assert.deepEqual(verify(over).rows.map((r) => r.holds), [true, true, false]);
});

test("heavy: malformed nodes are refused, naming the member", async () => {
  const cases = [
    [{ step_bits: 3 }, /sampler\.root: step_bits must be one of \(1, 2, 4, 8\), got 3/],
    [{ protocol: "sfp" }, /sampler\.root lacks \["fragment_bytes","hash_bits"\]/],
    [{ protocol: "tree" }, /sampler\.root\.protocol must be one of \["pem","sfp","treehist"\]/],
    [{ max_bytes: 0 }, /sampler\.root\.max_bytes = 0 is outside \[1, 64\]/],
    [{ parts: [olh(8, 1)] }, /sampler\.root\.parts must be a list of 2 hashed nodes \(prefix, word\)/],
    [{ parts: [olh(8, 1), olh(8, 1, 1000)] }, /the word part must be a xxh32 hashed node over d = 2147483647, got xxh32 over 1000/],
  ];
  for (const [edit, why] of cases) {
    const root = { ...treehist(3, 4), ...edit };
    await assert.rejects(loadSpec(await makeSpec(root, { labels: { text: root.max_bytes, ...TEXT } })), why);
  }
  // SFP: hash_bits + 8 fragment_bytes = 38 bits of fragment items, past the Toeplitz family's 31 seed bits
  const sfp = { kind: "heavy", protocol: "sfp", max_bytes: 8, fragment_bytes: 1, hash_bits: 30, parts: [olh(2, 1, 2 ** 24, "toeplitz"), olh(8, 1)], epsilon: 2 };
  await assert.rejects(
    loadSpec(await makeSpec(sfp, { labels: { text: 8, ...TEXT } })),
    /sampler\.root: hash_bits = 30 with fragment_bytes = 1 does not fit: .* \(d = 274877906944, g = 2\)/,
  );
});
