// js_driver.mjs: runs the JS client (pldp-client.mjs) many times on one input, for auditing.
//
//   node js_driver.mjs MODULE SPEC_PATH
//
// MODULE is the path of the client module (imported as given, so an altered copy can be audited);
// SPEC_PATH the spec's JSON file. The spec is loaded once (loadSpec: id and privacy claims
// checked) and one Client made with the platform CSPRNG (crypto.getRandomValues): nothing is
// injected, this runs the client as deployed. Then one JSON task per line on stdin:
//
//   {"answer": A, "choices": {...}, "n": N, "chunk": C}
//
// and for each, N reports on stdout as batch lines (JSON.stringify of one client.reports(...)
// batch, `pldp.batch/1`, of at most C reports each), then the line {"done": N}. Every report of a
// task is made from the same answer A and choices ({"level": t} or {"levels": [...]}, one for all).
// On an error (a module that does not load, a spec refused, a bad task or answer) one line
// {"error": name, "message": ...} and exit status 2. The driver ends when stdin closes.
//
// Used by pldp.audit.jsclient.JSClient.

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

/** Write one line, waiting for the pipe to drain when it is full. */
function writeLine(text) {
  return new Promise((done, fail) => {
    const ok = process.stdout.write(text + "\n", (err) => (err ? fail(err) : undefined));
    if (ok) done();
    else process.stdout.once("drain", done);
  });
}

function fail(exc) {
  const name = exc?.name ?? "Error";
  const message = exc?.message ?? String(exc);
  process.stdout.write(JSON.stringify({ error: name, message }) + "\n", () => process.exit(2));
}

function count(value, name, lo) {
  if (typeof value !== "number" || !Number.isInteger(value) || value < lo || value > Number.MAX_SAFE_INTEGER) {
    throw new RangeError(`${name} must be an integer >= ${lo}, got ${JSON.stringify(value)}`);
  }
  return value;
}

async function main(modulePath, specPath) {
  const { Client, loadSpec } = await import(pathToFileURL(resolve(modulePath)).href);
  const spec = await loadSpec(readFileSync(specPath, "utf8"));
  const client = new Client(spec); // the operating system's CSPRNG, as deployed
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const task = JSON.parse(line);
    if (task === null || typeof task !== "object" || Array.isArray(task)) throw new TypeError("a task must be a JSON object");
    const n = count(task.n, "n", 0);
    const chunk = count(task.chunk, "chunk", 1);
    const choices = task.choices ?? {};
    const full = new Array(Math.min(n, chunk)).fill(task.answer); // reused for every whole chunk
    for (let done = 0; done < n; ) {
      const m = Math.min(chunk, n - done);
      const answers = m === full.length ? full : full.slice(0, m);
      await writeLine(JSON.stringify(client.reports(answers, choices)));
      done += m;
    }
    await writeLine(JSON.stringify({ done: n }));
  }
}

if (process.argv.length !== 4) {
  fail(new TypeError("usage: node js_driver.mjs MODULE SPEC_PATH"));
} else {
  main(process.argv[2], process.argv[3]).catch(fail);
}
