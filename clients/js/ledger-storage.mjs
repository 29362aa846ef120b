// ledger-storage.mjs: where the JS client's privacy ledger (pldp-ledger.mjs) is kept: in memory,
// in localStorage (browsers) or in a file (Node: mode 0600, replaced atomically under the Python
// client's lock, flock on PATH.lock); and the error of a ledger that cannot be read, written or trusted.

import { loadFileLocks, withFileLockSync } from "./client-locks.mjs";

/** A ledger that cannot be read, written or trusted: the client refuses to report. */
export class LedgerError extends Error {
  constructor(message) {
    super(message);
    this.name = "LedgerError";
  }
}

/** A LedgerError saying what is wrong with the ledger at `where` and what to do. */
export function bad(where, why) {
  return new LedgerError(
    `the privacy ledger ${where} ${why}; refusing to report (a fresh ledger would forget what this device ` +
      "has spent). Repair or restore it, or move it away to start an empty one.",
  );
}

// ============================================================================ storages
//
// A storage is {where, read(), update(fn)}: read() is the stored text (null: none yet); update(fn)
// runs fn(text) -> the new text (null: leave it) as one read-modify-write, synchronously (a
// ledger's charge runs inside a memo store's update, which an IndexedDB transaction keeps
// synchronous).

/** A storage of `where` from `read()` and `write(text)`, without a lock (one thread). */
function unlocked(where, read, write) {
  return {
    where,
    read,
    update(fn) {
      const next = fn(read());
      if (next !== null) write(next);
    },
  };
}

/** Storage in memory (tests and simulations: it dies with the page or process). */
export function memoryStorage() {
  let text = null;
  return unlocked("(in memory)", () => text, (t) => (text = t));
}

/**
 * Storage in the browser's localStorage under `key` (the page's origin). Its update takes no lock
 * between tabs: localStorage has none, and a page runs its charge synchronously.
 */
export function localStorageStorage(key) {
  const where = `in this browser's storage (${key})`;
  const read = () => {
    try {
      return globalThis.localStorage.getItem(key);
    } catch (exc) {
      throw bad(where, `cannot be read (${exc.message})`);
    }
  };
  const write = (text) => {
    try {
      globalThis.localStorage.setItem(key, text);
    } catch (exc) {
      throw bad(where, `cannot be written (${exc.message})`);
    }
  };
  return unlocked(where, read, write);
}

/**
 * Storage in a file (Node): mode 0600, replaced atomically (temporary file, fsync, rename, fsync of
 * the folder); each update under the Python client's lock (flock on PATH.lock, withFileLockSync of
 * pldp-client.mjs), so that no charge of another process, Node or Python, is lost. Reading alone
 * takes no lock (a rename replaces the file whole).
 */
export async function fileStorage(path) {
  await loadFileLocks();
  const fs = await import("node:fs");
  const { dirname, basename, join } = await import("node:path");
  const where = path;
  const read = () => {
    let st;
    try {
      st = fs.statSync(path);
    } catch (exc) {
      if (exc.code === "ENOENT") return null;
      throw bad(where, `cannot be read (${exc.message})`);
    }
    if (process.platform !== "win32" && st.mode & 0o077) {
      throw bad(where, `is open to other users (mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}); chmod 600 it`);
    }
    try {
      return fs.readFileSync(path, "utf8");
    } catch (exc) {
      throw bad(where, `cannot be read (${exc.message})`);
    }
  };
  const write = (text) => {
    const dir = dirname(path);
    const tmp = join(dir, `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
    try {
      const fd = fs.openSync(tmp, "wx", 0o600);
      try {
        fs.writeSync(fd, text);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, path);
      if (process.platform !== "win32") {
        const dh = fs.openSync(dir, "r");
        try {
          fs.fsyncSync(dh);
        } finally {
          fs.closeSync(dh);
        }
      }
    } catch (exc) {
      fs.rmSync(tmp, { force: true });
      throw bad(where, `cannot be written (${exc.message})`);
    }
  };
  return {
    where,
    read,
    update(fn) {
      let held = false;
      try {
        withFileLockSync(path, () => {
          held = true;
          const next = fn(read());
          if (next !== null) write(next);
        });
      } catch (exc) {
        if (held) throw exc;
        throw bad(where, `cannot be locked (${exc.code ?? exc.message})`);
      }
    },
  };
}
