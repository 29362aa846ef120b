// Speed of the JS client in Node on local-hashing specs: serialized reports per second, crypto randomness.
// The specs are written by benchmarks/hashed_rows.py (Python's Spec.to_json), one path per argument:
//
//   node benchmarks/hashed_js.mjs olh.json flh.json   -> {"olh.json": reports/s, "flh.json": reports/s}
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { Client, loadSpec } from "../clients/js/pldp-client.mjs";

/** Reports per second over about `seconds` of reportJSON calls (after a warm-up) on items 0..d-1. */
function rate(client, d, seconds = 1) {
  let sink = 0;
  for (let i = 0; i < 20000; i++) sink += client.reportJSON(i % d).length;
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < seconds * 1000) {
    for (let i = 0; i < 5000; i++) sink += client.reportJSON((n + i) % d).length;
    n += 5000;
    t = performance.now();
  }
  if (sink < 0) console.log(sink);
  return Math.round((n * 1000) / (t - t0));
}

const out = {};
for (const path of process.argv.slice(2)) {
  const spec = await loadSpec(JSON.parse(readFileSync(path, "utf8")));
  out[basename(path)] = rate(new Client(spec), spec.labels.length);
}
console.log(JSON.stringify(out));
