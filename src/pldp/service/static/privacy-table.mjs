// The dashboard's privacy table (dashboard.mjs): every claim of the spec as the JS client verified it
// (claimed and realised ε, holds or fails), and each answer's protection in plain words.

import { el, formatEps } from "/static/common.mjs";
import { claimWords, freeTextSentences, listWords, protection } from "/static/protection.mjs";

export function privacyRows(spec, result) {
  const table = document.getElementById("privacy-table");
  const described = result.rows.map((row) => [row, spec ? claimWords(spec, row) : { where: row.part, what: row.subject }]);
  table.classList.toggle("one-place", new Set(described.map(([, words]) => words.where)).size === 1);
  table.querySelector("tbody").replaceChildren(
    ...described.map(([row, words]) => {
      return el(
        "tr",
        { class: row.holds ? "holds" : "fails", "data-part": row.part, "data-subject": row.subject },
        el("td", {}, words.where),
        el("td", {}, words.what),
        el("td", { class: "num", "data-epsilon": row.claimed }, formatEpsShort(row.claimed)),
        el("td", { class: "num", "data-epsilon": row.realised, title: formatEpsExact(row.realised) }, formatEpsShort(row.realised)),
        el("td", { class: "verdict" }, row.holds ? "✓ holds" : "✗ fails"),
      );
    }),
  );
  table.hidden = false;
}

/** Four significant digits (the exact value is the cell's title). */
const formatEpsShort = (e) => (e === Infinity ? "∞" : Number.isFinite(e) ? String(Number(e.toPrecision(4))) : String(e));
/** Ten significant digits: enough to see a realised ε just below its claim. */
const formatEpsExact = (e) => (e === Infinity ? "∞" : Number.isFinite(e) ? String(Number(e.toPrecision(10))) : String(e));

/**
 * Per question, each answer's protection: "“a”: ε = 0.1", "“d”, “e”: not protected"; a memoized
 * campaign's: ε∞, all the reports of an answer together, each time it is new; a free-text
 * campaign's: one budget for any two answers, and the bytes of an answer used.
 */
export function protectionList(spec) {
  const all = protection(spec);
  const list = document.getElementById("privacy-answers");
  if (all[0].kind === "heavy") {
    const [alike, bytes] = freeTextSentences(all[0], false);
    list.replaceChildren(el("li", { class: "head", "data-epsilon": String(all[0].epsilon) }, alike), el("li", { class: "head" }, bytes));
    list.hidden = false;
    return;
  }
  const sym = all[0].kind === "memo" ? "ε∞" : "ε";
  const items = all.map((q) => {
    const head = all.length > 1 ? `“${q.question}”: ` : "";
    if (q.kind === "leveled") {
      const levels = q.levels.map((e) => formatEps(e)).join(", ");
      const level =
        q.levelReport === "clear" ? "the level is sent with the report" : `the level is protected at ε = ${formatEps(q.levelEpsilon)}`;
      const open = q.labels.filter((_, x) => q.byLevel.some((at) => at[x] === Infinity)).map((l) => `“${l}”`);
      const except = open.length ? ` (${listWords(open)} not protected at some level)` : "";
      return [el("li", {}, `${head}every answer${except} at the ε of the respondent's level (${levels}); ${level}.`)];
    }
    if (q.answers.every((e) => e === q.answers[0]) && q.answers[0] !== Infinity) {
      return [el("li", {}, `${head}every answer at ${sym} = ${formatEps(q.answers[0])}`)];
    }
    const groups = new Map();
    q.answers.forEach((e, x) => {
      if (!groups.has(e)) groups.set(e, []);
      groups.get(e).push(`“${q.labels.at(x)}”`);
    });
    return [...groups].map(([e, names]) =>
      el(
        "li",
        {},
        head +
          (e === Infinity
            ? `${listWords(names)}: not protected (a report may reveal ${names.length > 1 ? "them" : "it"})`
            : `${listWords(names)}: ${sym} = ${formatEps(e)}`),
      ),
    );
  });
  const head = sym === "ε∞" ? "Each answer is protected, each time it is new (all its reports together), at:" : "Each answer is protected at:";
  list.replaceChildren(el("li", { class: "head" }, head), ...items.flat());
  list.hidden = false;
}
