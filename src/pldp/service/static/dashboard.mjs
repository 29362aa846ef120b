// The analyst's dashboard (/dashboard/{id}): the campaign's estimate as SVG bar charts with
// confidence-interval whiskers, refreshed every 2 s, beside the exact privacy table of its spec.

import { loadSpec, verify } from "/static/client-spec.mjs";
import { apiError, canVerify, el, fetchSpecText, fetchWithin, formatEps, plural } from "/static/common.mjs";
import { METHOD_LABELS, METHOD_SHORT, METHOD_WORDS, discoveryWords, fallbackWords, screeningWords } from "/static/methods.mjs";
import { expWords, protection, roundsSentences } from "/static/protection.mjs";
import { privacyRows, protectionList } from "/static/privacy-table.mjs";
import { drawSeries } from "/static/series.mjs";
import { finite, percent } from "/static/axes.mjs";
import { chart, estimateTable, shownAnswers } from "/static/estimate-chart.mjs";

const main = document.getElementById("dashboard");
const campaignId = main.dataset.campaign;
const TOKEN_KEY = `pldp.token.${campaignId}`;
const POLL_MS = 2000;

const tokenForm = document.getElementById("token-form");
const tokenInput = document.getElementById("token");
const methodSelect = document.getElementById("method");
const levelSelect = document.getElementById("level");
const message = document.getElementById("message");
const summary = document.getElementById("summary");
const charts = document.getElementById("charts");

let questions = null; // the spec's question(s), once loaded
let timer = null;
let generation = 0; // a newer refresh makes the answers of older ones stale
// whether the method menu holds the campaign's methods (an estimate said them) or the analyst's
// choice: until then the estimate is asked with no method, the collector's default for the campaign
// (discover for a free-text campaign, which offers no other)
let methodsKnown = false;

// ------------------------------------------------------------------ messages and the token

function showMessage(text, kind = "notice", state = "") {
  message.replaceChildren(...(text ? [el("p", {}, text)] : []));
  message.className = `message ${text ? kind : ""}`.trim();
  message.hidden = !text;
  main.dataset.state = state;
  main.dataset.seq = String(Number(main.dataset.seq || 0) + 1); // tests wait for a message newer than one seen
}

const storedToken = () => sessionStorage.getItem(TOKEN_KEY);

let changing = false; // the analyst asked to change a token that works: keep the field open

/**
 * The token form asks for a token (a field, "Use token" and the help), or, once the collector has
 * taken the token, one line ("Token in use", "Change", "Forget"; "token" after each on wider
 * screens), so that on a phone the estimates start on the first screen.
 */
function askToken(asking) {
  for (const node of tokenForm.parentElement.querySelectorAll("[data-when]")) {
    node.hidden = (node.dataset.when === "asking") !== asking;
  }
  tokenForm.dataset.asking = String(asking);
}

tokenForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const token = tokenInput.value.trim();
  tokenInput.value = "";
  if (!token) {
    showMessage("Paste an analyst token into the field first.", "error", "no_token");
    tokenInput.focus();
    return;
  }
  changing = false;
  sessionStorage.setItem(TOKEN_KEY, token);
  refresh();
});

document.getElementById("change-token").addEventListener("click", () => {
  changing = true;
  askToken(true);
  tokenInput.focus();
});

document.getElementById("forget-token").addEventListener("click", () => {
  changing = false;
  sessionStorage.removeItem(TOKEN_KEY);
  refresh();
});

methodSelect.addEventListener("change", () => {
  methodsKnown = true;
  refresh();
});
levelSelect.addEventListener("change", () => refresh());
// a hidden tab does not poll; it catches up when shown again
document.addEventListener("visibilitychange", () => {
  if (!document.hidden && main.dataset.state !== "unauthorized" && main.dataset.state !== "forbidden") refresh();
});

// ------------------------------------------------------------------ polling

function clearCharts() {
  charts.replaceChildren();
  summary.hidden = true;
  document.getElementById("screening").hidden = true;
}

/** Fetch the estimate now (cancelling a pending poll); poll again in 2 s unless stuck on an error. */
async function refresh() {
  clearTimeout(timer);
  const mine = ++generation;
  const token = storedToken();
  if (!token) {
    clearCharts();
    askToken(true);
    showMessage("Paste an analyst token above to see the estimates.", "notice", "no_token");
    return;
  }
  const level = levelSelect.value;
  const asked = methodsKnown ? `method=${encodeURIComponent(methodSelect.value)}&` : "";
  const url = `/v1/campaigns/${campaignId}/estimate?${asked}level=${encodeURIComponent(level)}`;
  let again = true;
  try {
    const response = await fetchWithin(url, { headers: { authorization: `Bearer ${token}` } });
    if (mine !== generation) return;
    if (response.ok) {
      const data = await response.json();
      await knowRounds();
      if (mine !== generation) return;
      if (!changing) askToken(false);
      render(data);
      showMessage("", "notice", "ok");
      await refreshSeries(token, data.method, level, data.n, mine);
      await refreshPerAddress(data.n);
    } else {
      const err = await apiError(response);
      if (mine !== generation) return;
      again = showFailure(err);
    }
  } catch (exc) {
    if (mine !== generation) return;
    showMessage(`The collector cannot be reached (${exc.message || exc}); trying again…`, "error", "offline");
  }
  if (again) timer = setTimeout(poll, POLL_MS);
}

// ------------------------------------------------------------------ rounds (a recurring campaign)

let recurs = null; // whether the campaign recurs (GET .../round), once known
let seriesKey = ""; // what the series drawn last was fetched for

/** Learn whether the campaign recurs (once): its estimate then pools all rounds, and says so. */
async function knowRounds() {
  if (recurs !== null) return;
  try {
    const info = await fetchWithin(`/v1/campaigns/${campaignId}/round`).then((r) => (r.ok ? r.json() : null));
    recurs = info ? info.rounds !== "once" : null;
  } catch {
    // not known yet: asked again at the next poll
  }
}

let perAddressN = -1; // the campaign's n when the per-address limit was shown last

/** What one client address may hold of this campaign (GET .../round's per_address), shown again when n changed. */
async function refreshPerAddress(n) {
  if (n === perAddressN) return;
  try {
    const info = await fetchWithin(`/v1/campaigns/${campaignId}/round`).then((r) => (r.ok ? r.json() : null));
    const box = document.getElementById("per-address");
    const limit = info ? info.per_address : null;
    box.hidden = !limit;
    if (limit) {
      box.textContent =
        `One address may hold at most ${limit.allowed.toLocaleString("en")} of this campaign's ` +
        `${limit.n.toLocaleString("en")} reports now (${limit.burst.toLocaleString("en")} plus ` +
        `${(100 * limit.share).toLocaleString("en")}% of them); beyond, its reports are refused.`;
    }
    perAddressN = n;
  } catch {
    // shown at the next poll
  }
}

/**
 * A recurring campaign's estimate round by round, below the current one: fetched again when the
 * method, the level or the number of reports changed, and at least every 30 s (a new round).
 */
async function refreshSeries(token, method, level, n, mine) {
  const box = document.getElementById("series");
  if (method === "discover") {
    box.hidden = true; // a free-text campaign: each estimate is a discovery of every report, no series
    return;
  }
  box.hidden = !recurs;
  box.dataset.recurs = String(recurs);
  const key = `${method}|${level}|${n}|${Math.floor(Date.now() / 30000)}`;
  if (!recurs || key === seriesKey || mine !== generation) return;
  const url = `/v1/campaigns/${campaignId}/series?method=${encodeURIComponent(method)}&level=${encodeURIComponent(level)}`;
  const response = await fetchWithin(url, { headers: { authorization: `Bearer ${token}` } });
  if (mine !== generation || !response.ok) return;
  const data = await response.json();
  if (mine !== generation) return;
  const charts = document.getElementById("series-charts");
  drawSeries(charts, data, attributeTitle);
  charts.dataset.key = key;
  seriesKey = key;
}

function poll() {
  if (!document.hidden) refresh();
}

/** Show a refused estimate readably; whether polling should go on. */
function showFailure(err) {
  switch (err.status) {
    case 401:
      sessionStorage.removeItem(TOKEN_KEY);
      clearCharts();
      askToken(true);
      showMessage(`This token is not valid: ${err.reason}. Paste an analyst token.`, "error", "unauthorized");
      return false;
    case 403:
      clearCharts();
      askToken(true);
      showMessage(`This token may not read this campaign: ${err.reason}. Use a token granted this campaign.`, "error", "forbidden");
      return false;
    case 409:
      if (err.code === "no_reports" || err.code === "too_few_reports") {
        clearCharts();
        if (!changing) askToken(false); // the token was taken
        const said = err.code === "no_reports" ? "No reports yet: the charts appear when the first report arrives."
          : `Too few reports yet to discover answers from: ${err.reason}. Trying again as reports arrive…`;
        showMessage(said, "notice", err.code);
        return true;
      }
      break;
    case 400:
      showMessage(`The collector refused the request: ${err.reason}.`, "error", "bad_request");
      return false;
    default:
      break;
  }
  showMessage(`The estimate failed (${err.status}): ${err.reason}. Trying again…`, "error", "failed");
  return true;
}

// ------------------------------------------------------------------ the charts

/** The method menu offers the campaign's methods (the estimate's `methods`), the choice kept. */
function offerMethods(methods) {
  if (!Array.isArray(methods) || !methods.length) return;
  methodsKnown = true;
  const shown = [...methodSelect.options].map((o) => o.value);
  if (shown.length === methods.length && shown.every((m, i) => m === methods[i])) return;
  const chosen = methods.includes(methodSelect.value) ? methodSelect.value : methods[0];
  methodSelect.replaceChildren(
    ...methods.map((m) => el("option", { value: m, selected: m === chosen }, METHOD_LABELS[m] ?? m)),
  );
  methodSelect.value = chosen;
}

/**
 * The detection screen of the reports, in plain words, below the summary: where it ran, or where
 * the method shown ("Drop unlikely reports") asked for it; otherwise nothing is said.
 */
function showScreening(detection) {
  const box = document.getElementById("screening");
  if (!detection?.available && lastData?.method !== "detect") {
    box.hidden = true;
    return;
  }
  const said = screeningWords(detection);
  document.getElementById("flagged").textContent = said.flagged;
  const excess = document.getElementById("excess");
  excess.textContent = said.excess ?? "";
  excess.hidden = !said.excess;
  for (const id of ["joint", "power"]) {
    const el = document.getElementById(id);
    el.textContent = said[id] ?? "";
    el.hidden = !said[id];
  }
  box.className = said.suspicious ? "screening message notice" : "screening hint";
  box.dataset.available = String(Boolean(detection?.available));
  box.dataset.flaggedShare = String(detection?.flagged_share ?? "");
  box.hidden = false;
}

/** The estimator's diagnostics in plain words. */
function diagnosticWords(attr) {
  const f = attr.frequencies;
  const outside = f.some((x) => x < 0 || x > 1);
  const total = f.reduce((a, b) => a + b, 0);
  const words = [];
  if (attr.on_simplex) {
    words.push("All shares lie between 0\u00a0% and 100\u00a0% and add up to 100\u00a0%.");
  } else if (outside) {
    words.push(
      "Some shares fall below 0\u00a0% or above 100\u00a0%: that is the respondents' protective noise showing. " +
        "The clipped and most likely methods keep every share between 0\u00a0% and 100\u00a0%, adding up to 100\u00a0%.",
    );
  } else if (Math.abs(total - 1) > 5e-4) {
    words.push(
      `The shares add up to ${percent(total, 1)}, not 100\u00a0%: that is the respondents' protective noise ` +
        "showing. The clipped and most likely methods make them add up to 100\u00a0%.",
    );
  } else {
    words.push(
      "All shares happen to lie between 0\u00a0% and 100\u00a0%, but this method does not keep them there: the " +
        "respondents' protective noise can push one below 0\u00a0% (the clipped and most likely methods prevent it).",
    );
  }
  const steps = plural(attr.iterations, "step");
  if (attr.iterations > 0 && attr.converged) words.push(`The calculation settled after ${steps}.`);
  if (!attr.converged) words.push(`The calculation did not settle (${steps}): treat these shares with care.`);
  return words.join(" ");
}

/** What a chart of the top answers of a large domain shows, and what its numbers mean. */
function topWords(shown) {
  if (shown.shown === shown.of) return "";
  return (
    `The ${shown.shown} answers with the largest estimated shares, of ${shown.of.toLocaleString("en")}, largest first. ` +
    "Picked by their estimates, their shares lean high (the largest of many noisy numbers), and each interval " +
    "is its own answer's; the API's estimate holds every answer."
  );
}

function attributeTitle(attr, i, count) {
  if (count === 1) return Array.isArray(questions) ? questions[0] : (questions ?? "");
  const q = Array.isArray(questions) ? questions[i] : null;
  return q ?? attr.name ?? `Attribute ${i + 1}`;
}

let lastData = null; // the estimate drawn last: redrawn at a new width

/** A control character of a discovered answer, shown as its escape (the label's other bytes are escaped so already). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const escapeControl = (label) => label.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);

/**
 * A free-text campaign's attribute as drawn: its discovered answers' labels readable on one line,
 * those below the floor marked "(may be noise)" and drawn faint (`noise`).
 */
function discoveredAnswers(attr) {
  const { confident } = attr.discovery;
  const labels = attr.labels.map((l, k) => escapeControl(l) + (confident[k] ? "" : " (may be noise)"));
  return { ...attr, labels, noise: confident.map((c) => !c) };
}

function render(data) {
  lastData = data;
  const count = data.attributes.length;
  const pct = Math.round(data.level * 1000) / 10;
  const pooled = recurs === true; // a recurring campaign's estimate pools all its rounds
  summary.replaceChildren(
    el("strong", { id: "n", "data-n": data.n }, data.n.toLocaleString("en")),
    ` ${data.n === 1 ? "report" : "reports"}${pooled ? " in all rounds" : ""} · ${METHOD_SHORT[data.method] ?? data.method} estimate · ` +
      `${pct}\u00a0% confidence intervals · updated ${new Date().toLocaleTimeString("en-GB")}`,
  );
  summary.hidden = false;
  document.getElementById("estimates-title").textContent = pooled ? "Estimated shares, all rounds" : "Estimated shares";
  document.getElementById("pooled-help").hidden = !pooled;
  document.getElementById("interval-help").textContent =
    "Each bar is the estimated share of respondents who gave that answer; the black line through it is its " +
    `${pct}\u00a0% confidence interval (intervals made this way hold the true share in ${pct} of 100 surveys). ` +
    "The numbers refresh every 2 seconds.";
  document.getElementById("method-help").textContent = METHOD_WORDS[data.method] ?? `Method: ${data.method}.`;
  offerMethods(data.methods);
  showScreening(data.detection);
  if (charts.children.length !== count) {
    charts.replaceChildren(
      ...data.attributes.map((_, i) =>
        el(
          "figure",
          { class: "attribute", "data-attribute": i },
          el("figcaption", { id: `chart-title-${i}` }),
          el("p", { class: "fallback message notice", hidden: true }),
          el("div", { class: "chart-scroll" }),
          el("p", { class: "hint diagnostics" }),
          el("details", {}, el("summary", {}, "Numbers"), el("div", { class: "table-wrap" })),
        ),
      ),
    );
  }
  data.attributes.forEach((attr, i) => {
    const figure = charts.children[i];
    const title = attributeTitle(attr, i, count);
    figure.querySelector("figcaption").textContent = title || "Estimated shares";
    const box = figure.querySelector(".chart-scroll");
    const found = attr.discovery ?? null; // a free-text campaign: answers discovered, some maybe noise
    const labelled = found ? discoveredAnswers(attr) : attr;
    const shown = shownAnswers(labelled);
    box.replaceChildren(chart(shown, data, `chart-title-${i}`, box.clientWidth || 560));
    box.dataset.shown = shown.shown;
    box.dataset.of = shown.of;
    box.dataset.discovered = found ? JSON.stringify(attr.labels) : ""; // (a discovered answer may hold any character)
    figure.querySelector(".diagnostics").textContent = found
      ? discoveryWords(found)
      : [topWords(shown), diagnosticWords(attr)].filter(Boolean).join(" ");
    const fallback = figure.querySelector(".fallback");
    const why = fallbackWords(attr, data.method);
    fallback.replaceChildren(
      ...(why ? [why, el("br"), el("span", { class: "fine" }, `Details: ${attr.fallback_reason}.`)] : []),
    );
    fallback.dataset.fallback = attr.fallback ?? "";
    fallback.hidden = !why;
    figure.querySelector("details .table-wrap").replaceChildren(estimateTable(shown, data.level));
  });
}

let resizing = 0;
window.addEventListener("resize", () => {
  cancelAnimationFrame(resizing);
  resizing = requestAnimationFrame(() => lastData && charts.children.length && render(lastData));
});

// ------------------------------------------------------------------ the privacy table

/**
 * A memoized campaign's two guarantees over a device's rounds (roundsSentences), from the
 * protection the collector computed for its current round (GET .../round, which anyone may ask).
 */
async function showRounds(spec) {
  const q = protection(spec)[0];
  if (q.kind !== "memo") return;
  const box = document.getElementById("privacy-rounds");
  let info = null;
  try {
    const response = await fetchWithin(`/v1/campaigns/${campaignId}/round`);
    info = response.ok ? await response.json() : null;
  } catch {
    info = null;
  }
  let said = null;
  try {
    said = info?.protection ? roundsSentences(info.protection, q, info, false) : null;
  } catch {
    said = null; // not what this page reads: say so below
  }
  if (said === null) {
    box.replaceChildren(el("p", { class: "hint" }, "What the reports reveal over the rounds could not be fetched from the collector."));
  } else {
    box.replaceChildren(...said.map((text, i) => el("p", { id: i === 0 ? "privacy-rounds-text" : null }, text)));
    box.dataset.epsilon = String(info.protection.history.epsilon);
  }
  box.dataset.ready = "true";
  box.hidden = false;
}

async function showPrivacy() {
  const out = document.getElementById("privacy-summary");
  if (!canVerify()) {
    out.textContent = "This browser cannot check the spec here: open the dashboard over HTTPS (secure context needed).";
    return;
  }
  let text;
  try {
    text = await fetchSpecText(campaignId);
  } catch (exc) {
    out.textContent = `The spec could not be fetched: ${exc.message}.`;
    return;
  }
  try {
    const spec = await loadSpec(text);
    if (spec.id !== campaignId) throw new Error(`the collector sent another campaign's spec (${spec.id})`);
    questions = spec.question;
    const q = document.getElementById("question");
    q.textContent = Array.isArray(spec.question) ? spec.question.join(" · ") : spec.question;
    const result = verify(spec);
    privacyRows(spec, result);
    protectionList(spec);
    const whole = result.ldp_epsilon;
    out.replaceChildren(
      result.rows.length === 1
        ? "The one promise of the campaign's definition holds. "
        : `Every one of the ${result.rows.length} promises of the campaign's definition holds. `,
      ...(whole === Infinity
        ? ["Some answers are not protected, so a report as a whole has no finite ε."]
        : [
            "A report as a whole is at most e",
            el("sup", {}, formatEps(whole)),
            ` ≈ ${expWords(whole)} times as likely under one answer as under any other (ε = ${formatEps(whole)}).`,
          ]),
    );
    main.dataset.privacy = "verified";
    showRounds(spec); // after: a round the collector cannot say leaves the verified claims as they are
  } catch (exc) {
    out.textContent = `The spec failed its check: ${exc.message}`;
    main.dataset.privacy = "failed";
    try {
      privacyRows(null, verify(text));
    } catch {
      // a malformed sampler: nothing to tabulate
    }
  }
}

// ------------------------------------------------------------------ start

if (main.dataset.closed === "true") document.getElementById("closed-badge").hidden = false;
askToken(!storedToken()); // a token kept in this tab: one line (opened again if the collector refuses it)
showPrivacy();
refresh();
