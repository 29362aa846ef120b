// pldp-ledger.mjs: the device's privacy ledger of the JS client (pldp.ledger/2), for Node and the
// browser; the twin of pldp's Python module pldp.ledger, in the same format.
//
// Every report a client makes spends some of its owner's privacy. The ledger adds it up per
// campaign family (the campaigns of one memo key, else one spec) and in total, per UTC day and over
// all time, and refuses a batch that would go over a cap the device's owner set or the spec's own
// caps member (its family per UTC day and in all; the smaller of the spec's and the owner's family
// cap applies; and "rounds": N, the most reports the device sends on the family, one per round of
// a recurring campaign), before a single random word is drawn (pass it to the client: new
// Client(spec, {ledger}); a spec with caps needs one). Apple keeps such a ledger with a daily
// budget per use case ("Differential Privacy Overview", 2017); RAPPOR's memoization lets a device
// report again without revealing its value again and again (Erlingsson et al., CCS 2014).
//
// The accounting rule (docs/collector.md, "The device's privacy ledger"). Whether a batch is sent or
// refused must not depend on the answers it protects (the collector sees which reports arrive), so
// the ledger keeps two spends per family.
//
// The charged spend (epsilon, day_epsilon): every cap is checked against it, and it depends on
// counts and the spec only. A batch of n reports of a spec s charges its family
//
//     c = n * eps(s)                                      if s is not memoized (eps: the worst case
//                                                         s claims for one whole report,
//                                                         verify(s).ldp_epsilon: the largest budget
//                                                         over items and levels, summed over
//                                                         attributes),
//     c = (min(R + n, d) - min(R, d)) * eps_perm(s)       if s is memoized (eps_perm: the largest
//                                                         budget of its permanent response),
//
// where R is the number of reports the family made before (all time: public, the collector sees
// every report) and d the number of values that can draw a permanent response (the memo node's
// domain): every report as if its value were new to the memo, until d reports, after which none can
// be. #refusal sees the charged spends, c, the counts and the caps only.
//
// The rounds cap (docs/wire-format.md §1.3): a batch of n reports is refused when the family's R
// reports so far and n exceed the spec's caps.rounds N, whatever c (after d reports a memoized batch
// is charged 0, and is still refused). Like c it is a count, public and independent of the answers.
// It bounds what neither spend below does: the whole history of the family's reports, whose loss over
// whether and when the answer changed grows with every report (pldp.privacy.over_rounds(spec, N) in
// Python). Each spec's rounds cap is checked, when its own reports are charged, against the reports
// of the whole family (of every spec of it), as each spec's epsilon caps are.
//
// The per-value spend (values_epsilon, day_values_epsilon), shown for information and never read
// by a refusal: k * eps_perm(s) for a memoized batch whose k values were new to the memo (values
// counts them), n * eps(s) otherwise. It is what this device's actual history revealed about its
// values (the reports of a memoized value are functions of its one permanent response, so all of
// them together reveal at most eps_perm of it, and distinct values add up), never more than the
// charged spend. Neither spend bounds everything the reports reveal: the per-value spend bounds
// what they reveal about the values given the times they changed; histories that change at
// different times (a, a, b, b against a, b, b, b) are told apart by a loss that grows with the
// number of rounds (pldp.privacy.over_rounds in Python accounts for it). One report's own bound
// (eps_1, or eps) is kept as the family's report_epsilon, not added up: r * eps_1 is no bound of r
// reports of one value.
//
// Storage: Ledger.browser() keeps it in localStorage (the collector's origin), Ledger.file(path)
// in a file (Node: mode 0600, replaced atomically under the Python client's lock, flock on
// PATH.lock: withFileLock in pldp-client.mjs), Ledger.memory() in memory (tests). A stored ledger
// that cannot be read or trusted makes charge() refuse (LedgerError): starting again would forget
// what was spent. A pldp.ledger/1 ledger (whose epsilon was the per-value spend) is read by
// migrating it conservatively (migrateFamily) and written as pldp.ledger/2 at the next charge.

import { largest } from "./client-checks.mjs";
import { verify } from "./client-spec.mjs";
import { canonicalJSON } from "./client-wire.mjs";
import { bad, fileStorage, localStorageStorage, memoryStorage } from "./ledger-storage.mjs";

export { LedgerError } from "./ledger-storage.mjs";

/** The version tag of the ledger's format. */
export const LEDGER_FORMAT = "pldp.ledger/2";
/** The format before it: read (migrated), never written. */
const LEDGER_FORMAT_1 = "pldp.ledger/1";
/** Slack of a cap comparison (epsilon), for sums of decimal budgets such as 0.1 * 3. */
const TOLERANCE = 1e-9;
const DAY = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
const FAMILY_KEYS_1 = ["campaigns", "day", "day_epsilon", "day_reports", "day_values", "epsilon", "report_epsilon", "reports", "values"];
/** A family's members: epsilon/day_epsilon charged (the caps), values_epsilon/day_values_epsilon per value (display). */
const FAMILY_KEYS = [...FAMILY_KEYS_1, "day_values_epsilon", "values_epsilon"].sort();
const EPS_KEYS = ["epsilon", "day_epsilon", "values_epsilon", "day_values_epsilon", "report_epsilon"];
const CAP_NAMES = ["day", "total", "family_day", "family_total"];

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

// ============================================================================ costs

const COSTS = new WeakMap();

/**
 * What a loaded spec's reports charge: {family, perReport, perValue, reportEpsilon, memoized,
 * domain} (domain: d, the values that can draw a permanent response; 0 if not memoized).
 *
 * @param {object} spec A spec returned by loadSpec.
 */
export function specCost(spec) {
  let cost = COSTS.get(spec);
  if (cost) return cost;
  const one = verify(spec).ldp_epsilon;
  const root = spec.sampler.root;
  if (root.kind === "memo") {
    const perValue = largest(root.permanent.epsilons.map(budget));
    cost = { family: String(spec.memo?.key ?? spec.id), perReport: one, perValue, reportEpsilon: one, memoized: true, domain: root.d };
  } else {
    cost = { family: spec.id, perReport: one, perValue: 0, reportEpsilon: one, memoized: false, domain: 0 };
  }
  COSTS.set(spec, cost);
  return cost;
}

/** count * eps, with 0 times an infinite budget 0. */
const times = (count, eps) => (count === 0 ? 0 : count * eps);

/**
 * The charge c of `reports` reports when the family made `before` reports (all time): counts and
 * the spec only, never the answers (what the caps are checked against).
 *
 * @param {{memoized: boolean, perReport: number, perValue: number, domain: number}} cost specCost(spec)
 * @param {number} reports
 * @param {number} before
 * @returns {number}
 */
export function chargeOf(cost, reports, before) {
  if (!cost.memoized) return times(reports, cost.perReport);
  return times(Math.min(before + reports, cost.domain) - Math.min(before, cost.domain), cost.perValue);
}

/**
 * The per-value spend of a batch, `values` of its values new to the memo (display only: it depends
 * on the answers, and no refusal reads it).
 *
 * @param {{memoized: boolean, perReport: number, perValue: number}} cost specCost(spec)
 * @param {number} reports
 * @param {number} values
 * @returns {number}
 */
export function spendOf(cost, reports, values) {
  return cost.memoized ? times(values, cost.perValue) : times(reports, cost.perReport);
}

// ============================================================================ the stored document

function checkFamily(e, where, name, keys) {
  const n = JSON.stringify(name);
  if (!isObject(e) || Object.keys(e).sort().join() !== keys.join()) throw bad(where, `has a family ${n} without exactly ${keys.join(", ")}`);
  for (const k of EPS_KEYS.filter((k) => keys.includes(k))) {
    if (readEps(e[k]) === undefined) throw bad(where, `has a family ${n} whose ${k} is not a number >= 0 or null`);
  }
  if (!["reports", "values", "day_reports", "day_values"].every((k) => isCount(e[k]))) throw bad(where, `has a family ${n} whose counts are not integers >= 0`);
  if (typeof e.day !== "string" || !DAY.test(e.day)) throw bad(where, `has a family ${n} whose day is not YYYY-MM-DD`);
  if (!isObject(e.campaigns)) throw bad(where, `has a family ${n} whose campaigns are not an object`);
  for (const [id, c] of Object.entries(e.campaigns)) {
    const ks = isObject(c) ? Object.keys(c) : [];
    let ok = ks.includes("reports") && ks.includes("rounds") && ks.every((k) => ["reports", "rounds", "question"].includes(k));
    ok = ok && isCount(c.reports) && (c.question === undefined || typeof c.question === "string") && Array.isArray(c.rounds);
    ok = ok && c.rounds.every((r, i) => isCount(r) && r > 0 && (i === 0 || r > c.rounds[i - 1]));
    if (!ok) throw bad(where, `has a campaign ${JSON.stringify(id)} that is not {reports, rounds[, question]}`);
  }
}

/**
 * A checked pldp.ledger/1 family as a pldp.ledger/2 one, conservatively (pldp.ledger.store's
 * migrate_family). Format 1 charged a memoized family eps_perm per value new to the memo (values >
 * 0; a fresh spec never records values) and stored that sum as epsilon: its charged spend becomes
 * reports * (epsilon / values) (today's: day_reports * (epsilon / values)), an upper bound of
 * min(R, d) * eps_perm from counts only, and its old epsilon (day_epsilon) its per-value spend. A
 * family with values == 0 keeps its spend as both.
 *
 * @param {object} e
 * @returns {object}
 */
export function migrateFamily(e) {
  const out = { ...e, values_epsilon: e.epsilon, day_values_epsilon: e.day_epsilon };
  if (e.values > 0) {
    const perValue = readEps(e.epsilon) / e.values;
    out.epsilon = jsonEps(times(e.reports, perValue));
    out.day_epsilon = jsonEps(times(e.day_reports, perValue));
  }
  return out;
}

/** The families of a stored ledger's text (null: none yet), every member checked; a pldp.ledger/1 ledger's migrated. */
function readFamilies(text, where) {
  if (text === null || text === undefined) return {};
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (exc) {
    throw bad(where, `is not valid JSON (${exc.message})`);
  }
  const version = isObject(doc) ? doc.format : undefined;
  if (!isObject(doc) || Object.keys(doc).sort().join() !== "families,format" || (version !== LEDGER_FORMAT && version !== LEDGER_FORMAT_1)) {
    throw bad(where, `is not a ${LEDGER_FORMAT} object with exactly 'format' and 'families'`);
  }
  if (!isObject(doc.families)) throw bad(where, "has families that are not an object");
  const keys = version === LEDGER_FORMAT ? FAMILY_KEYS : FAMILY_KEYS_1;
  for (const [name, e] of Object.entries(doc.families)) checkFamily(e, where, name, keys);
  if (version === LEDGER_FORMAT) return doc.families;
  return Object.fromEntries(Object.entries(doc.families).map(([name, e]) => [name, migrateFamily(e)]));
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

/** A spend: charged epsilon (the caps), reports, values new to the memo, per-value epsilon (display). */
const spend = (epsilon = 0, reports = 0, values = 0, valuesEpsilon = 0) => ({ epsilon, reports, values, valuesEpsilon });
const plus = (a, b) => spend(a.epsilon + b.epsilon, a.reports + b.reports, a.values + b.values, a.valuesEpsilon + b.valuesEpsilon);

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
        today: e.day === day ? spend(readEps(e.day_epsilon), e.day_reports, e.day_values, readEps(e.day_values_epsilon)) : spend(),
        total: spend(readEps(e.epsilon), e.reports, e.values, readEps(e.values_epsilon)),
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

/**
 * The charged spends a refusal compares with the caps: {familyToday, familyTotal, deviceToday,
 * deviceTotal} (epsilon and day_epsilon; never the per-value spend).
 */
function chargedOf(families, family, day) {
  const today = (e) => (e.day === day ? readEps(e.day_epsilon) : 0);
  const mine = families[family];
  const every = Object.keys(families)
    .sort()
    .map((name) => families[name]);
  return {
    familyToday: mine ? today(mine) : 0,
    familyTotal: mine ? readEps(mine.epsilon) : 0,
    deviceToday: every.reduce((s, e) => s + today(e), 0),
    deviceTotal: every.reduce((s, e) => s + readEps(e.epsilon), 0),
  };
}

/**
 * A family's entry after a batch {reports, values, charged, valuesEpsilon} (today's figures
 * restarted on a new day).
 */
function added(entry, spec, cost, batch, day, round) {
  const e = entry ? { ...entry } : { epsilon: 0, reports: 0, values: 0, values_epsilon: 0, report_epsilon: 0, campaigns: {} };
  if (e.day !== day) Object.assign(e, { day, day_epsilon: 0, day_reports: 0, day_values: 0, day_values_epsilon: 0 });
  e.epsilon = jsonEps(readEps(e.epsilon) + batch.charged);
  e.day_epsilon = jsonEps(readEps(e.day_epsilon) + batch.charged);
  e.values_epsilon = jsonEps(readEps(e.values_epsilon) + batch.valuesEpsilon);
  e.day_values_epsilon = jsonEps(readEps(e.day_values_epsilon) + batch.valuesEpsilon);
  e.reports += batch.reports;
  e.values += batch.values;
  e.day_reports += batch.reports;
  e.day_values += batch.values;
  e.report_epsilon = jsonEps(Math.max(readEps(e.report_epsilon), cost.reportEpsilon));
  const old = e.campaigns[spec.id] ?? { reports: 0, rounds: [] };
  const rounds = round === null || old.rounds.includes(round) ? [...old.rounds] : [...old.rounds, round].sort((a, b) => a - b);
  const mine = { reports: old.reports + batch.reports, rounds };
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
   * @param {{where: string, read: function(): (string|null), update: function(function((string|null)): (string|null)): void}} storage
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

  /** A ledger in a file (Node; the Python client's format, and its lock on `${path}.lock`). */
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
   * Check the caps and record a batch of `reports` reports of a loaded spec; returns the charge c,
   * which depends on `reports`, the family's earlier reports and the spec only. Call it before
   * drawing: a refused batch spends nothing. Synchronous (a file ledger blocks while another
   * process holds its lock).
   *
   * @param {object} spec A spec returned by loadSpec.
   * @param {number} reports
   * @param {number} [values] How many of the batch's values were new to the memo: recorded for
   *   display (the per-value spend), never deciding anything.
   * @param {{round?: number|null}} [options] The campaign's round the reports answer, if known.
   * @returns {number}
   * @throws {LedgerCapError} When c > 0 would take a charged spend over a cap (nothing is recorded).
   * @throws {LedgerError} When the stored ledger cannot be read, trusted, locked or written.
   */
  charge(spec, reports, values = 0, { round = null } = {}) {
    if (!isCount(reports) || !isCount(values) || values > reports) throw new TypeError("reports and values must be integers with 0 <= values <= reports");
    if (round !== null && !(isCount(round) && round > 0)) throw new TypeError("round must be a positive integer");
    const cost = specCost(spec);
    let c = 0;
    this.#storage.update((text) => {
      const families = readFamilies(text, this.#storage.where);
      const day = this.today();
      const entry = families[cost.family];
      const before = entry ? entry.reports : 0;
      c = chargeOf(cost, reports, before);
      const why = this.#refusal(chargedOf(families, cost.family, day), c, spec.caps, before, reports);
      if (why !== null) {
        throw new LedgerCapError(
          `the privacy ledger refuses ${reports} report(s) of spec ${spec.id} (family ${JSON.stringify(cost.family)}): ${why}. Nothing was drawn or sent.`,
        );
      }
      const batch = { reports, values, charged: c, valuesEpsilon: spendOf(cost, reports, values) };
      families[cost.family] = added(entry, spec, cost, batch, day, round);
      return canonicalJSON({ format: LEDGER_FORMAT, families });
    });
    return c;
  }

  /**
   * Why a batch of `reports` reports charging c to a family that sent `before` reports (all time)
   * would break a cap, or null. A family's epsilon cap is the smaller of the owner's and the spec's
   * (the spec's on a tie); the spec's rounds cap bounds before + reports, whatever c (a batch charged
   * 0 is refused by it too). Its inputs are data-independent by construction: the charged spends
   * (chargedOf), c, the counts and the caps.
   */
  #refusal(spent, c, specCaps, before, reports) {
    const theirs = specCaps ?? {};
    if (c > 0) {
      const [dayName, dayCap] = smaller(["the spec's", theirs.day], ["the owner's", this.caps.family_day]);
      const [allName, allCap] = smaller(["the spec's", theirs.total], ["the owner's", this.caps.family_total]);
      const checks = [
        [`${dayName} daily cap of this family`, dayCap, spent.familyToday, "today"],
        [`${allName} total cap of this family`, allCap, spent.familyTotal, "in all"],
        ["the device's daily cap", this.caps.day, spent.deviceToday, "today"],
        ["the device's total cap", this.caps.total, spent.deviceTotal, "in all"],
      ];
      for (const [name, cap, was, when] of checks) {
        if (cap !== undefined && was + c > cap + TOLERANCE) {
          return `${name} is epsilon = ${fmt(cap)}, ${fmt(was)} is spent ${when}, and this batch would spend ${fmt(c)}`;
        }
      }
    }
    const rounds = theirs.rounds;
    if (rounds !== undefined && reports > 0 && before + reports > rounds) {
      return `the spec's rounds cap of this family is ${rounds} report(s), ${before} sent so far, and this batch would send ${reports}`;
    }
    return null;
  }

  /**
   * The ledger as it stands: {day, today, total, families, caps}; today and total are
   * {epsilon, reports, values, valuesEpsilon}: epsilon the charged spend (what the caps are
   * checked against; Infinity: unbounded), valuesEpsilon the per-value spend (what this device's
   * actual history revealed about its values, for display only); each family {family, today,
   * total, reportEpsilon, campaigns: [{spec, reports, rounds, question}]}.
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
