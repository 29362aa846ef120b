// JCS (RFC 8785), SHA-256 and the spec id; base64.
import test from "node:test";
import assert from "node:assert/strict";
import { canonicalJSON, sha256Hex, specId, base64Encode, base64Decode } from "../pldp-client.mjs";

test("JCS writes numbers as ECMAScript's Number.prototype.toString", () => {
  const cases = [
    [1, "1"],
    [1.0, "1"],
    [1.5, "1.5"],
    [1e-7, "1e-7"],
    [1e-6, "0.000001"],
    [1e21, "1e+21"],
    [1e20, "100000000000000000000"],
    [0.1, "0.1"],
    [-0, "0"],
    [-1.25, "-1.25"],
    [4294967296, "4294967296"],
    [2 ** 53 - 1, "9007199254740991"],
    [5e-324, "5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [0.3333333333333333, "0.3333333333333333"],
  ];
  for (const [value, text] of cases) assert.equal(canonicalJSON(value), text, String(value));
});

test("JCS sorts members by UTF-16 code units (RFC 8785 §3.2.3) and writes no white space", () => {
  const input = {
    "\u20ac": "Euro Sign",
    "\r": "Carriage Return",
    "\ufb33": "Hebrew Letter Dalet With Dagesh",
    1: "One",
    "\ud83d\ude00": "Emoji: Grinning Face",
    "\u0080": "Control",
    "\u00f6": "Latin Small Letter O With Diaeresis",
  };
  assert.equal(
    canonicalJSON(input),
    '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
      '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
  );
  assert.equal(canonicalJSON({ b: [1.0, 0.5, { z: null, a: true }], a: "é" }), '{"a":"é","b":[1,0.5,{"a":true,"z":null}]}');
  assert.equal(canonicalJSON({ b: 1, a: { d: [], c: {} } }), '{"a":{"c":{},"d":[]},"b":1}');
});

test("JCS strings take the minimal escapes", () => {
  assert.equal(canonicalJSON('a"b\\c\n\t\u0001\u001f\u007f\u2028é'), '"a\\"b\\\\c\\n\\t\\u0001\\u001f\u007f\u2028é"');
});

test("JCS refuses values without a JSON form", () => {
  for (const v of [NaN, Infinity, -Infinity, undefined, 1n, () => 1, Symbol("s")]) {
    assert.throws(() => canonicalJSON(v), TypeError);
    assert.throws(() => canonicalJSON({ a: v }), TypeError);
  }
});

test("SHA-256 known vectors", async () => {
  assert.equal(await sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert.equal(await sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert.equal(await sha256Hex("é"), "4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c");
});

test("specId: the first 32 hex digits of SHA-256 of the JCS text without the id member", async () => {
  // sha256('{}') and sha256('{"a":"é","b":[1,0.5]}') computed with sha256sum
  assert.equal(await specId({}), "44136fa355b3678a1146ad16f7e8649e");
  assert.equal(await specId({ id: "anything" }), "44136fa355b3678a1146ad16f7e8649e");
  const spec = { id: "0".repeat(32), b: [1.0, 0.5], a: "é" };
  assert.equal(await specId(spec), "487df58a5a8d7b2df6479781692d59ed");
  assert.notEqual(await specId({ ...spec, a: "e" }), "487df58a5a8d7b2df6479781692d59ed");
  assert.equal(spec.id, "0".repeat(32)); // not modified
});

test("base64: RFC 4648 vectors", () => {
  const vectors = { "": "", f: "Zg==", fo: "Zm8=", foo: "Zm9v", foob: "Zm9vYg==", fooba: "Zm9vYmE=", foobar: "Zm9vYmFy" };
  for (const [plain, coded] of Object.entries(vectors)) {
    const bytes = new TextEncoder().encode(plain);
    assert.equal(base64Encode(bytes), coded);
    assert.deepEqual(base64Decode(coded), bytes);
  }
});

test("base64: round trip of every length 0..64 and every byte value, equal to Buffer's", () => {
  for (let n = 0; n <= 64; n++) {
    const bytes = new Uint8Array(n);
    globalThis.crypto.getRandomValues(bytes);
    const text = base64Encode(bytes);
    assert.equal(text, Buffer.from(bytes).toString("base64"));
    assert.deepEqual(base64Decode(text), bytes);
  }
  const all = Uint8Array.from({ length: 256 }, (_, i) => i);
  assert.deepEqual(base64Decode(base64Encode(all)), all);
});

test("base64: decoding refuses non-canonical text", () => {
  for (const bad of ["Zg=", "Zh==", "Zm9=", "Z!==", "Zg==Zg==", "=Zg=", "Zm 9", "Zm9v\n", "Zg-_"]) {
    assert.throws(() => base64Decode(bad), /bad base64/, bad);
  }
});
