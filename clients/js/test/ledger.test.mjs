// pldp-ledger.mjs: the charge, the caps that refuse before any word is drawn, the file kept across
// restarts and refused when corrupt, and the day boundary of an injected clock.
import test, { after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync, statSync, chmodSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSpec, verify, Client } from "../pldp-client.mjs";
import { Ledger, LedgerCapError, LedgerError, specCost } from "../pldp-ledger.mjs";
import { makeSpec, krr, febsfLike } from "./fixtures.mjs";

const DAY = 86400;
const NOON = 20000 * DAY + DAY / 2; // 2024-10-04 12:00 UTC
const spec1 = await loadSpec(await makeSpec(krr(3, 1), { labels: ["linux", "mac", "windows"], question: "Your OS?" }));
const spec2 = await loadSpec(await makeSpec(krr(2, 0.5), { labels: ["yes", "no"] }));

/** A word source that counts the words it gave. */
function counted() {
  const source = (n) => {
    source.words += n;
    return Uint32Array.from({ length: n }, (_, i) => (i * 2654435761) >>> 0);
  };
  source.words = 0;
  return source;
}

/** A new temporary folder, removed when the file's tests end. */
const folders = [];
const tmp = () => {
  folders.push(mkdtempSync(join(tmpdir(), "pldp-ledger-")));
  return folders.at(-1);
};
after(() => folders.forEach((f) => rmSync(f, { recursive: true, force: true })));

test("a batch charges n times the worst-case epsilon of one report", async () => {
  assert.deepEqual(specCost(spec1), { family: spec1.id, perReport: 1, perValue: 0, reportEpsilon: 1, memoized: false });
  const leveled = await loadSpec(await makeSpec(febsfLike(3.42)));
  assert.equal(specCost(leveled).perReport, verify(leveled).ldp_epsilon);
  const ledger = Ledger.memory({ clock: () => NOON });
  assert.equal(ledger.charge(spec1, 3), 3);
  assert.equal(ledger.charge(spec2, 2, 0, { round: 4 }), 1);
  const view = ledger.view();
  assert.equal(view.day, "2024-10-04");
  assert.deepEqual(view.total, { epsilon: 4, reports: 5, values: 0 });
  assert.deepEqual(view.today, view.total);
  const fam = view.families.find((f) => f.family === spec2.id);
  assert.deepEqual(fam.campaigns, [{ spec: spec2.id, reports: 2, rounds: [4], question: "q?" }]);
});

for (const [caps, which] of [
  [{ day: 3 }, /device's daily cap/],
  [{ total: 3 }, /device's total cap/],
  [{ family_day: 3 }, /daily cap of this family/],
  [{ family_total: 3 }, /total cap of this family/],
]) {
  test(`the cap ${Object.keys(caps)[0]} refuses before any word is drawn, and the refusal spends nothing`, async () => {
    const path = join(tmp(), "ledger.json");
    const random = counted();
    const client = new Client(spec1, { random, ledger: await Ledger.file(path, { caps }) });
    client.reports(["mac", "linux"]);
    const drawn = random.words;
    const before = readFileSync(path, "utf8");
    assert.throws(() => client.reports(["mac", "linux"]), (err) => err instanceof LedgerCapError && which.test(err.message) && /Nothing was drawn/.test(err.message));
    assert.equal(random.words, drawn);
    assert.equal(readFileSync(path, "utf8"), before);
    client.report("windows"); // exactly the cap
    assert.throws(() => client.report("windows"), LedgerCapError);
    assert.equal(random.words, drawn + 5);
  });
}

test("a restart keeps the spend, in a file of mode 0600", async () => {
  const path = join(tmp(), "sub", "ledger.json");
  new Client(spec1, { ledger: await Ledger.file(path) }).reports(["mac", "mac", "mac"]);
  assert.equal(statSync(path).mode & 0o777, 0o600);
  const again = await Ledger.file(path, { caps: { total: 4 } });
  assert.deepEqual(again.view().total, { epsilon: 3, reports: 3, values: 0 });
  const client = new Client(spec1, { ledger: again });
  client.report("mac");
  assert.throws(() => client.report("mac"), LedgerCapError);
});

for (const [name, edit] of [
  ["not JSON", () => "{not json"],
  ["another format", () => '{"format": "pldp.ledger/0", "families": {}}'],
  ["a family without its day", (doc, id) => (delete doc.families[id].day, JSON.stringify(doc))],
  ["a negative epsilon", (doc, id) => ((doc.families[id].epsilon = -1), JSON.stringify(doc))],
]) {
  test(`a corrupt ledger (${name}) makes the client refuse to report`, async () => {
    const path = join(tmp(), "ledger.json");
    new Client(spec1, { ledger: await Ledger.file(path) }).report("mac");
    const text = edit(JSON.parse(readFileSync(path, "utf8")), spec1.id);
    writeFileSync(path, text);
    const random = counted();
    const client = new Client(spec1, { random, ledger: await Ledger.file(path) });
    assert.throws(() => client.report("mac"), (err) => err instanceof LedgerError && /refusing to report/.test(err.message));
    assert.equal(random.words, 0);
    assert.equal(readFileSync(path, "utf8"), text);
  });
}

test("a ledger file open to other users is refused", async () => {
  const path = join(tmp(), "ledger.json");
  new Client(spec1, { ledger: await Ledger.file(path) }).report("mac");
  chmodSync(path, 0o644);
  const ledger = await Ledger.file(path);
  assert.throws(() => ledger.view(), /open to other users/);
});

test("the day boundary restarts the daily spend but not the total", () => {
  let t = 20000 * DAY + DAY - 1; // 23:59:59 UTC
  const ledger = Ledger.memory({ caps: { day: 2, total: 3 }, clock: () => t });
  const client = new Client(spec1, { ledger });
  client.reports(["mac", "mac"]);
  assert.throws(() => client.report("mac"), /daily/);
  t += 1;
  assert.deepEqual(ledger.view().today, { epsilon: 0, reports: 0, values: 0 });
  assert.equal(ledger.view().day, "2024-10-05");
  client.report("mac");
  assert.throws(() => client.report("mac"), /total/);
});
