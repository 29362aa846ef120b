// client-memo-store.mjs: where the JS client keeps a memoized spec's permanent responses
// (pldp-client.mjs): in memory (tests), a file in Node (the Python client's format, pldp.memo/1,
// under its lock), IndexedDB in browsers.

import { withFileLock } from "./client-locks.mjs";
import { memoBad } from "./client-memo.mjs";
import { MemoStoreError } from "./client-wire.mjs";

/**
 * Permanent responses kept in memory (tests and simulations): they die with the page or process,
 * and a later one would draw new ones, voiding the eps_perm claim.
 */
export class MemoryMemoStore {
  #text = null;

  /** Run `fn(text, where)` -> {text, result} on the stored text (null if empty); keep the new text. */
  async update(fn) {
    const { text, result } = fn(this.#text, "(in memory)");
    if (text !== null) this.#text = text;
    return result;
  }
}

const FILE_QUEUES = new Map(); // path -> the promise of its last update (one at a time per path)

/** The default memo file of Node (docs/wire-format.md §6): what the Python client uses. */
async function defaultMemoPath() {
  const { join } = await import("node:path");
  const { homedir } = await import("node:os");
  const env = process.env;
  if (env.PLDP_MEMO_STORE) return env.PLDP_MEMO_STORE;
  let base;
  if (process.platform === "win32") base = env.APPDATA || join(homedir(), "AppData", "Roaming");
  else if (process.platform === "darwin") base = join(homedir(), "Library", "Application Support");
  else base = env.XDG_DATA_HOME || join(homedir(), ".local", "share");
  return join(base, "pldp", "memo.json");
}

/**
 * Node: permanent responses in a JSON file (`pldp.memo/1`, the Python client's format), mode 0600,
 * replaced atomically (a temporary file in the same folder, fsync, rename), each update under the
 * lock the Python client takes ({@link withFileLock}: flock on `PATH.lock`); updates of one path
 * also run one at a time in this process. Default path: `$PLDP_MEMO_STORE`, else `pldp/memo.json` in
 * the user's data directory (`$XDG_DATA_HOME` or `~/.local/share`; macOS `~/Library/Application
 * Support`; Windows `%APPDATA%`).
 */
export class FileMemoStore {
  /** @param {string} [path] */
  constructor(path) {
    this.path = path;
  }

  async #run(fn) {
    const fs = await import("node:fs/promises");
    const { dirname, join } = await import("node:path");
    const path = this.path ?? (await defaultMemoPath());
    let held = false;
    try {
      return await withFileLock(path, () => {
        held = true;
        return this.#locked(fs, dirname(path), join, path, fn);
      });
    } catch (exc) {
      if (held) throw exc;
      throw memoBad(path, `cannot be locked (${exc.code ?? exc.message})`);
    }
  }

  /** Read, update and write the file, under its lock. */
  async #locked(fs, dir, join, path, fn) {
    let text = null;
    try {
      const st = await fs.stat(path);
      if (process.platform !== "win32" && st.mode & 0o077) {
        throw memoBad(path, `is open to other users (mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}); chmod 600 it`);
      }
      text = await fs.readFile(path, "utf8");
    } catch (exc) {
      if (exc instanceof MemoStoreError) throw exc;
      if (exc.code !== "ENOENT") throw memoBad(path, `cannot be read (${exc.code ?? exc.message})`);
    }
    const { text: next, result } = fn(text, path);
    if (next !== null) {
      const tmp = join(dir, `.memo-${Date.now()}-${Math.random().toString(16).slice(2)}.tmp`);
      try {
        const fh = await fs.open(tmp, "wx", 0o600);
        try {
          await fh.writeFile(next, "utf8");
          await fh.sync();
        } finally {
          await fh.close();
        }
        await fs.rename(tmp, path);
        if (process.platform !== "win32") {
          const dh = await fs.open(dir, "r");
          await dh.sync().finally(() => dh.close());
        }
      } catch (exc) {
        await fs.rm(tmp, { force: true });
        throw memoBad(path, `cannot be written (${exc.code ?? exc.message})`);
      }
    }
    return result;
  }

  /** Run `fn(text, where)` -> {text, result} on the file's text (null if missing); write the new text. */
  update(fn) {
    const key = this.path ?? "";
    const run = () => this.#run(fn);
    const done = (FILE_QUEUES.get(key) ?? Promise.resolve()).then(run, run);
    FILE_QUEUES.set(key, done.catch(() => undefined));
    return done;
  }
}

/**
 * Browsers: permanent responses in IndexedDB (database `name`, object store `memo`, one record: the
 * `pldp.memo/1` text), read and rewritten in one readwrite transaction (strict durability), so two
 * tabs cannot draw two permanent responses of one value.
 */
export class IndexedDBMemoStore {
  /** @param {string} [name="pldp-memo"] The database's name. */
  constructor(name = "pldp-memo") {
    this.name = name;
  }

  #open() {
    return new Promise((resolve, reject) => {
      const req = globalThis.indexedDB.open(this.name, 1);
      req.onupgradeneeded = () => req.result.createObjectStore("memo");
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(memoBad(`(IndexedDB ${this.name})`, `cannot be opened (${req.error?.message})`));
      req.onblocked = () => reject(memoBad(`(IndexedDB ${this.name})`, "is blocked by another page"));
    });
  }

  /** Run `fn(text, where)` -> {text, result} in one transaction on the stored text (null if none). */
  async update(fn) {
    const where = `(IndexedDB ${this.name})`;
    const db = await this.#open();
    try {
      return await new Promise((resolve, reject) => {
        const tx = db.transaction("memo", "readwrite", { durability: "strict" });
        const store = tx.objectStore("memo");
        let result;
        let failed = null;
        const get = store.get("memo");
        get.onsuccess = () => {
          try {
            const out = fn(get.result === undefined ? null : get.result, where);
            result = out.result;
            if (out.text !== null) store.put(out.text, "memo");
          } catch (exc) {
            failed = exc;
            tx.abort();
          }
        };
        tx.oncomplete = () => resolve(result);
        tx.onabort = tx.onerror = () => reject(failed ?? memoBad(where, `cannot be read or written (${tx.error?.message})`));
      });
    } finally {
      db.close();
    }
  }
}

/** The platform's memo store: IndexedDB in a browser, the default file in Node. */
export function defaultMemoStore() {
  if (globalThis.indexedDB) return new IndexedDBMemoStore();
  if (globalThis.process?.versions?.node) return new FileMemoStore();
  throw new MemoStoreError("this platform has no memo store (no IndexedDB, not Node): give one as {store}");
}
