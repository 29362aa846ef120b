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
    else if (call.method === "reports") lines.push(JSON.stringify(await client.reports(call.answers, call.choices ?? {})));
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
