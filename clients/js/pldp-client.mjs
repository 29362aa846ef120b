// pldp-client.mjs: the browser/Node client of pldp campaigns (docs/wire-format.md).
//
// Dependency-free ES modules, no build step. The client loads a campaign spec (`pldp.spec/1`),
// checks its content id and every privacy claim with exact arithmetic, and randomizes answers
// into reports (`pldp.report/1`) with integer comparisons of uniform 32-bit words drawn from the
// platform CSPRNG (crypto.getRandomValues). Given the same word stream it writes byte-identical
// reports to pldp's Python client (pldp.client.Client).
//
// A memoized spec (L-GRR, L-OUE, ...: a permanent randomized response per value, kept on the
// device) needs a memo store: IndexedDB in browsers, a file in Node (the Python client's format,
// pldp.memo/1); its reports are returned as Promises, after the new permanent responses are stored.
//
// This module is the client's public API; the code lives in the client-*.mjs modules beside it
// (docs/architecture.md): the wire format (client-wire), the sampling grid and its words
// (client-grid), exact arithmetic (client-exact), one module per sampler node kind
// (client-direct, -unary, -padding, -leveled, -attributes, -memo), their table (client-kinds) and
// the tree they make (client-nodes), the spec (client-spec), answers (client-answers), the Client (client-reports),
// the memo stores (client-memo-store) and the file locks of Node (client-locks). Serve them all.

export { AnswerError, MemoStoreError, SpecError, base64Decode, base64Encode, canonicalJSON, sha256Hex, specId } from "./client-wire.mjs";
export { expBounds, ratioWithin } from "./client-exact.mjs";
export { loadSpec, verify } from "./client-spec.mjs";
export { FileMemoStore, IndexedDBMemoStore, MemoryMemoStore, defaultMemoStore } from "./client-memo-store.mjs";
export { loadFileLocks, withFileLock, withFileLockSync } from "./client-locks.mjs";
export { Client } from "./client-reports.mjs";
