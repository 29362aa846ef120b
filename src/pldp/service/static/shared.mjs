// "What you have shared from this browser": the survey page's plain-words view of the device's
// privacy ledger (pldp-ledger.mjs), and the reports it keeps per (campaign, round) so that a reload
// sends the same report again instead of drawing a new one.

import { largest } from "/static/client-checks.mjs";
import { el, formatEps, plural } from "/static/common.mjs";
import { sha256Hex } from "/static/client-wire.mjs";
import { symbolOf } from "/static/protection.mjs";

/** "1", "1 and 2", "1, 2 and 3". */
function listed(items) {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

/** The name of a campaign for people: its question, or the start of its id. */
const surveyName = (c) => (c.question ? `“${c.question}”` : `the survey ${c.spec.slice(0, 8)}…`);

/**
 * Why the ledger counts a survey's least protected answer, for a survey of one question whose
 * answers are not all protected alike (IPRR, L-IPRR, URR, IDUE): the respondent's own answer's
 * protection (when the page knows it), and the reason the count is not hers (whether a cap refuses
 * a report must not depend on the answer, or the refusal tells it). Null for any other survey.
 *
 * @param {object} q The question's entry of protection(spec) (protection.mjs).
 * @param {number|null} chosen The answer given on this page (its index), or null if not known.
 * @returns {string|null}
 */
export function countedNote(q, chosen) {
  if (!q.answers || q.kind === "padding" || q.answers.every((e) => e === q.answers[0])) return null;
  const sym = symbolOf(q);
  const memo = q.kind === "memo" ? " each time it is new" : "";
  let own = `Your answer's own protection is the ${sym} shown beside it on the survey.`;
  if (chosen !== null && chosen !== undefined) {
    const label = `“${q.labels.at(chosen)}”`;
    own =
      q.answers[chosen] === Infinity
        ? `Your answer, ${label}, is not protected: your report may reveal it.`
        : `Your answer, ${label}, is protected at ${sym} = ${formatEps(q.answers[chosen])}${memo}.`;
  }
  return (
    `${own} The count is that of this survey's least protected answer (${sym} = ${formatEps(largest(q.answers))}), ` +
    "whatever you answered: were it counted by your answer, whether this browser still sends a report once a cap " +
    "is reached would tell the collector your answer."
  );
}

/**
 * The paragraphs of the ledger's view (Ledger.view()): one per family of campaigns, and the total.
 *
 * @param {object} view
 * @param {Object<string, string>} [notes] A sentence to add to a family's line, by family (countedNote).
 * @returns {HTMLElement[]} Nothing when the browser has sent no report.
 */
export function sharedParagraphs(view, notes = {}) {
  if (!view.families.length) return [];
  const out = [
    el(
      "p",
      { class: "hint" },
      "This browser keeps a record of the randomized reports it made for the surveys of this collector (never " +
        "your answers), and of how much of your privacy each used up, measured by ε.",
    ),
  ];
  const items = view.families.map((f) => {
    const names = listed(f.campaigns.map(surveyName));
    const rounds = f.campaigns.flatMap((c) => c.rounds);
    const when = rounds.length ? ` (${rounds.length === 1 ? "round" : "rounds"} ${listed([...new Set(rounds)].sort((a, b) => a - b))})` : "";
    // epsilon: the charged spend (the ledger's caps), the same whatever the answers; valuesEpsilon,
    // which depends on them, is not shown as a spend
    const today = f.today.epsilon > 0 ? `, ε = ${formatEps(f.today.epsilon)} of it today` : "";
    const memo = f.total.values > 0 ? " Each report is counted as if its answer were new (until there are as many reports as possible answers), whether or not you gave it here before." : "";
    const note = Object.hasOwn(notes, f.family) ? ` ${notes[f.family]}` : "";
    return el(
      "li",
      { "data-family": f.family, "data-epsilon": f.total.epsilon === Infinity ? "inf" : String(f.total.epsilon) },
      `${names}: ${plural(f.total.reports, "report")}${when}; privacy counted against the caps: ε = ${formatEps(f.total.epsilon)}${today}.${memo}${note}`,
    );
  });
  out.push(el("ul", { class: "shared-list" }, ...items));
  const total = view.total;
  // a family with values drew permanent responses: memoized, whose count covers the answers only
  const rounds = view.families.filter((f) => f.total.values > 0).flatMap((f) => f.campaigns.map(surveyName));
  const after = rounds.length
    ? ` For ${listed(rounds)}, asked in rounds, it counts what the reports reveal about your answers; whether and ` +
      "when your answer changed is protected apart, less with each round (the survey's page says how much)."
    : " Each report was drawn afresh, so their ε add up: the total bounds what they tell the collector together.";
  out.push(
    el(
      "p",
      { id: "shared-total", "data-epsilon": total.epsilon === Infinity ? "inf" : String(total.epsilon) },
      total.epsilon === Infinity
        ? `In all: ${plural(total.reports, "report")}, ε = ∞ counted against the caps: a survey answered here has an ` +
            "answer that is not protected, and each report is counted at its survey's least protected answer, whatever " +
            "the answer was."
        : `In all: ${plural(total.reports, "report")}, ε = ${formatEps(total.epsilon)} counted against the caps.${after}`,
    ),
  );
  return out;
}

// ------------------------------------------------------------------ the reports kept per round

/** The storage key of the report made for (campaign, round), and for an invited link its code. */
export async function keptKey(campaignId, round, code) {
  const tag = code ? `:${(await sha256Hex(`pldp-code:${code}`)).slice(0, 16)}` : "";
  return `pldp-report:${campaignId}:${round}${tag}`;
}

/** The report kept under `key` ({batch, round, sent}), or null (none, or storage refused). */
export function keptReport(key) {
  try {
    const kept = JSON.parse(localStorage.getItem(key) ?? "null");
    return kept && kept.batch && Array.isArray(kept.batch.reports) ? kept : null;
  } catch {
    return null; // storage refused (a private window), or not ours: as if none was kept
  }
}

/**
 * The reports kept for (campaign, round) that personal links (respondent codes) sent: a reload of
 * an invited survey's page, whose code is forgotten once its report was taken, finds them here.
 */
export function sentWithLinks(campaignId, round) {
  const prefix = `pldp-report:${campaignId}:${round}:`;
  const out = [];
  try {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      const kept = key && key.startsWith(prefix) ? keptReport(key) : null;
      if (kept && kept.sent) out.push(kept);
    }
  } catch {
    // storage refused (a private window): nothing kept
  }
  return out;
}

/** Keep a report (before it is sent, so that a reload sends it again); false if storage refused. */
export function keepReport(key, kept) {
  try {
    localStorage.setItem(key, JSON.stringify(kept));
    return true;
  } catch {
    return false;
  }
}
