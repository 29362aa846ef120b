// pldp-ledger.mjs: the device's privacy ledger of the JS client (pldp.ledger/1), for Node and the
// browser; the twin of pldp's Python module pldp.ledger, in the same format.
//
// Every report a client makes spends some of its owner's privacy. The ledger adds it up per
// campaign family (the campaigns of one memo key, else one spec) and in total, per UTC day and over
// all time, and refuses a batch that would go over a cap the device's owner set or the spec's own
// caps member (its family per UTC day and in all; the smaller of the spec's and the owner's family
// cap applies), before a single random word is drawn (pass it to the client: new Client(spec,
// {ledger}); a spec with caps needs one). Apple keeps such a
// ledger with a daily budget per use case ("Differential Privacy Overview", 2017); RAPPOR's
// memoization lets a device report again without paying again for a value (Erlingsson et al.,
// CCS 2014).
//
// The accounting rule (docs/collector.md, "The device's privacy ledger"): a batch of n reports of a
// spec s charges its family
//
//     c = n * eps(s)             if s is not memoized (eps: the worst case s claims for one whole
//                                report, verify(s).ldp_epsilon: the largest budget over items and
//                                levels, summed over attributes),
//     c = k * eps_perm(s)        if s is memoized and k of the batch's values are new to the memo
//                                (eps_perm: the largest budget of its permanent response),
//
// and a family's spend is the sum of its charges, the device's the sum over families (sequential
// composition; the reports of a memoized value are functions of its one permanent response, so all
// of them together reveal at most eps_perm of it, and distinct values add up). A report of a value
// already in the memo charges nothing. One report's own bound (eps_1, or eps) is kept as the
// family's report_epsilon, not added up: r * eps_1 is no bound of r reports of one value.
//
// Storage: Ledger.browser() keeps it in localStorage (the collector's origin), Ledger.file(path)
// in a file (Node: mode 0600, replaced atomically; the Python client's format), Ledger.memory() in
// memory (tests). A stored ledger that cannot be read or trusted makes charge() refuse
// (LedgerError): starting again would forget what was spent.

import { canonicalJSON, verify } from "./pldp-client.mjs";

const LEDGER_FORMAT = "pldp.ledger/1";
/** Slack of a cap comparison (epsilon), for sums of decimal budgets such as 0.1 * 3. */
const TOLERANCE = 1e-9;
const DAY = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
const FAMILY_KEYS = ["campaigns", "day", "day_epsilon", "day_reports", "day_values", "epsilon", "report_epsilon", "reports", "values"];
const CAP_NAMES = ["day", "total", "family_day", "family_total"];

/** A ledger that cannot be read, written or trusted: the client refuses to report. */
export class LedgerError extends Error {
  constructor(message) {
    super(message);
    this.name = "LedgerError";
  }
}

/** A batch that would spend more than a cap allows: refused before anything was drawn or recorded. */
export class LedgerCapError extends Error {
  constructor(message) {
    super(message);
    this.name = "LedgerCapError";
  }
}

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
const isCount = (v) => Number.isInteger(v) && v >= 0;
const budget = (e) => (e === "inf" ? Infinity : e);
/** A stored epsilon (a number >= 0, or null: unbounded) as a number; undefined if not valid. */
const readEps = (v) => (v === null ? Infinity : typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined);
const jsonEps = (e) => (e === Infinity ? null : e);
const fmt = (x) => String(Number(x.toPrecision(6)));

function bad(where, why) {
  return new LedgerError(
    `the privacy ledger ${where} ${why}; refusing to report (a fresh ledger would forget what this device ` +
      "has spent). Repair or restore it, or move it away to start an empty one.",
  );
}

// ============================================================================ costs

const COSTS = new WeakMap();

/**
 * What a loaded spec's reports charge: {family, perReport, perValue, reportEpsilon, memoized}.
 *
 * @param {object} spec A spec returned by loadSpec.
 */
export function specCost(spec) {
  let cost = COSTS.get(spec);
  if (cost) return cost;
  const one = verify(spec).ldp_epsilon;
  const root = spec.sampler.root;
  if (root.kind === "memo") {
    const perValue = Math.max(...root.permanent.epsilons.map(budget));
    cost = { family: String(spec.memo?.key ?? spec.id), perReport: one, perValue, reportEpsilon: one, memoized: true };
  } else {
    cost = { family: spec.id, perReport: one, perValue: 0, reportEpsilon: one, memoized: false };
  }
  COSTS.set(spec, cost);
  return cost;
}

/** The charge c of `reports` reports, `values` of them new to the memo (0 times an infinite budget is 0). */
function chargeOf(cost, reports, values) {
  const [count, eps] = cost.memoized ? [values, cost.perValue] : [reports, cost.perReport];
  return count === 0 ? 0 : count * eps;
}

// ============================================================================ the stored document

function checkFamily(e, where, name) {
  const n = JSON.stringify(name);
  if (!isObject(e) || Object.keys(e).sort().join() !== FAMILY_KEYS.join()) throw bad(where, `has a family ${n} without exactly ${FAMILY_KEYS.join(", ")}`);
  for (const k of ["epsilon", "day_epsilon", "report_epsilon"]) {
    if (readEps(e[k]) === undefined) throw bad(where, `has a family ${n} whose ${k} is not a number >= 0 or null`);
  }
  if (!["reports", "values", "day_reports", "day_values"].every((k) => isCount(e[k]))) throw bad(where, `has a family ${n} whose counts are not integers >= 0`);
  if (typeof e.day !== "string" || !DAY.test(e.day)) throw bad(where, `has a family ${n} whose day is not YYYY-MM-DD`);
  if (!isObject(e.campaigns)) throw bad(where, `has a family ${n} whose campaigns are not an object`);
  for (const [id, c] of Object.entries(e.campaigns)) {
    const keys = isObject(c) ? Object.keys(c) : [];
    let ok = keys.includes("reports") && keys.includes("rounds") && keys.every((k) => ["reports", "rounds", "question"].includes(k));
    ok = ok && isCount(c.reports) && (c.question === undefined || typeof c.question === "string") && Array.isArray(c.rounds);
    ok = ok && c.rounds.every((r, i) => isCount(r) && r > 0 && (i === 0 || r > c.rounds[i - 1]));
    if (!ok) throw bad(where, `has a campaign ${JSON.stringify(id)} that is not {reports, rounds[, question]}`);
  }
}

/** The families of a stored ledger's text (null: none yet), every member checked. */
function readFamilies(text, where) {
  if (text === null || text === undefined) return {};
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (exc) {
    throw bad(where, `is not valid JSON (${exc.message})`);
  }
  if (!isObject(doc) || Object.keys(doc).sort().join() !== "families,format" || doc.format !== LEDGER_FORMAT) {
    throw bad(where, `is not a ${LEDGER_FORMAT} object with exactly 'format' and 'families'`);
  }
  if (!isObject(doc.families)) throw bad(where, "has families that are not an object");
  for (const [name, e] of Object.entries(doc.families)) checkFamily(e, where, name);
  return doc.families;
}

// ============================================================================ storages

/** Storage in memory (tests and simulations: it dies with the page or process). */
function memoryStorage() {
  let text = null;
  return { where: "(in memory)", read: () => text, write: (t) => (text = t) };
}

/** Storage in the browser's localStorage under `key` (the page's origin). */
function localStorageStorage(key) {
  const where = `in this browser's storage (${key})`;
  return {
    where,
    read() {
      try {
        return globalThis.localStorage.getItem(key);
      } catch (exc) {
        throw bad(where, `cannot be read (${exc.message})`);
      }
    },
    write(text) {
      try {
        globalThis.localStorage.setItem(key, text);
      } catch (exc) {
        throw bad(where, `cannot be written (${exc.message})`);
      }
    },
  };
}

/** Storage in a file (Node): mode 0600, replaced atomically (temporary file, fsync, rename). */
async function fileStorage(path) {
  const fs = await import("node:fs");
  const { dirname, basename, join } = await import("node:path");
  const where = path;
  return {
    where,
    read() {
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
    },
    write(text) {
      const dir = dirname(path);
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
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
      } catch (exc) {
        fs.rmSync(tmp, { force: true });
        throw bad(where, `cannot be written (${exc.message})`);
      }
    },
  };
}

// ============================================================================ the ledger

function checkCaps(caps) {
  const out = {};
  for (const [k, v] of Object.entries(caps ?? {})) {
    if (!CAP_NAMES.includes(k)) throw new TypeError(`unknown cap ${JSON.stringify(k)}; caps are ${CAP_NAMES.join(", ")}`);
    if (v !== null && v !== undefined && !(typeof v === "number" && v >= 0)) throw new TypeError(`the cap ${k} must be a number >= 0 or null`);
    if (v !== null && v !== undefined) out[k] = v;
  }
  return Object.freeze(out);
}

const spend = (epsilon = 0, reports = 0, values = 0) => ({ epsilon, reports, values });
const plus = (a, b) => spend(a.epsilon + b.epsilon, a.reports + b.reports, a.values + b.values);

/** The ledger's view of `families` on `day`: {day, today, total, families: [...], caps}. */
function viewOf(families, day, caps) {
  const lines = Object.keys(families)
    .sort()
    .map((name) => {
      const e = families[name];
      const campaigns = Object.keys(e.campaigns)
        .sort()
        .map((id) => ({ spec: id, reports: e.campaigns[id].reports, rounds: [...e.campaigns[id].rounds], question: e.campaigns[id].question ?? null }));
      return {
        family: name,
        today: e.day === day ? spend(readEps(e.day_epsilon), e.day_reports, e.day_values) : spend(),
        total: spend(readEps(e.epsilon), e.reports, e.values),
        reportEpsilon: readEps(e.report_epsilon),
        campaigns,
      };
    });
  return {
    day,
    today: lines.reduce((s, f) => plus(s, f.today), spend()),
    total: lines.reduce((s, f) => plus(s, f.total), spend()),
    families: lines,
    caps,
  };
}

/** A family's entry after a charge c (today's figures restarted on a new day). */
function added(entry, spec, cost, reports, values, c, day, round) {
  const e = entry ? { ...entry } : { epsilon: 0, reports: 0, values: 0, report_epsilon: 0, campaigns: {} };
  if (e.day !== day) Object.assign(e, { day, day_epsilon: 0, day_reports: 0, day_values: 0 });
  e.epsilon = jsonEps(readEps(e.epsilon) + c);
  e.day_epsilon = jsonEps(readEps(e.day_epsilon) + c);
  e.reports += reports;
  e.values += values;
  e.day_reports += reports;
  e.day_values += values;
  e.report_epsilon = jsonEps(Math.max(readEps(e.report_epsilon), cost.reportEpsilon));
  const old = e.campaigns[spec.id] ?? { reports: 0, rounds: [] };
  const rounds = round === null || old.rounds.includes(round) ? [...old.rounds] : [...old.rounds, round].sort((a, b) => a - b);
  const mine = { reports: old.reports + reports, rounds };
  if (typeof spec.question === "string") mine.question = spec.question;
  e.campaigns = { ...e.campaigns, [spec.id]: mine };
  return e;
}

/** The smallest of named caps [name, cap] (undefined: no cap), the first on a tie; ["", undefined] when none is set. */
function smaller(...caps) {
  let best = ["", undefined];
  for (const [name, cap] of caps) if (cap !== undefined && (best[1] === undefined || cap < best[1])) best = [name, cap];
  return best;
}

/**
 * A device's privacy ledger (the module's comment: the accounting rule).
 *
 * Make one with Ledger.browser(), await Ledger.file(path) (Node) or Ledger.memory(), and give it to
 * a client: `new Client(spec, {ledger})`, which charges every batch before drawing it.
 */
export class Ledger {
  #storage;
  #clock;

  /**
   * @param {{where: string, read: function(): (string|null), write: function(string): void}} storage
   * @param {{caps?: {day?: number, total?: number, family_day?: number, family_total?: number},
   *   clock?: function(): number}} [options] `caps`: the device owner's, in epsilon (`day`, `total`:
   *   the whole device per UTC day and in all; `family_day`, `family_total`: each family);
   *   `clock()`: seconds since the epoch (default the system's), whose UTC date is the day.
   */
  constructor(storage, { caps, clock } = {}) {
    this.#storage = storage;
    this.#clock = clock ?? (() => Date.now() / 1000);
    /** The caps (frozen). */
    this.caps = checkCaps(caps);
  }

  /** A ledger in this browser's localStorage (default key "pldp-ledger"). */
  static browser({ key = "pldp-ledger", ...options } = {}) {
    return new Ledger(localStorageStorage(key), options);
  }

  /** A ledger in a file (Node; the Python client's format). */
  static async file(path, options = {}) {
    return new Ledger(await fileStorage(String(path)), options);
  }

  /** A ledger in memory (tests and simulations only). */
  static memory(options = {}) {
    return new Ledger(memoryStorage(), options);
  }

  /** The ledger's day: the UTC date of the clock, YYYY-MM-DD. */
  today() {
    return new Date(this.#clock() * 1000).toISOString().slice(0, 10);
  }

  /**
   * Check the caps and record a batch of `reports` reports of a loaded spec, `values` of them new
   * to its memo; returns the charge c. Call it before drawing: a refused batch spends nothing.
   *
   * @param {object} spec A spec returned by loadSpec.
   * @param {number} reports
   * @param {number} [values]
   * @param {{round?: number|null}} [options] The campaign's round the reports answer, if known.
   * @returns {number}
   * @throws {LedgerCapError} When c > 0 would take a spend over a cap (nothing is recorded).
   * @throws {LedgerError} When the stored ledger cannot be read, trusted or written.
   */
  charge(spec, reports, values = 0, { round = null } = {}) {
    if (!isCount(reports) || !isCount(values) || values > reports) throw new TypeError("reports and values must be integers with 0 <= values <= reports");
    if (round !== null && !(isCount(round) && round > 0)) throw new TypeError("round must be a positive integer");
    const cost = specCost(spec);
    const c = chargeOf(cost, reports, values);
    const families = readFamilies(this.#storage.read(), this.#storage.where);
    const day = this.today();
    if (c > 0) {
      const why = this.#refusal(families, cost.family, c, day, spec.caps);
      if (why !== null) {
        throw new LedgerCapError(
          `the privacy ledger refuses ${reports} report(s) of spec ${spec.id} (family ${JSON.stringify(cost.family)}): ${why}. Nothing was drawn or sent.`,
        );
      }
    }
    families[cost.family] = added(families[cost.family], spec, cost, reports, values, c, day, round);
    this.#storage.write(canonicalJSON({ format: LEDGER_FORMAT, families }));
    return c;
  }

  /** Why a charge c to `family` would break a cap, or null; a family's cap is the smaller of the owner's and the spec's (the spec's on a tie). */
  #refusal(families, family, c, day, specCaps) {
    const view = viewOf(families, day, this.caps);
    const mine = view.families.find((f) => f.family === family);
    const theirs = specCaps ?? {};
    const [dayName, dayCap] = smaller(["the spec's", theirs.day], ["the owner's", this.caps.family_day]);
    const [allName, allCap] = smaller(["the spec's", theirs.total], ["the owner's", this.caps.family_total]);
    const checks = [
      [`${dayName} daily cap of this family`, dayCap, mine ? mine.today.epsilon : 0, "today"],
      [`${allName} total cap of this family`, allCap, mine ? mine.total.epsilon : 0, "in all"],
      ["the device's daily cap", this.caps.day, view.today.epsilon, "today"],
      ["the device's total cap", this.caps.total, view.total.epsilon, "in all"],
    ];
    for (const [name, cap, spent, when] of checks) {
      if (cap !== undefined && spent + c > cap + TOLERANCE) {
        return `${name} is epsilon = ${fmt(cap)}, ${fmt(spent)} is spent ${when}, and this batch would spend ${fmt(c)}`;
      }
    }
    return null;
  }

  /**
   * The ledger as it stands: {day, today, total, families, caps}; today and total are
   * {epsilon, reports, values} (epsilon Infinity: unbounded); each family {family, today, total,
   * reportEpsilon, campaigns: [{spec, reports, rounds, question}]}.
   *
   * @throws {LedgerError} When the stored ledger cannot be read or trusted.
   */
  view() {
    return viewOf(readFamilies(this.#storage.read(), this.#storage.where), this.today(), this.caps);
  }

  /** This ledger with every charge tagged with `round` (what a survey page gives its client). */
  withRound(round) {
    return { charge: (spec, reports, values = 0) => this.charge(spec, reports, values, { round }), view: () => this.view() };
  }
}
