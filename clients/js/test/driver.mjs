// The JS side of the cross-language test (tests/test_js_client.py).
//
//   node clients/js/test/driver.mjs TASK.json
//
// TASK.json: {"spec": "spec.json", "words": "words.u32", "calls": [CALL, ...]} with paths relative
// to the task file; words.u32 holds little-endian uint32 words, the whole random stream (without
// "words", the client draws from the operating system's CSPRNG, as it does in a browser). Each CALL
// is {"method": "report", "answer": A, "choices": {...}} or {"method": "reports", "answers": [...],
// "choices": {...}} or {"method": "verify"}, run in order on one Client fed from the stream. Writes
// one line per call: reportJSON(...) for "report", JSON.stringify(batch) for "reports", the
// verification {holds, ldp_epsilon, rows} (infinities as "inf") for "verify"; on an error, one line
// {"error": name, "message": ...} and exit status 2. With "raw": true in the task, the one line is
// verify() of the spec text without loadSpec (no id check; failing claims come back as rows).
// With "store": "memo.json" (a memoized spec) the client keeps its memo in that file
// (FileMemoStore); a CALL {"method": "last_new"} writes {"values": lastNewValues, "items": lastNewItems}.
// A "reports" CALL with "columns": true writes the batch column by column instead (columnsJSON):
// {"n", "ids" (the ids' 32-digit hex, concatenated), "columns": {name: {"kind": "int" | "bits",
// "data": base64}}}, named as pldp.deploy.wire names them (item, level, bits; "a{i}." per attribute;
// only those some report holds), ints as int32 (-1 where a report has none), bits as each report's
// bytes in a row (zeros where it has none): a million reports in a few MB
// that Python reads with numpy (tests/test_fit.py), not 80 MB of JSON objects.
//
// Without arguments (as `node --test clients/js/test/` runs every file of this folder) it
// registers a self-test: a task made here gives the lines a Client writes directly.

import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, FileMemoStore, loadSpec, verify } from "../pldp-client.mjs";

function readWords(path) {
  const bytes = readFileSync(path);
  if (bytes.length % 4) throw new Error(`${path}: ${bytes.length} bytes is not a whole number of words`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const words = new Uint32Array(bytes.length / 4);
  for (let i = 0; i < words.length; i++) words[i] = view.getUint32(4 * i, true);
  return words;
}

/** One payload's values into `cols` at `row`, as pldp.deploy.wire's _Payload writes them (inverted). */
function flatten(node, payload, prefix, row, n, cols) {
  const column = (name, kind) => (cols[prefix + name] ??= { kind, values: kind === "int" ? new Int32Array(n).fill(-1) : new Array(n) });
  if (node.kind === "direct") {
    if (!Number.isInteger(payload)) throw new TypeError(`report ${row}: ${prefix}item is not an integer`);
    column("item", "int").values[row] = payload;
  } else if (node.kind === "unary" || node.kind === "padding") {
    column("bits", "bits").values[row] = Buffer.from(payload, "base64");
  } else if (node.kind === "leveled") {
    if (node.level_report === "hidden") return flatten(node.items[0], payload.data, prefix, row, n, cols);
    column("level", "int").values[row] = payload.level;
    flatten(node.items[payload.level], payload.data, prefix, row, n, cols);
  } else if (node.kind === "attributes") {
    node.parts.forEach((part, i) => flatten(part, payload[i], `${prefix}a${i}.`, row, n, cols));
  } else if (node.kind === "heavy") {
    for (const [name, value] of Object.entries(payload)) column(name, "int").values[row] = value; // group, seeds, values
  } else if (node.kind === "memo") {
    flatten(node.permanent, payload, prefix, row, n, cols);
  } else {
    throw new TypeError(`no columns for a ${node.kind} node`);
  }
}

/** A batch of the client as one line of columns (see the header). */
function columnsJSON(root, batch) {
  const n = batch.reports.length;
  const cols = {};
  batch.reports.forEach((r, row) => flatten(root, r.payload, "", row, n, cols));
  const columns = {};
  for (const [name, { kind, values }] of Object.entries(cols)) {
    let bytes;
    if (kind === "int") bytes = Buffer.from(values.buffer);
    else {
      const width = values.find((b) => b !== undefined).length; // a row without them: zero bits, as pldp's
      const zero = Buffer.alloc(width);
      if (values.some((b) => b !== undefined && b.length !== width)) throw new TypeError(`${name}: rows of unequal width`);
      bytes = Buffer.concat(Array.from(values, (b) => b ?? zero));
    }
    columns[name] = { kind, data: bytes.toString("base64") };
  }
  return JSON.stringify({ n, ids: batch.reports.map((r) => r.id).join(""), columns });
}

/** The output lines of a task (an object, with paths relative to `base`). */
export async function runTask(task, base) {
  const text = readFileSync(resolve(base, task.spec), "utf8");
  const inf = (x) => (x === Infinity ? "inf" : x);
  const verification = (spec) => {
    const v = verify(spec);
    const rows = v.rows.map((r) => ({ ...r, claimed: inf(r.claimed), realised: inf(r.realised) }));
    return JSON.stringify({ holds: v.holds, ldp_epsilon: inf(v.ldp_epsilon), rows });
  };
  if (task.raw) return [verification(text)]; // verify without loading: no id check, failures as rows
  const spec = await loadSpec(text);
  const store = task.store ? new FileMemoStore(resolve(base, task.store)) : undefined;
  let client = new Client(spec, { store }); // the operating system's CSPRNG (crypto.getRandomValues)
  if (task.words) {
    const words = readWords(resolve(base, task.words));
    let pos = 0;
    const random = (n) => {
      if (pos + n > words.length) throw new Error(`the word stream ran out (${words.length} words)`);
      const out = words.slice(pos, pos + n);
      pos += n;
      return out;
    };
    client = new Client(spec, { random, store });
  }
  const lines = [];
  for (const call of task.calls) {
    if (call.method === "report") lines.push(await client.reportJSON(call.answer, call.choices ?? {}));
    else if (call.method === "reports") {
      const batch = await client.reports(call.answers, call.choices ?? {});
      lines.push(call.columns ? columnsJSON(JSON.parse(text).sampler.root, batch) : JSON.stringify(batch));
    }
    else if (call.method === "verify") lines.push(verification(spec));
    else if (call.method === "last_new") lines.push(JSON.stringify({ values: client.lastNewValues, items: client.lastNewItems }));
    else throw new Error(`unknown method ${JSON.stringify(call.method)}`);
  }
  return lines;
}

const self = fileURLToPath(import.meta.url);

if (process.argv.length > 2) {
  const path = resolve(process.argv[2]);
  try {
    const lines = await runTask(JSON.parse(readFileSync(path, "utf8")), dirname(path));
    process.stdout.write(lines.map((l) => l + "\n").join(""));
  } catch (exc) {
    process.stdout.write(JSON.stringify({ error: exc.name, message: exc.message }) + "\n");
    process.exitCode = 2;
  }
} else if (resolve(process.argv[1] ?? "") === self) {
  const { test } = await import("node:test");
  const assert = (await import("node:assert/strict")).default;
  const { execFileSync } = await import("node:child_process");
  const { specId } = await import("../pldp-client.mjs");
  test("driver: a task's lines are the reports a Client writes from the same words", async () => {
    const spec = {
      format: "pldp.spec/1",
      question: "q",
      labels: ["a", "b", "c"],
      oracle: {},
      sampler: {
        grid_bits: 32,
        root: { kind: "direct", d: 3, keep: 2 ** 31, weights: [715827882, 715827883, 715827883], notion: "LDP", epsilons: [1.4, 1.4, 1.4] },
      },
    };
    spec.id = await specId(spec);
    const words = Uint32Array.from({ length: 64 }, (_, i) => (i * 2654435761) >>> 0);
    const dir = mkdtempSync(join(tmpdir(), "pldp-driver-"));
    try {
      writeFileSync(join(dir, "spec.json"), JSON.stringify(spec));
      const bytes = new Uint8Array(words.length * 4);
      const view = new DataView(bytes.buffer);
      words.forEach((w, i) => view.setUint32(4 * i, w, true));
      writeFileSync(join(dir, "words.u32"), bytes);
      const task = { spec: "spec.json", words: "words.u32", calls: [{ method: "report", answer: "b" }, { method: "reports", answers: [0, 2, "c"] }] };
      writeFileSync(join(dir, "task.json"), JSON.stringify(task));
      const out = execFileSync(process.execPath, [self, join(dir, "task.json")], { encoding: "utf8" });
      let pos = 0;
      const client = new Client(await loadSpec(spec), { random: (n) => words.slice(pos, (pos += n)) });
      const want = [client.reportJSON("b"), JSON.stringify(client.reports([0, 2, "c"]))];
      assert.deepEqual(out.trimEnd().split("\n"), want);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
