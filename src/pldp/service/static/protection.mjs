// What a campaign's reports reveal about each answer, read from its spec (docs/wire-format.md §3),
// in words for the survey page and the dashboard. The spec has been loaded (loadSpec of
// pldp-client.mjs) before anything here runs, so every claim used below holds exactly.
//
// The measure shown for an answer x is its one-sided protection
//
//     eps(x) = max over reports r that x can produce, and answers x' != x, of ln Q(r|x) / Q(r|x'),
//
// bounded from the spec's verified claims: no report points to x, against any other answer, by more
// than e^eps(x) (an observer's odds on x over x' grow at most that much). Per node kind:
//
// * direct (KRR, URR, IPRR; LDP, ULDP, IPLDP): Q(y|x) = (w_y + keep [y = x]) / 2^32. A report
//   y != x is at most as likely under x as under any other answer; the report x is
//   (w_x + keep) / w_x times more likely, which the claim of output x bounds by e^eps_x. An answer
//   with w_x = 0 (non-sensitive) can be reported only by its holders: not protected.
// * unary (OUE, RAPPOR: LDP; IDUE: MinID-LDP, AvgID-LDP): every ordered pair of answers (x, x') is
//   claimed at c(eps_x, eps_x') (LDP: the smallest budget; MinID: the smaller; AvgID: the mean), so
//   eps(x) = max over x' != x of c(eps_x, eps_x').
// * padding (item-sets): the report is made from one item picked on the device (an answer or a
//   filler); each answer as the inner unary node protects it against every other item.
// * leveled (RCF, APLDP, FEBSF, PBP, PPDA): given the level t the respondent picks, the level's
//   item node alone depends on the answer, so eps(x) is that node's, at each level. The level
//   itself: sent in the clear, or protected at the spec's verified level_epsilon.
// * attributes (MPLDP): each question's part depends on its answer only; the whole report
//   protects all answers together at the sum of the parts' budgets.
// * memo (L-GRR, L-IPRR, L-OUE, ...: a campaign over rounds): every report of an answer is a fresh
//   randomization of its one permanent response, so all the reports of one answer together protect
//   it at the permanent node's eps(x) (eps_inf), which is what is shown per answer, "each time it is
//   new". Whether and when the answer changes is protected apart, more weakly with every round: the
//   collector computes it (pldp.privacy.over_rounds) and GET /v1/campaigns/{id}/round carries it as
//   `protection`; roundsSentences says both.
// * heavy (PEM, TreeHist, SFP: a free-text campaign): no answers are listed, so there is no eps(x)
//   per answer; the whole report protects every pair of answers alike at the node's verified
//   epsilon (the product of its parts' ratios within e^epsilon), which is what is shown.

import { smallest } from "/static/client-checks.mjs";
import { EVERY_PAIR } from "/static/client-exact.mjs";
import { HashedAnswers, answerLabels } from "/static/client-labels.mjs";
import { budget, el, formatEps, plural } from "/static/common.mjs";

/**
 * The one-sided protection of each of the first `count` answers of a direct or unary node,
 * against the node's first `others` inputs.
 *
 * @returns {number[]} eps(x) per answer; Infinity where a report may reveal the answer.
 */
function nodeProtection(node, count, others) {
  if (node.epsilons === undefined) return Array(count).fill(budget(node.epsilon)); // one budget for every pair of answers
  const eps = node.epsilons.map(budget);
  if (node.kind === "direct") {
    return eps.slice(0, count).map((e, x) => {
      const w = node.weights[x];
      if (w === 0) return Infinity; // only holders of x report x
      if (e !== Infinity) return e; // the verified claim of output x
      return Math.log((w + node.keep) / w); // claimed non-sensitive, yet mixed: the exact ratio
    });
  }
  const least = smallest(eps);
  // ULDP (uRAP): a non-sensitive answer's own bit is set by its holders only (b = 0), so a report
  // may reveal it; every other report protects any answer against any other at the smallest budget
  if (node.notion === "ULDP") return eps.slice(0, count).map((e, x) => (node.b[x] === 0 ? Infinity : least));
  const pair =
    node.notion === "MinID-LDP" ? (a, b) => Math.min(a, b) : node.notion === "AvgID-LDP" ? (a, b) => (a + b) / 2 : () => least;
  return eps.slice(0, count).map((e, x) => {
    let worst = 0;
    for (let y = 0; y < others; y++) if (y !== x) worst = Math.max(worst, pair(e, eps[y]));
    return worst;
  });
}

/**
 * The protection of one question: a node that is not an `attributes` node.
 *
 * @param {object} node A sampler node of the spec (its JSON form).
 * @returns {{kind: string, answers: number[]|null, levels: number[]|null, byLevel: number[][]|null,
 *   levelReport: string|null, levelEpsilon: number|null, epsilon?: number, maxBytes?: number}}
 *   `answers[x]` is eps(x) (Infinity: not protected; a memo node's: eps_inf(x), all the reports of
 *   x together); for a leveled node `answers` is null and `byLevel[t][x]` is eps(x) at level t; for
 *   a heavy node (free text) `answers` is null, `epsilon` protects every pair of answers and
 *   `maxBytes` is the number of an answer's bytes used.
 */
export function questionProtection(node) {
  const base = { kind: node.kind, levels: null, byLevel: null, levelReport: null, levelEpsilon: null };
  if (node.kind === "heavy") {
    // free text: one budget for every pair of answers, those typed and any other
    return { ...base, answers: null, epsilon: budget(node.epsilon), maxBytes: node.max_bytes };
  }
  if (node.kind === "leveled") {
    const byLevel = node.items.map((item) => nodeProtection(item, node.d, node.d));
    return {
      kind: "leveled",
      answers: null,
      levels: node.levels.map(budget),
      byLevel,
      levelReport: node.level_report,
      levelEpsilon: node.level_report === "clear" ? null : budget(node.level_epsilon),
    };
  }
  if (node.kind === "padding") return { ...base, answers: nodeProtection(node.inner, node.d, node.inner.d) };
  if (node.kind === "memo") return { ...base, answers: nodeProtection(node.permanent, node.d, node.d) }; // eps_inf
  return { ...base, answers: nodeProtection(node, node.d, node.d) };
}

/**
 * The protection of every question of a loaded spec: one entry per attribute (MPLDP), else one.
 *
 * `labels` reads every listed form of the spec's labels (client-labels.mjs: `length`, `at(i)`,
 * `indexOf`, `filter`); a free-text spec lists none (null).
 *
 * @param {object} spec A spec returned by loadSpec.
 * @returns {Array<{question: string, labels: string[] | AnswerRange | null} & ReturnType<typeof questionProtection>>}
 */
export function protection(spec) {
  const root = spec.sampler.root;
  if (root.kind === "attributes") {
    return root.parts.map((part, i) => ({ question: spec.question[i], labels: answerLabels(spec.labels[i]), ...questionProtection(part) }));
  }
  const labels = root.kind === "heavy" ? null : answerLabels(spec.labels);
  return [{ question: spec.question, labels, ...questionProtection(root) }];
}

// ------------------------------------------------------------------ words

/** "a", "a and b", "a, b and c" (at most `max` names, then "and N more"). */
export function listWords(names, max = 6) {
  const shown = names.length > max ? [...names.slice(0, max - 1), `${names.length - max + 1} more`] : names;
  if (shown.length <= 1) return shown.join("");
  return `${shown.slice(0, -1).join(", ")} and ${shown[shown.length - 1]}`;
}

const quoted = (labels) => labels.map((l) => `“${l}”`);

/** e^eps for people: "1.65" (three significant digits). */
export const expWords = (eps) => formatEps(Math.exp(eps));

/** The name of a question's measure: "ε∞" for a memo node (all the reports of an answer), else "ε". */
export const symbolOf = (q) => (q.kind === "memo" ? "ε∞" : "ε");

/**
 * The note beside one answer: null where every answer of the question is alike (the summary
 * says it), else "protected at ε = 0.5" (a memo node's: "ε∞ = 0.5") or "not protected: your
 * report may reveal this answer".
 *
 * @param {number[]} answers eps(x) per answer.
 * @param {string} [symbol] "ε", or "ε∞" for a memo node (symbolOf).
 * @returns {Array<string|null>}
 */
export function answerNotes(answers, symbol = "ε") {
  if (answers.every((e) => e === answers[0])) return answers.map(() => null);
  return answers.map((e) => (e === Infinity ? "not protected: your report may reveal this answer" : `protected at ${symbol} = ${formatEps(e)}`));
}

/**
 * What the respondent is told about one question, in sentences.
 *
 * @param {ReturnType<typeof protection>[number]} q
 * @param {boolean} several Whether the survey has several questions (MPLDP).
 * @returns {string[]}
 */
export function questionSentences(q, several) {
  const about = several ? ` to “${q.question}”` : "";
  if (q.kind === "heavy") return freeTextSentences(q, true);
  if (q.kind === "leveled") {
    const out = [];
    const exposed = q.labels.filter((_, x) => q.byLevel.some((level) => level[x] === Infinity));
    const alike = q.byLevel.every((level, t) => level.every((e) => e !== Infinity && e <= q.levels[t]));
    out.push(
      alike
        ? `Your answer${about} is protected at the ε of the privacy level you choose for it.`
        : `Your answer${about} is protected at the ε of the privacy level you choose, except ${listWords(quoted(exposed))}: your report may reveal ${exposed.length > 1 ? "those answers" : "that answer"}.`,
    );
    if (q.levelReport === "clear") {
      out.push("The level you choose is sent as it is, with your report.");
    } else if (q.levelEpsilon === Infinity) {
      out.push("The level you choose is not sent as such, but your report may reveal it.");
    } else {
      out.push(`The level you choose is not sent as such; your report hides it only partly (it is protected at ε = ${formatEps(q.levelEpsilon)}).`);
    }
    return out;
  }
  const protectedAt = q.answers.filter((e) => e !== Infinity);
  const open = q.labels.filter((_, x) => q.answers[x] === Infinity);
  const out = [];
  if (q.kind === "memo" && open.length === 0 && protectedAt.every((e) => e === protectedAt[0])) {
    return out; // every answer alike: roundsSentences says at what, and over how many rounds
  }
  const sym = symbolOf(q);
  const memo = q.kind === "memo" ? " each time it is new" : "";
  if (open.length === 0 && protectedAt.every((e) => e === protectedAt[0])) {
    out.push(`Every answer${about} is protected at ε = ${formatEps(protectedAt[0])}.`);
  } else if (open.length === q.labels.length) {
    out.push(`No answer${about} is protected: your report may reveal it.`);
  } else {
    const safe = q.labels.filter((_, x) => q.answers[x] !== Infinity);
    const eps = [...new Set(protectedAt)];
    out.push(
      eps.length === 1
        ? `${safe.length > 1 ? "Answers" : "The answer"} ${listWords(quoted(safe))}${about} ${safe.length > 1 ? "are" : "is"} protected at ${sym} = ${formatEps(eps[0])}${memo}.`
        : `${safe.length > 1 ? "Answers" : "The answer"} ${listWords(quoted(safe))}${about} ${safe.length > 1 ? "are" : "is"} protected, each at the ${sym} shown beside it${memo}.`,
    );
    if (open.length) {
      out.push(
        `${listWords(quoted(open))} ${open.length > 1 ? "are" : "is"} not protected: if you answer ${listWords(quoted(open)).replace(/ and /, " or ")}, your report may reveal it.`,
      );
    }
  }
  if (q.kind === "padding") {
    out.push("You may tick several answers: your report is made from one of them (or from a filler), picked at random on this device.");
  }
  return out;
}

/**
 * What a free-text question's reports protect, in sentences: any two answers alike at the node's
 * verified ε (no answer is listed, so none is named), and the bytes of an answer that are used.
 *
 * @param {ReturnType<typeof protection>[number]} q A heavy node's entry (`epsilon`, `maxBytes`).
 * @param {boolean} [respondent] The survey page's words ("you"), else the dashboard's.
 * @returns {string[]}
 */
export function freeTextSentences(q, respondent = true) {
  const eps = formatEps(q.epsilon);
  const bytes = plural(q.maxBytes, "byte");
  return respondent
    ? [
        "Any two answers you could type are protected alike: whatever you type, your report protects it " +
          `at ε = ${eps} against any other answer.`,
        `Only the first ${bytes} (UTF-8) of your answer are used: a longer answer is cut there.`,
      ]
    : [
        `Any two answers a respondent could type are protected alike, at ε = ${eps}: no answer is listed, so ` +
          "one budget covers every pair of answers.",
        `Only the first ${bytes} (UTF-8) of an answer are used: answers that begin alike are counted as one.`,
      ];
}

/** "6.16" (exact) or "6.16 at most" (a proven bound) of a whole-history loss ({epsilon, exact}). */
function lossWords(h) {
  return `${formatEps(budget(h.epsilon))}${h.exact ? "" : " at most"}`;
}

/**
 * What a memoized campaign's reports protect over a device's rounds, in sentences: the answer at
 * eps_inf each time it is new, and whether and when it changes at the whole-history ε the collector
 * computed (GET /v1/campaigns/{id}/round, `protection`: pldp.deploy.history), over the campaign's
 * rounds cap, or without one over the rounds so far, with how it weakens at the next.
 *
 * @param {object} p The round's `protection` (RoundsProtection; epsilons may be "inf").
 * @param {object} q The question's entry of protection(spec) (a memo node's).
 * @param {{rounds: string, round: number}} info The round (GET .../round): `rounds` "once" for a
 *   campaign of one round.
 * @param {boolean} [respondent] The survey page's words ("your answer"), else the dashboard's.
 * @returns {string[]}
 */
export function roundsSentences(p, q, info, respondent = true) {
  const eps = q.answers;
  const alike = eps.every((e) => e === eps[0]);
  const answer = respondent ? "your answer" : "the respondent's answer";
  const its = respondent ? "your answer" : "the answer";
  const atNew = alike ? `at ε∞ = ${formatEps(eps[0])}` : `at the ε∞ ${respondent ? "shown beside it" : "listed for it"}`;
  const h = p.history;
  const cap = p.rounds_cap;
  const over =
    cap !== null
      ? `over this campaign's ${plural(cap, "round")}`
      : info.rounds === "once"
        ? "over its one round"
        : `over the ${plural(h.rounds, "round")} so far`;
  const changes =
    budget(h.epsilon) === Infinity
      ? `whether and when ${its} changes, not at all, since some answers are not protected`
      : `whether and when ${its} changes, at ε = ${lossWords(h)} ${over}`;
  const head = respondent ? "Your reports to this survey protect two things" : "Over a device's rounds, its reports protect two things";
  const out = [`${head}: ${answer}, ${atNew} each time it is new; ${changes}.`];
  if (!respondent) {
    const fresh = budget(h.fresh_epsilon);
    out[0] = out[0].replace(/\.$/, ` (${plural(h.rounds, "report")} drawn afresh would be at ε = ${formatEps(fresh)}).`);
  }
  if (cap !== null) {
    out.push(
      respondent
        ? `This browser keeps one randomized form of each answer and sends a fresh randomization of it each round: all the reports of one answer together reveal no more about it than that form does, but each round tells a little more about when your answer changed. It sends at most ${plural(cap, "report")} to this survey.`
        : `A device sends at most ${plural(cap, "report")} on this campaign (its definition's rounds cap; the device's privacy ledger refuses more).`,
    );
  } else if (info.rounds !== "once" && p.next) {
    const next = budget(p.next.epsilon) === Infinity ? "" : `: ε = ${lossWords(p.next)} after the next`;
    out.push(
      respondent
        ? `This survey sets no limit on its rounds, so that second protection weakens with each round you answer${next}.`
        : `The campaign sets no limit on its rounds (its definition has no rounds cap), so that protection weakens with each round${next}.`,
    );
  }
  return out;
}

/** The smallest finite ε a respondent of the spec may be protected at (for the example), or null. */
export function smallestEpsilon(questions) {
  const shownEps = (q) => (q.kind === "leveled" ? q.levels : q.kind === "heavy" ? [q.epsilon] : q.answers);
  const all = questions.flatMap(shownEps).filter((e) => Number.isFinite(e));
  return all.length ? smallest(all) : null;
}

/**
 * What "protected at ε" promises, with the spec's own smallest ε as the example: the pieces of a
 * paragraph (strings and a `<sup>` element).
 *
 * @param {number|null} eps
 * @returns {Array<string|Node>}
 */
export function epsilonMeaning(eps) {
  const e = formatEps(eps ?? 1);
  return [
    "ε (epsilon) measures how much your report can give away: the smaller ε, the more private. ",
    `“Protected at ε = ${e}” means: any report you might send is at most e`,
    el("sup", {}, e),
    ` ≈ ${expWords(eps ?? 1)} times as likely to come from someone with your answer as from someone with any other ` +
      "answer. Whoever sees the report can raise the odds they give your answer by at most that factor: the report " +
      "alone never makes them sure of it.",
  ];
}

// ------------------------------------------------------------------ the rows of verify(spec)

const PART = /^(?:root|attribute (\d+))(: sampled item)?(?: level (\d+) \(eps=[^)]*\))?( level report| the level itself)?$/;
const OUTPUT = /^output (\d+)(?: \(\+\d+\))?$/;
const PAIR = /^item (\d+)(?: \(\+\d+\))? vs item (\d+)(?: \(\+\d+\))?$/;

/** A heavy node's claims (verify(spec): "root.<part>" per part, "root" the whole report): where, what. */
const HEAVY_WORDS = {
  "root.prefix": ["the report of a prefix", "any two answers' prefixes"],
  "root.word": ["the report of the whole answer", "any two answers"],
  "root.fragment": ["the report of a fragment", "any two answers' fragments"],
  root: ["every report", "any two answers"],
};

/** The items of a node grouped as verify(spec) groups them (equal parameters): item -> its group. */
function groupOf(node, item) {
  const key =
    node.kind === "direct"
      ? (y) => `${node.weights[y]}|${node.epsilons[y]}`
      : (y) => `${node.a[y]}|${node.b[y]}|${node.epsilons[y]}`;
  const k = key(item);
  return [...Array(node.d).keys()].filter((y) => key(y) === k);
}

/**
 * A row of verify(spec) in words: where the claim sits (the question, the level) and what it
 * protects, with the spec's answer labels instead of item indices ("output 0" is the report of the
 * first answer). A row this function cannot read keeps its own words.
 *
 * @param {object} spec A loaded spec.
 * @param {{part: string, subject: string}} row
 * @returns {{where: string, what: string}}
 */
export function claimWords(spec, row) {
  if (spec.sampler.root.kind === "heavy") {
    // free text: no answer is listed; each part and the whole report protect every pair alike
    const words = Object.hasOwn(HEAVY_WORDS, row.part) ? HEAVY_WORDS[row.part] : [row.part, row.subject];
    return { where: words[0], what: words[1] };
  }
  const m = PART.exec(row.part);
  if (!m) return { where: row.part, what: row.subject };
  const [, attr, sampled, level, tail] = m;
  const root = spec.sampler.root;
  let node = attr === undefined ? root : root.parts[Number(attr)];
  const labels = answerLabels(attr === undefined ? spec.labels : spec.labels[Number(attr)]);
  const question = attr === undefined ? spec.question : spec.question[Number(attr)];
  const where = [];
  if (attr !== undefined) where.push(`“${question}”`);
  const levelName = (t) => `level ${t + 1} (ε = ${formatEps(budget(node.levels[t]))})`;
  if (tail === " the level itself") return { where: [...where, "the level"].join(", "), what: "which level was chosen, whatever the answer" };
  if (tail === " level report") {
    const out = OUTPUT.exec(row.subject);
    const what = out ? `a report of ${levelName(Number(out[1]))}` : row.subject;
    return { where: [...where, "the reported level"].join(", "), what };
  }
  let d = node.d;
  if (sampled) {
    where.push("one ticked answer");
    node = node.inner;
  }
  if (level !== undefined) {
    where.push(levelName(Number(level)));
    node = node.items[Number(level)];
  }
  // a hashed form's answers are its buckets: named by number, not as a quoted answer (pldp.deploy.claimwords)
  const answer = (y) => (labels instanceof HashedAnswers ? `bucket ${labels.at(y)}` : `“${labels.at(y)}”`);
  const name = (y) => (y < d ? answer(y) : sampled ? `filler ${y - d + 1}` : `extra item ${y - d + 1}`);
  const names = (y) => listWords(groupOf(node, y).map(name), 4);
  const out = OUTPUT.exec(row.subject);
  if (out) {
    const all = groupOf(node, Number(out[1])).length === node.d;
    return { where: where.join(", ") || "every report", what: all ? "a report of any answer" : `a report of ${names(Number(out[1]))}` };
  }
  const pair = PAIR.exec(row.subject);
  if (pair) {
    const [i, j] = [Number(pair[1]), Number(pair[2])];
    const gi = groupOf(node, i);
    const what =
      gi.includes(j) && gi.length === node.d
        ? "any two answers"
        : gi.includes(j)
          ? `any two of ${names(i)}`
          : `${names(i)} against ${names(j)}`;
    return { where: where.join(", ") || "every report", what };
  }
  if (row.subject === EVERY_PAIR) return { where: where.join(", ") || "every report", what: "any two answers" };
  return { where: where.join(", ") || row.part, what: row.subject };
}
