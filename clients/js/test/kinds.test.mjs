// Adding a node kind is one module and one line (clients/js/README.md, "Adding a kind"): a copy
// of the client, given a toy leaf kind's module and its line in client-kinds.mjs and nothing
// else, parses, verifies, draws and writes the toy's reports through the table of kinds.
import test, { after } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as original from "../pldp-client.mjs";
import { makeSpec, krr, stream, G, ID, ID_HEX } from "./fixtures.mjs";

// A leaf of two columns that takes one item: a seed word in the clear, then the true item kept
// below `keep`, else a uniform item (Pr(x | x) = keep / G + (G - keep) / (G d)). Its module, as
// the one a new kind's author writes beside the client's.
const TOY_MODULE = `
import { checkBudget, checkInt, checkKeys } from "./client-checks.mjs";
import { logRatio, ratioWithin } from "./client-exact.mjs";
import { GRID } from "./client-grid.mjs";

function parse(obj, path) {
  checkKeys(obj, path, ["kind", "d", "keep", "epsilon"]);
  const d = checkInt(obj.d, path + ".d", 2, 2 ** 31);
  const keep = checkInt(obj.keep, path + ".keep", 0, GRID - 1);
  return { kind: "toy", d, keep, epsilon: checkBudget(obj.epsilon, path + ".epsilon", false) };
}

function verify(node, part) {
  const lie = BigInt(GRID - node.keep);
  const [num, den] = [BigInt(node.keep) * BigInt(node.d) + lie, lie];
  const holds = ratioWithin(num, den, node.epsilon);
  return [[{ part, subject: "any output", claimed: node.epsilon, realised: logRatio(num, den), holds }], node.epsilon];
}

function draw(words, node, x) {
  const seed = words.word();
  return [seed, words.word() < node.keep ? x : words.uniform(node.d)];
}

export const KIND = { parse, verify, words: () => 2, draw, leaf: true, columns: ["seed", "item"], takes: "item", attribute: true };
`;
const LINE = 'export { KIND as toy } from "./client-toy.mjs";\n';

const here = dirname(fileURLToPath(import.meta.url));
const folder = mkdtempSync(join(tmpdir(), "pldp-kinds-"));
after(() => rmSync(folder, { recursive: true, force: true }));
for (const name of readdirSync(join(here, ".."))) if (name.endsWith(".mjs")) copyFileSync(join(here, "..", name), join(folder, name));
writeFileSync(join(folder, "client-toy.mjs"), TOY_MODULE);
const table = readFileSync(join(folder, "client-kinds.mjs"), "utf8");
writeFileSync(join(folder, "client-kinds.mjs"), table + LINE);
const client = await import(pathToFileURL(join(folder, "pldp-client.mjs")).href);

// keep = G / 2 over d = 4: Pr(x | x) / Pr(y | x) = (G / 2 + G / 8) / (G / 8) = 5, ln 5 = 1.609...
const toy = (epsilon = 1.61) => ({ kind: "toy", d: 4, keep: G / 2, epsilon });

test("kinds: the registered toy's reports are its columns' object, members in column order", async () => {
  const spec = await client.loadSpec(await makeSpec(toy()));
  // seed, then the keep word: below keep (the true item), then at keep (a uniform item: 7 % 4)
  const random = stream([...ID, 123, G / 2 - 1, ...ID, 456, G / 2, 7]);
  const c = new client.Client(spec, { random });
  assert.equal(c.reportJSON("c"), `{"format":"pldp.report/1","spec":"${spec.id}","id":"${ID_HEX}","payload":{"seed":123,"item":2}}`);
  assert.deepEqual(c.report(0).payload, { seed: 456, item: 3 });
  assert.equal(random.used, 2 * 4 + 2 + 3);
  assert.throws(() => c.report(4), client.AnswerError); // one item of d = 4, by the table's `takes`
  assert.throws(() => c.report(1, { level: 0 }), /this spec has no level choice/);
});

test("kinds: the toy's claims are verified through the table (a failing one refused)", async () => {
  const spec = await client.loadSpec(await makeSpec(toy()));
  const { holds, rows, ldp_epsilon } = client.verify(spec);
  assert.equal(holds, true);
  assert.equal(ldp_epsilon, 1.61);
  assert.equal(rows.length, 1);
  assert.deepEqual([rows[0].part, rows[0].claimed, rows[0].realised.toPrecision(9), rows[0].holds], ["root", 1.61, "1.60943791", true]); // ln 5
  await assert.rejects(client.loadSpec(await makeSpec(toy(1.6))), /privacy claim fails: root, any output: realised epsilon 1\.60943791 > claimed 1\.6/);
});

test("kinds: the toy as an attribute (its `attribute` property) draws in its part's place", async () => {
  const root = { kind: "attributes", parts: [toy(), krr(3, 1)] };
  const spec = await client.loadSpec(await makeSpec(root));
  assert.equal(client.verify(spec).ldp_epsilon, 1.61 + 1); // the parts' budgets added up
  const c = new client.Client(spec, { random: stream([...ID, 9, 0, 0]) });
  assert.deepEqual(c.report([1, 2]).payload, [{ seed: 9, item: 1 }, 2]);
});

test("kinds: without its line the client refuses the kind, and lists the registered ones", async () => {
  const spec = await makeSpec(toy());
  const listed = (names) => JSON.stringify([...names].sort());
  const registered = Object.keys(await import("../client-kinds.mjs"));
  await assert.rejects(original.loadSpec(spec), { message: `sampler.root must be a node with kind one of ${listed(registered)}, got "toy"` });
  await assert.rejects(client.loadSpec(await makeSpec({ kind: "none", d: 2 })), { message: `sampler.root must be a node with kind one of ${listed([...registered, "toy"])}, got "none"` });
});
