// client-reports.mjs: the JS client's Client (pldp-client.mjs): a loaded spec's reports of
// answers, every decision an integer comparison of a uniform 32-bit word with one of the spec's
// thresholds, drawn in the order of the wire format (docs/wire-format.md §2).

import { answerInput } from "./client-answers.mjs";
import { ID_WORDS, Words } from "./client-grid.mjs";
import { defaultMemoStore } from "./client-memo-store.mjs";
import { closeMemo, drawMemo, openMemo } from "./client-memo.mjs";
import { draw, wordCount } from "./client-nodes.mjs";
import { program } from "./client-spec.mjs";
import { AnswerError, BATCH_FORMAT, REPORT_FORMAT } from "./client-wire.mjs";

/**
 * Randomizes answers by a loaded campaign spec: every decision an integer comparison of a uniform
 * 32-bit word with one of the spec's thresholds (docs/wire-format.md §2). Answers are used once
 * and never stored or logged.
 */
export class Client {
  #prog;
  #words;
  #store = null;
  #spec;
  #ledger;

  /**
   * @param {object} spec A spec returned by {@link loadSpec} (verified; anything else is refused).
   * @param {{random?: function(number): Uint32Array}} [options] `random(n)` returns n uniform
   *   32-bit words. Default: crypto.getRandomValues, buffered in chunks of 16384 words. Inject a
   *   source only for tests: the words are drawn in the order of the wire format, so two clients
   *   given the same word stream write the same bytes.
   * @param {{update: function}} [options.store] A memoized spec's memo store: {@link FileMemoStore}
   *   (Node), {@link IndexedDBMemoStore} (browsers) or {@link MemoryMemoStore} (tests only).
   *   Default {@link defaultMemoStore}; not used for a spec that is not memoized.
   * @param {{charge: function}} [options.ledger] A privacy ledger (pldp-ledger.mjs): every batch is
   *   charged to it, and refused (LedgerCapError) before any word is drawn if it would go over a cap
   *   (the owner's, or the spec's own caps member). Required for a spec that sets caps (a TypeError
   *   without one: nothing else would keep the spend).
   */
  constructor(spec, { random, store, ledger } = {}) {
    const prog = program(spec);
    if (!prog) throw new TypeError("Client needs a spec returned by loadSpec (id and privacy claims verified)");
    if (random !== undefined && typeof random !== "function") throw new TypeError("random must be a function n -> Uint32Array");
    this.#prog = prog;
    this.#words = new Words(random);
    this.#spec = spec;
    this.#ledger = ledger ?? null;
    if (spec.caps !== undefined && this.#ledger === null) {
      throw new TypeError(
        "this spec sets caps on what a device may spend or send (its caps member): give the client a ledger that keeps " +
          "the spend (new Client(spec, {ledger: Ledger.browser()}) or await Ledger.file(path) in Node)",
      );
    }
    /** The spec's id. */
    this.specId = prog.id;
    /** The spec's memo key (a memoized spec), else null. */
    this.memoKey = prog.memo?.key ?? null;
    /**
     * How many distinct values of the last report(s) call were new to the memo (each drew its
     * permanent response): what a ledger records as the per-value spend, for display only (its caps
     * are checked against a charge that does not depend on the answers, pldp-ledger.mjs).
     */
    this.lastNewValues = 0;
    /** Those values (item indices, ascending): on the device only, like the memo. */
    this.lastNewItems = [];
    if (prog.memo !== null) {
      if (store !== undefined && (store === null || typeof store.update !== "function")) {
        throw new TypeError("store must be a memo store (an object with update(fn))");
      }
      this.#store = store ?? defaultMemoStore();
    }
  }

  /** The sampler's input for one answer, validated before any word is drawn. */
  #input(node, answer, level, levels) {
    return answerInput(node, this.#prog.labelIndex, answer, level, levels);
  }

  #one(input) {
    const root = this.#prog.root;
    const words = this.#words;
    words.ensure(ID_WORDS + wordCount(root, input));
    const id = words.id();
    return { id, payload: draw(words, root, input) };
  }

  /**
   * Reports of items of a memo root, in one update of the memo store: its text read and checked
   * (MemoStoreError if it cannot be trusted), the memo key's entry checked against this spec, the
   * reports drawn, and the memo with their new permanent responses written before they are returned.
   */
  #memoReports(items) {
    const node = this.#prog.root;
    const memo = this.#prog.memo;
    return this.#store.update((text, where) => {
      const { memos, entry, responses } = openMemo(text, where, node, memo);
      // before any word is drawn; the refusal depends on the count and the ledger only, the values
      // new to the memo are recorded for display (the per-value spend) and decide nothing
      this.#ledger?.charge(this.#spec, items.length, new Set(items.filter((x) => !responses.has(x))).size);
      const fresh = new Set();
      const reports = items.map((x) => drawMemo(this.#words, node, x, responses, fresh));
      this.lastNewItems = [...fresh].sort((a, b) => a - b);
      this.lastNewValues = fresh.size;
      if (!fresh.size) return { text: null, result: reports };
      return { text: closeMemo(memos, memo.key, entry, responses), result: reports };
    });
  }

  // ------------------------------------------------------------------ reports
  /**
   * Randomize one user's answer.
   *
   * @param {*} answer A label or index (direct, unary, leveled roots); an array of distinct labels
   *   or indices (padding: an item-set, possibly empty); an array with one such answer per
   *   attribute (attributes).
   * @param {{level?: number, levels?: Array<number|null>}} [choices] `level`: the user's budget
   *   level index (leveled root); `levels`: one level index per attribute, null for a part that is
   *   not leveled (attributes root).
   * @returns {{format: string, spec: string, id: string, payload: *}} The report
   *   (`pldp.report/1`), members in the wire order.
   * @throws {AnswerError} For an answer or level the spec does not take (no word is drawn then).
   */
  report(answer, choices = {}) {
    const { level, levels } = choices ?? {};
    const input = this.#input(this.#prog.root, answer, level, levels);
    if (this.#store !== null) {
      return this.#memoReports([input]).then(([{ id, payload }]) => ({ format: REPORT_FORMAT, spec: this.#prog.id, id, payload }));
    }
    this.lastNewValues = 0;
    this.#ledger?.charge(this.#spec, 1, 0); // before any word is drawn
    const { id, payload } = this.#one(input);
    return { format: REPORT_FORMAT, spec: this.#prog.id, id, payload };
  }

  /**
   * {@link Client#report} as its compact JSON text (what JSON.stringify writes; byte-identical to
   * the Python client's `json.dumps(report, separators=(",", ":"))`).
   *
   * @param {*} answer
   * @param {object} [choices]
   * @returns {string}
   */
  reportJSON(answer, choices = {}) {
    const report = this.report(answer, choices);
    return report instanceof Promise ? report.then((r) => JSON.stringify(r)) : JSON.stringify(report);
  }

  /**
   * Randomize a batch of answers, in order (the same words as one report at a time).
   *
   * @param {Array} answers One answer per report (as for {@link Client#report}).
   * @param {{level?: number|number[], levels?: Array}} [choices] `level`: one index per answer, or
   *   one index for all; `levels`: one levels array per answer, or one levels array for all.
   *   Every answer is checked before any word is drawn.
   * @returns {{format: string, spec: string, reports: Array<{id: string, payload: *}>}} The batch
   *   (`pldp.batch/1`).
   */
  reports(answers, choices = {}) {
    if (!Array.isArray(answers)) throw new AnswerError("answers must be an array (one answer per report)");
    const n = answers.length;
    const { level, levels } = choices ?? {};
    const perLevel = Array.isArray(level);
    const perLevels = Array.isArray(levels) && levels.length > 0 && levels.every(Array.isArray);
    if (perLevel && level.length !== n) throw new AnswerError(`level must hold one index per answer (${n})`);
    if (perLevels && levels.length !== n) throw new AnswerError(`levels must hold one array per answer (${n})`);
    const root = this.#prog.root;
    const inputs = answers.map((a, i) =>
      this.#input(root, a, perLevel ? level[i] : level, perLevels ? levels[i] : levels),
    );
    if (this.#store !== null) return this.#memoReports(inputs).then((reports) => ({ format: BATCH_FORMAT, spec: this.#prog.id, reports }));
    this.lastNewValues = 0;
    this.#ledger?.charge(this.#spec, n, 0); // before any word is drawn
    return { format: BATCH_FORMAT, spec: this.#prog.id, reports: inputs.map((input) => this.#one(input)) };
  }
}
