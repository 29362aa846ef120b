// pldp-ledger.mjs: the charge (charged from counts only; the per-value spend for display), the caps
// that refuse before any word is drawn, the file kept across restarts, migrated from pldp.ledger/1
// and refused when corrupt, the day boundary of an injected clock, and the lock on PATH.lock.
import test, { after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync, statSync, chmodSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSpec, verify, Client, MemoryMemoStore } from "../pldp-client.mjs";
import { LEDGER_FORMAT, Ledger, LedgerCapError, LedgerError, chargeOf, migrateFamily, specCost, spendOf } from "../pldp-ledger.mjs";
import { makeSpec, krr, febsfLike, resign, clone } from "./fixtures.mjs";

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
  assert.deepEqual(specCost(spec1), { family: spec1.id, perReport: 1, perValue: 0, reportEpsilon: 1, memoized: false, domain: 0 });
  assert.equal(chargeOf(specCost(spec1), 3, 100), 3);
  assert.equal(spendOf(specCost(spec1), 3, 0), 3);
  const leveled = await loadSpec(await makeSpec(febsfLike(3.42)));
  assert.equal(specCost(leveled).perReport, verify(leveled).ldp_epsilon);
  const ledger = Ledger.memory({ clock: () => NOON });
  assert.equal(ledger.charge(spec1, 3), 3);
  assert.equal(ledger.charge(spec2, 2, 0, { round: 4 }), 1);
  const view = ledger.view();
  assert.equal(view.day, "2024-10-04");
  assert.deepEqual(view.total, { epsilon: 4, reports: 5, values: 0, valuesEpsilon: 4 });
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
  assert.deepEqual(again.view().total, { epsilon: 3, reports: 3, values: 0, valuesEpsilon: 3 });
  const client = new Client(spec1, { ledger: again });
  client.report("mac");
  assert.throws(() => client.report("mac"), LedgerCapError);
});

for (const [name, edit] of [
  ["not JSON", () => "{not json"],
  ["another format", () => '{"format": "pldp.ledger/0", "families": {}}'],
  ["a family without its day", (doc, id) => (delete doc.families[id].day, JSON.stringify(doc))],
  ["a negative epsilon", (doc, id) => ((doc.families[id].epsilon = -1), JSON.stringify(doc))],
  ["format 2 without the per-value spend", (doc, id) => (delete doc.families[id].values_epsilon, JSON.stringify(doc))],
  ["format 1 with the per-value spend", (doc) => ((doc.format = "pldp.ledger/1"), JSON.stringify(doc))],
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
  assert.deepEqual(ledger.view().today, { epsilon: 0, reports: 0, values: 0, valuesEpsilon: 0 });
  assert.equal(ledger.view().day, "2024-10-05");
  client.report("mac");
  assert.throws(() => client.report("mac"), /total/);
});

/** L-GRR(2, 0.5, 4) (pldp.LGRR's thresholds): eps_perm = 2 over d = 4 values, memo key "os-daily". */
const memoSpec = await loadSpec(
  await resign({
    format: "pldp.spec/1",
    question: "Your OS?",
    labels: ["a", "b", "c", "d"],
    oracle: {},
    sampler: {
      grid_bits: 32,
      root: {
        kind: "memo",
        d: 4,
        notion: "LDP",
        epsilons: [0.5, 0.5, 0.5, 0.5],
        permanent: { kind: "direct", d: 4, keep: 2641316660, weights: Array(4).fill(413412659), notion: "LDP", epsilons: [2, 2, 2, 2] },
        instantaneous: { keep: 974594332, weights: Array(4).fill(830093241) },
      },
    },
    memo: { key: "os-daily" },
  }),
);

test("a memoized spec is charged eps_perm per report until d reports, its new values recorded apart", async () => {
  const cost = specCost(memoSpec);
  assert.deepEqual(cost, { family: "os-daily", perReport: 0.5, perValue: 2, reportEpsilon: 0.5, memoized: true, domain: 4 });
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((r) => chargeOf(cost, 1, r)), [2, 2, 2, 2, 0, 0]);
  assert.deepEqual([chargeOf(cost, 30, 0), chargeOf(cost, 2, 3), chargeOf(cost, 5, 4)], [8, 2, 0]);
  assert.deepEqual([spendOf(cost, 30, 1), spendOf(cost, 30, 0), spendOf(cost, 5, 2)], [2, 0, 4]);
  const ledger = Ledger.memory({ caps: { family_total: 6 }, clock: () => NOON });
  const client = new Client(memoSpec, { store: new MemoryMemoStore(), ledger });
  await client.reports(["a", "a"]);
  assert.deepEqual(ledger.view().total, { epsilon: 4, reports: 2, values: 1, valuesEpsilon: 2 });
  await client.report("b");
  assert.deepEqual(ledger.view().total, { epsilon: 6, reports: 3, values: 2, valuesEpsilon: 4 });
  for (const x of ["a", "c"]) await assert.rejects(client.report(x), LedgerCapError); // held or new alike
  const roomy = Ledger.memory({ caps: { family_total: 8 }, clock: () => NOON });
  const again = new Client(memoSpec, { store: new MemoryMemoStore(), ledger: roomy });
  await again.reports(Array(30).fill("a"));
  await again.reports(["b", "c", "d", "a"]);
  assert.deepEqual(roomy.view().total, { epsilon: 8, reports: 34, values: 4, valuesEpsilon: 8 });
});

test("a spec's rounds cap refuses the family's next report, even one charged nothing", async () => {
  const capped = async (rounds) => loadSpec(await resign({ ...clone(memoSpec), caps: { rounds } }));
  const six = await capped(6);
  assert.equal(six.memo.key, "os-daily");
  const words = counted();
  const ledger = Ledger.memory({ clock: () => NOON });
  const client = new Client(six, { random: words, store: new MemoryMemoStore(), ledger });
  await client.reports(["a", "b", "c", "d"]);
  assert.deepEqual([ledger.charge(six, 1), ledger.charge(six, 1)], [0, 0]); // d = 4 reports made: charged 0, counted
  const drawn = words.words;
  await assert.rejects(client.report("a"), (err) => {
    assert.ok(err instanceof LedgerCapError);
    assert.equal(
      err.message.split("): ")[1],
      "the spec's rounds cap of this family is 6 report(s), 6 sent so far, and this batch would send 1. Nothing was drawn or sent.",
    );
    return true;
  });
  assert.equal(words.words, drawn);
  assert.deepEqual(ledger.view().total, { epsilon: 8, reports: 6, values: 4, valuesEpsilon: 8 });
  // a batch past the cap is refused whole; another spec of the family counts the family's reports
  const fresh = Ledger.memory({ clock: () => NOON });
  fresh.charge(six, 5, 4);
  assert.throws(() => fresh.charge(six, 2), /6 report\(s\), 5 sent so far, and this batch would send 2/);
  const three = await capped(3);
  assert.throws(() => fresh.charge(three, 1), /rounds cap of this family is 3 report\(s\), 5 sent so far/);
  assert.equal(fresh.charge(six, 1), 0);
  // malformed rounds caps are refused when the spec is loaded
  for (const rounds of [0, 2.5, "8", true, null, 2 ** 53]) {
    await assert.rejects(capped(rounds), { name: "SpecError", message: "caps.rounds must be a positive integer (the most reports one device sends)" });
  }
});

/** A pldp.ledger/1 document (epsilon: eps_perm per new value), on NOON's day. */
const V1 = {
  format: "pldp.ledger/1",
  families: {
    "os-daily": {
      epsilon: 4, reports: 5, values: 2, report_epsilon: 0.5, day: "2024-10-04", day_epsilon: 2, day_reports: 1, day_values: 1,
      campaigns: { [memoSpec.id]: { reports: 5, rounds: [1, 2, 3, 4, 5] } },
    },
    [spec1.id]: {
      epsilon: 3, reports: 3, values: 0, report_epsilon: 1, day: "2024-10-03", day_epsilon: 1, day_reports: 1, day_values: 0,
      campaigns: { [spec1.id]: { reports: 3, rounds: [], question: "Your OS?" } },
    },
    unbounded: {
      epsilon: null, reports: 2, values: 1, report_epsilon: null, day: "2024-10-04", day_epsilon: null, day_reports: 2, day_values: 1,
      campaigns: {},
    },
  },
}; // prettier-ignore

test("a pldp.ledger/1 file is migrated conservatively, and written as pldp.ledger/2 at the next charge", async () => {
  assert.equal(LEDGER_FORMAT, "pldp.ledger/2");
  const path = join(tmp(), "ledger.json");
  writeFileSync(path, JSON.stringify(V1), { mode: 0o600 });
  const ledger = await Ledger.file(path, { caps: { family_total: 10 }, clock: () => NOON });
  const fams = Object.fromEntries(ledger.view().families.map((f) => [f.family, f]));
  assert.deepEqual(fams["os-daily"].total, { epsilon: 10, reports: 5, values: 2, valuesEpsilon: 4 }); // 5 * (4 / 2)
  assert.deepEqual(fams["os-daily"].today, { epsilon: 2, reports: 1, values: 1, valuesEpsilon: 2 });
  assert.deepEqual(fams[spec1.id].total, { epsilon: 3, reports: 3, values: 0, valuesEpsilon: 3 });
  assert.deepEqual(fams.unbounded.total, { epsilon: Infinity, reports: 2, values: 1, valuesEpsilon: Infinity });
  assert.deepEqual(migrateFamily(V1.families[spec1.id]), { ...V1.families[spec1.id], values_epsilon: 3, day_values_epsilon: 1 });
  assert.equal(readFileSync(path, "utf8"), JSON.stringify(V1)); // reading changes nothing
  assert.equal(ledger.charge(memoSpec, 3, 1, { round: 6 }), 0); // R = 5 >= d = 4
  assert.throws(() => ledger.charge(spec1, 8), /total cap of this family is epsilon = 10, 3 is spent in all/);
  const doc = JSON.parse(readFileSync(path, "utf8"));
  assert.equal(doc.format, "pldp.ledger/2");
  assert.deepEqual([doc.families["os-daily"].epsilon, doc.families["os-daily"].values_epsilon, doc.families["os-daily"].reports], [10, 6, 8]);
  assert.equal(doc.families.unbounded.epsilon, null);
});

test("a file ledger takes the lock PATH.lock (mode 0600), as the Python client does", async () => {
  const path = join(tmp(), "sub", "ledger.json");
  const ledger = await Ledger.file(path);
  assert.equal(existsSync(`${path}.lock`), false);
  ledger.charge(spec1, 1);
  assert.equal(statSync(`${path}.lock`).mode & 0o777, 0o600);
  assert.equal(statSync(join(path, "..")).mode & 0o777, 0o700);
});
