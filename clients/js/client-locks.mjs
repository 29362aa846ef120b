// client-locks.mjs: the file locks of the JS client in Node (pldp-client.mjs): the lock the Python
// client takes on PATH.lock (pldp.devicefiles.file_lock), for the memo store and the privacy ledger.

/*
 * A file a client rewrites (the memo store, the privacy ledger) is read, changed and written again
 * under an exclusive lock on PATH.lock: the very lock the Python client takes (a POSIX flock(2) on
 * PATH.lock, pldp.devicefiles.file_lock), so that Node and Python processes of one device never
 * lose each other's writes. Node has no flock in its standard library: the lock file is opened
 * here (created with mode 0600, its folder 0700, as Python does) and util-linux's flock command is
 * run on that open file (`flock -x 3`, the descriptor passed to it as its fd 3). flock(2) locks the
 * open file itself, which this process keeps open after the command exits: the lock is held until
 * the descriptor is closed, and dies with the process (a crash frees it).
 *
 * Where no flock command exists (macOS without util-linux, Windows), Node falls back to a lock
 * file created exclusively (O_EXCL) beside it, PATH.lock.excl, holding the holder's pid: it
 * orders the Node processes of the device among themselves, NOT with the Python client's flock
 * (on Windows Python takes no lock either). A PATH.lock.excl left by a process that died is
 * removed by the next one (its pid is not alive); one removed on normal exit by the process.
 */

/** node:fs, node:path and node:child_process, once loaded (Node only). */
let nodeLib = null;

async function loadNodeLib() {
  if (nodeLib === null) {
    const [fs, path, cp] = await Promise.all([import("node:fs"), import("node:path"), import("node:child_process")]);
    nodeLib = { fs, path, cp };
  }
  return nodeLib;
}

/** The O_EXCL lock files this process holds (removed if it exits while holding them). */
const EXCL_HELD = new Set();
let exclCleanup = false;

/** Whether process `pid` is alive (a process of another user counts as alive). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (exc) {
    return exc.code === "EPERM";
  }
}

/**
 * One attempt at the O_EXCL lock `excl`: a release function, or null while another live process
 * holds it (a lock whose holder died is broken on the way).
 */
function tryExcl(fs, excl) {
  try {
    const fd = fs.openSync(excl, "wx", 0o600);
    try {
      fs.writeSync(fd, `${process.pid}\n`);
    } finally {
      fs.closeSync(fd);
    }
    EXCL_HELD.add(excl);
    if (!exclCleanup) {
      exclCleanup = true;
      process.once("exit", () => EXCL_HELD.forEach((f) => fs.rmSync(f, { force: true })));
    }
    return () => {
      EXCL_HELD.delete(excl);
      fs.rmSync(excl, { force: true });
    };
  } catch (exc) {
    if (exc.code !== "EEXIST") throw exc;
  }
  let holder = NaN;
  let age = 0;
  try {
    holder = Number.parseInt(fs.readFileSync(excl, "utf8"), 10);
    age = Date.now() - fs.statSync(excl).mtimeMs;
  } catch {
    return null; // released meanwhile: the next attempt takes it
  }
  const dead = Number.isInteger(holder) ? !alive(holder) : age > 10000; // no pid 10 s on: its writer died
  if (dead) {
    // break it: move it away and check that what moved is the dead holder's (not a new lock)
    const moved = `${excl}.${process.pid}.stale`;
    try {
      fs.renameSync(excl, moved);
      const was = Number.parseInt(fs.readFileSync(moved, "utf8"), 10);
      if (was !== holder && !(Number.isNaN(was) && Number.isNaN(holder))) {
        try {
          fs.linkSync(moved, excl); // a live lock taken meanwhile: put it back
        } catch {
          // taken again meanwhile: its new holder keeps it
        }
      }
      fs.rmSync(moved, { force: true });
    } catch {
      // another process broke it first
    }
  }
  return null;
}

/** Backoff (ms) of the n-th wait for an O_EXCL lock: 1, 2, 4, ... up to 50. */
const exclDelay = (n) => Math.min(50, 2 ** n);

/**
 * How to take the lock on `lockPath` with util-linux flock: a release function, or null where the
 * command is missing. Throws when the lock file cannot be opened or flock fails.
 */
function flockSync(lib, lockPath) {
  const fd = lib.fs.openSync(lockPath, lib.fs.constants.O_RDWR | lib.fs.constants.O_CREAT, 0o600);
  const run = lib.cp.spawnSync("flock", ["-x", "3"], { stdio: ["ignore", "ignore", "pipe", fd] });
  return flockDone(lib, fd, run.error, run.status, run.stderr);
}

async function flockAsync(lib, lockPath) {
  const fd = lib.fs.openSync(lockPath, lib.fs.constants.O_RDWR | lib.fs.constants.O_CREAT, 0o600);
  const [error, status, stderr] = await new Promise((resolve) => {
    let child;
    try {
      child = lib.cp.spawn("flock", ["-x", "3"], { stdio: ["ignore", "ignore", "pipe", fd] });
    } catch (exc) {
      resolve([exc, null, ""]);
      return;
    }
    let err = "";
    child.stderr.on("data", (b) => (err += b));
    child.once("error", (exc) => resolve([exc, null, err]));
    child.once("close", (status) => resolve([null, status, err]));
  });
  return flockDone(lib, fd, error, status, stderr);
}

function flockDone(lib, fd, error, status, stderr) {
  if (error || status !== 0) {
    lib.fs.closeSync(fd);
    if (error?.code === "ENOENT") return null; // no flock command: the O_EXCL fallback
    throw new Error(error ? error.message : `flock failed (${String(stderr).trim() || `exit status ${status}`})`);
  }
  return () => lib.fs.closeSync(fd); // closing the last descriptor of the open file releases the lock
}

/** Where flock is missing, remembered (the O_EXCL fallback from then on). */
let noFlock = false;

/**
 * Node: run `fn()` (which may return a Promise) holding an exclusive lock on `PATH.lock`, the lock
 * the Python client takes (see above: util-linux flock, else an O_EXCL fallback among Node
 * processes). The folder of `path` is made (mode 0700) if missing. Other work of the process goes
 * on while the lock is awaited.
 *
 * @param {string} path The file the lock protects (the lock is `${path}.lock`).
 * @param {function(): *} fn
 * @returns {Promise<*>} What `fn` returns, once the lock is released.
 * @throws {Error} When the lock cannot be taken (the folder or the lock file cannot be made).
 */
export async function withFileLock(path, fn) {
  const lib = await loadNodeLib();
  lib.fs.mkdirSync(lib.path.dirname(path), { recursive: true, mode: 0o700 });
  let release = noFlock ? null : await flockAsync(lib, `${path}.lock`);
  if (release === null) {
    noFlock = true;
    for (let n = 0; (release = tryExcl(lib.fs, `${path}.lock.excl`)) === null; n++) {
      await new Promise((resolve) => setTimeout(resolve, exclDelay(n)));
    }
  }
  try {
    return await fn();
  } finally {
    release();
  }
}

/**
 * {@link withFileLock} for a synchronous `fn`, blocking this thread while the lock is awaited
 * (what the privacy ledger's charge takes: it must stay synchronous in a memo store's update).
 * Needs {@link loadFileLocks} awaited once before.
 *
 * @param {string} path
 * @param {function(): *} fn
 * @returns {*} What `fn` returns.
 */
export function withFileLockSync(path, fn) {
  const lib = nodeLib;
  if (lib === null) throw new TypeError("await loadFileLocks() before withFileLockSync");
  lib.fs.mkdirSync(lib.path.dirname(path), { recursive: true, mode: 0o700 });
  let release = noFlock ? null : flockSync(lib, `${path}.lock`);
  if (release === null) {
    noFlock = true;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let n = 0; (release = tryExcl(lib.fs, `${path}.lock.excl`)) === null; n++) Atomics.wait(pause, 0, 0, exclDelay(n));
  }
  try {
    return fn();
  } finally {
    release();
  }
}

/** Load what the file locks need (Node modules): once, before {@link withFileLockSync}. */
export async function loadFileLocks() {
  await loadNodeLib();
}
