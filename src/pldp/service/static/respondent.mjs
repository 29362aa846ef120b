// The survey page (/c/{id}): shows the campaign's question, randomizes the answer in the browser
// with pldp-client.mjs, and sends only the randomized report (a pldp.batch/1 of one report).
// An invited campaign's link carries the respondent's one-time code in its fragment
// (/c/{id}#code=...), which browsers never send to a server: the page reads it, removes it from the
// address bar, and sends it as the bearer token of the report.
// The report made for this round is kept in the browser (shared.mjs) before it is sent: a reload
// sends that same report again (same id: the collector counts it once) and says so, instead of
// drawing a new one; the next round draws a new one. Each report is charged to the browser's
// privacy ledger (pldp-ledger.mjs), which the page shows in plain words.

import { Client } from "/static/client-reports.mjs";
import { loadSpec } from "/static/client-spec.mjs";
import { Ledger, specCost } from "/static/pldp-ledger.mjs";
import { countedNote, keepReport, keptKey, keptReport, sentWithLinks, sharedParagraphs } from "/static/shared.mjs";
import { apiError, canVerify, el, fetchSpecText, fetchWithin, formatEps } from "/static/common.mjs";
import { epsilonMeaning, protection, questionSentences, roundsSentences, smallestEpsilon } from "/static/protection.mjs";
import { questionFieldset, readAnswers } from "/static/survey-form.mjs";

const main = document.getElementById("survey");
const campaignId = main.dataset.campaign;
const form = document.getElementById("answer-form");
const questions = document.getElementById("questions");
const submitButton = document.getElementById("submit");
const statusLine = document.getElementById("status");
const errorBox = document.getElementById("error");
const invited = main.dataset.access === "invited";
const codeKey = `pldp-code:${campaignId}`;
const sentKey = (round) => `pldp-sent:${campaignId}:${round}`; // this tab's note of a report its link sent

/** Delays (ms) before the automatic retries of a batch after a network or server error. */
const RETRY_DELAYS = [500, 1000, 2000, 4000];

let client = null;
let parts = []; // one {kind, node} per question
let batch = null; // the randomized batch, drawn once; retries send exactly it
let sending = false;
let roundInfo = null; // GET /v1/campaigns/{id}/round: {rounds, round, ...}
let keptAt = null; // where this round's report is kept
let ledger = null;
let survey = null; // {family, question}: the ledger's family of this survey, and its protection(spec) (one question)
let chosen = null; // the answer given on this page (its index; one question): in this page's memory only
const code = invited ? takeCode() : null;

/**
 * The respondent code of the link's fragment (#code=...), which is then removed from the address
 * bar (and so from the history, bookmarks and a shared screen); kept in this tab's sessionStorage
 * so that a reload still has it.
 */
function takeCode() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const fromLink = fragment.get("code");
  if (fromLink !== null) history.replaceState(history.state, "", location.pathname + location.search);
  try {
    if (fromLink) sessionStorage.setItem(codeKey, fromLink);
    return fromLink || sessionStorage.getItem(codeKey);
  } catch {
    return fromLink || null; // storage refused (a private window): the code lives as long as the page
  }
}

function forgetCode() {
  try {
    sessionStorage.removeItem(codeKey);
  } catch {
    // nothing was kept
  }
}

/**
 * Note in this tab that its link sent this round's report (the report, not the code): where the
 * browser keeps no localStorage (refused, or full), a reload of the page still says that she has
 * answered, not that the survey is by invitation.
 */
function noteSent(kept) {
  try {
    sessionStorage.setItem(sentKey(kept.round), JSON.stringify(kept));
  } catch {
    // storage refused: the page's memory only
  }
}

/** The report this tab's link sent in `round` ({batch, round, sent, key}: key its keptKey), or null. */
function sentInThisTab(round) {
  try {
    const kept = JSON.parse(sessionStorage.getItem(sentKey(round)) ?? "null");
    return kept && kept.batch && Array.isArray(kept.batch.reports) ? kept : null;
  } catch {
    return null;
  }
}

/**
 * A personal link opened again in this tab changes only the address's fragment, which loads no
 * page: load it, so that the page reads the link's code (and says whether it has answered).
 */
function reopenedLink() {
  if (new URLSearchParams(location.hash.slice(1)).get("code")) location.reload();
}

/** What to tell a respondent whose code the collector refused (null: not a code's refusal). */
const CODE_REFUSALS = {
  unknown_code: () => "The code in your link is not one of this survey's. Check that the whole link was copied, or ask whoever sent it for the link again.",
  code_expired: (reason) => `Your link has expired (${reason}). Ask whoever sent it for a new one.`,
  code_revoked: () => "Your link was withdrawn by the survey's organisers. Ask whoever sent it for a new one.",
  code_used: () => "This link has been used already: an answer was sent with it and recorded. Each link takes one answer.",
};

function setStatus(text) {
  statusLine.textContent = text;
  statusLine.hidden = !text;
}

function showError(text) {
  errorBox.replaceChildren(el("p", {}, text));
  errorBox.hidden = false;
}

function clearError() {
  errorBox.replaceChildren();
  errorBox.hidden = true;
}

/** Show the notice with this id ("closed", "invitation") instead of the form. */
function showNotice(id) {
  form.hidden = true;
  setStatus("");
  const notice = document.getElementById(id);
  notice.hidden = false;
  notice.focus();
}

// ------------------------------------------------------------------ the form

/**
 * "How private is your answer?": per question what its answers' reports reveal (a memoized survey:
 * its answer each time it is new, and whether and when it changes over the rounds, as the collector
 * computed it: roundInfo.protection), and what ε means.
 */
function showProtection(questionsProtection) {
  const several = questionsProtection.length > 1;
  const paragraphs = questionsProtection.flatMap((q, i) =>
    questionSentences(q, several).map((text) => el("p", { "data-question": i }, text)),
  );
  const q = questionsProtection[0];
  if (q.kind === "memo" && roundInfo?.protection) {
    const said = roundsSentences(roundInfo.protection, q, roundInfo);
    paragraphs.push(...said.map((text, i) => el("p", { id: i === 0 ? "protection-rounds" : null, "data-question": 0 }, text)));
  } else if (q.kind === "memo" && !paragraphs.length) {
    // a collector that does not say what the rounds reveal: the answers' own protection at least
    paragraphs.push(el("p", { "data-question": 0 }, `Every answer is protected at ε∞ = ${formatEps(q.answers[0])} each time it is new.`));
  }
  if (several) {
    paragraphs.push(
      el("p", {}, "Your report as a whole protects all your answers together at the sum of the ε you choose for them."),
    );
  }
  document.getElementById("protection-questions").replaceChildren(...paragraphs);
  document.getElementById("epsilon-meaning").replaceChildren(...epsilonMeaning(smallestEpsilon(questionsProtection)));
  document.getElementById("protection").hidden = false;
}

function buildForm(spec) {
  const root = spec.sampler.root;
  const nodes = root.kind === "attributes" ? root.parts : [root];
  const questionsProtection = protection(spec);
  const built = questionsProtection.map((q, i) => questionFieldset(i, q, nodes[i], nodes.length > 1));
  showProtection(questionsProtection);
  questions.replaceChildren(...built.map((b) => b.block));
  parts = built.map((b) => b.part);
  document.title = root.kind === "attributes" ? "Survey" : `${spec.question} · Survey`;
  document.getElementById("title").textContent = root.kind === "attributes" ? "Survey" : spec.question;
  if (root.kind !== "attributes") questions.querySelector("legend").classList.add("visually-hidden");
}

/** The answers of the form: throws an Error naming the first question left unanswered. */
const readForm = () => readAnswers(form, parts);

/** Randomize the form's answers into a batch of one report (the answers are not kept); a Promise of it for a memoized spec. */
function randomize({ answers, levels }) {
  if (parts.length > 1) return client.reports([answers], { levels });
  const level = levels[0];
  return client.reports([answers[0]], level === null ? {} : { level });
}

// ------------------------------------------------------------------ sending

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * POST the batch, retrying the same bytes (same report ids: the collector stores them once) after
 * a network error or a 5xx.
 *
 * @returns {Promise<{ok: true}|{ok: false, status: number, code: string, reason: string}>}
 */
async function send(body) {
  let last = null;
  for (let attempt = 0; attempt <= RETRY_DELAYS.length; attempt++) {
    if (attempt > 0) {
      setStatus(`The collector could not be reached; trying again (${attempt} of ${RETRY_DELAYS.length})…`);
      await sleep(RETRY_DELAYS[attempt - 1]);
    }
    try {
      const headers = { "content-type": "application/json" };
      if (code) headers.authorization = `Bearer ${code}`;
      const url = `/v1/campaigns/${campaignId}/reports?round=${roundInfo.round}`;
      const response = await fetchWithin(url, { method: "POST", headers, body });
      if (response.ok) return { ok: true };
      const err = await apiError(response);
      if (response.status < 500 && response.status !== 408 && response.status !== 429) return { ok: false, ...err };
      last = { ok: false, ...err };
    } catch (exc) {
      last = { ok: false, status: 0, code: "network", reason: `the collector could not be reached (${exc.message || exc})` };
    }
  }
  return { ...last, retryable: true };
}

function lockAnswers(locked) {
  for (const input of form.querySelectorAll("input")) input.disabled = locked;
}

async function onSubmit(event) {
  event.preventDefault();
  if (sending || client === null) return;
  clearError();
  if (batch === null) {
    let choices;
    try {
      choices = readForm();
    } catch (exc) {
      showError(exc.message);
      const first = exc.field ? form.querySelector(`input[name="${exc.field}"]`) : null;
      if (first) first.focus();
      return;
    }
    chosen = parts.length === 1 && typeof choices.answers[0] === "number" ? choices.answers[0] : null;
    try {
      batch = await randomize(choices); // a memoized spec's client answers with a Promise
    } catch (exc) {
      showError(`Your answer could not be randomized: ${exc.message}`);
      return;
    }
    lockAnswers(true); // drawn once: a retry sends this very report, never a second draw
    keepReport(keptAt, { batch, round: roundInfo.round, sent: false }); // a reload sends it again
  }
  sending = true;
  submitButton.disabled = true;
  setStatus("Sending the randomized report…");
  const result = await send(JSON.stringify(batch));
  sending = false;
  if (result.ok) {
    keepReport(keptAt, { batch, round: roundInfo.round, sent: true });
    if (code) noteSent({ batch, round: roundInfo.round, sent: true, key: keptAt });
    forgetCode();
    form.reset();
    form.hidden = true;
    setStatus("");
    document.getElementById("sent").textContent = JSON.stringify(batch, null, 2);
    const thanks = document.getElementById("thanks");
    thanks.hidden = false;
    thanks.focus();
    showShared();
    return;
  }
  refused(result);
}

/** Say why the collector did not take the batch (the form stays for a retry where one may help). */
function refused(result) {
  if (result.code === "campaign_closed") {
    showNotice("closed");
    return;
  }
  main.dataset.refused = result.code;
  if (result.code === "code_required") {
    showNotice("invitation");
    return;
  }
  setStatus("");
  if (Object.hasOwn(CODE_REFUSALS, result.code)) {
    showError(CODE_REFUSALS[result.code](result.reason)); // final: this link sends no (other) answer
    return;
  }
  submitButton.disabled = false;
  if (result.retryable) {
    submitButton.textContent = "Try sending again";
    showError(`Your randomized report could not be sent: ${result.reason}. It is kept on this page; press "Try sending again".`);
  } else {
    showError(`The collector refused the report: ${result.reason}.`);
  }
}

/**
 * What the respondent has shared from this browser (the ledger), shown when there is any; on a
 * survey whose answers are not all protected alike, this survey's line says why its count is not
 * that of her answer (countedNote).
 */
function showShared() {
  let paragraphs = [];
  const note = survey?.question ? countedNote(survey.question, chosen) : null;
  try {
    paragraphs = sharedParagraphs(ledger.view(), note ? { [survey.family]: note } : {});
  } catch (exc) {
    paragraphs = []; // a damaged ledger: randomizing says why (the client refuses to report)
  }
  document.getElementById("shared-body").replaceChildren(...paragraphs);
  document.getElementById("shared").hidden = paragraphs.length === 0;
}

/**
 * This round's report was made already (the page was reloaded, or opened again): send that same
 * report again (same id: the collector counts it once, and acknowledges a retry) and say so.
 */
async function sendKeptAgain(kept) {
  batch = kept.batch;
  form.hidden = true;
  setStatus("You have answered this round already: sending the same randomized report again…");
  const result = await send(JSON.stringify(batch));
  setStatus("");
  const recurring = roundInfo.rounds !== "once";
  const which = recurring ? `this survey's round ${roundInfo.round}` : "this survey";
  const next = recurring ? " You can answer again in its next round." : "";
  let text;
  if (result.ok) {
    keepReport(keptAt, { ...kept, sent: true });
    text =
      `You answered ${which} from this browser already. Your randomized report is kept here, and it was sent ` +
      `again unchanged: the collector counts it once, and no new report was drawn.${next}`;
  } else if (result.code === "campaign_closed") {
    showNotice("closed");
    return;
  } else if (Object.hasOwn(CODE_REFUSALS, result.code)) {
    text = CODE_REFUSALS[result.code](result.reason);
  } else {
    text =
      `You answered ${which} from this browser already; its randomized report is kept here, and it could not ` +
      `be sent again just now (${result.reason}). Reload the page to try again: it sends that same report.`;
  }
  document.getElementById("answered-text").textContent = text;
  document.getElementById("answered-sent").textContent = JSON.stringify(batch, null, 2);
  main.dataset.answered = result.ok ? "sent-again" : "kept";
  showNotice("answered");
  showShared();
}

/**
 * An invited survey opened without a code (its link's code is forgotten once its report was taken,
 * so a reload has none): if this browser sent this round's report with a personal link, say that
 * the respondent has answered, not that she should open her link. Whether it did.
 */
async function answeredWithLink() {
  try {
    roundInfo = await fetchRound();
  } catch {
    return false; // cannot tell: the invitation notice says how to answer
  }
  const kept = sentWithLinks(campaignId, roundInfo.round)[0] ?? sentInThisTab(roundInfo.round);
  if (!kept) return false;
  const recurring = roundInfo.rounds !== "once";
  const which = recurring ? `this survey's round ${roundInfo.round}` : "this survey";
  const next = recurring ? " You can answer its next round by opening your link again then." : "";
  document.getElementById("answered-text").textContent =
    `You answered ${which} from this browser already, with your personal link: your randomized report ` +
    `was sent and recorded, and it is kept here. Each link takes one answer${recurring ? " per round" : ""}.${next}`;
  document.getElementById("answered-sent").textContent = JSON.stringify(kept.batch, null, 2);
  main.dataset.answered = "with-link";
  showNotice("answered");
  ledger = openLedger();
  showShared();
  return true;
}

/** The campaign's current round (GET /v1/campaigns/{id}/round). */
async function fetchRound() {
  const response = await fetchWithin(`/v1/campaigns/${campaignId}/round`);
  if (!response.ok) throw new Error((await apiError(response)).reason);
  return response.json();
}

/** The browser's ledger; in memory where the browser keeps no storage (a private window may not). */
function openLedger() {
  try {
    localStorage.getItem("pldp-ledger");
    return Ledger.browser();
  } catch {
    return Ledger.memory();
  }
}

// ------------------------------------------------------------------ start

async function start() {
  if (main.dataset.closed === "true") {
    showNotice("closed");
    return;
  }
  if (invited && !code) {
    if (!(await answeredWithLink())) showNotice("invitation");
    main.dataset.ready = "true";
    return;
  }
  if (!canVerify()) {
    setStatus("");
    showError("This browser cannot check the survey here: open the page over HTTPS (secure context needed).");
    return;
  }
  let spec;
  try {
    spec = await loadSpec(await fetchSpecText(campaignId));
    if (spec.id !== campaignId) throw new Error(`the collector sent the definition of another survey (${spec.id})`);
    roundInfo = await fetchRound();
  } catch (exc) {
    setStatus("");
    showError(`The survey cannot be shown: ${exc.message}. Nothing was sent.`);
    return;
  }
  ledger = openLedger();
  const asked = protection(spec);
  survey = { family: specCost(spec).family, question: asked.length === 1 ? asked[0] : null };
  keptAt = await keptKey(campaignId, roundInfo.round, code);
  const noted = sentInThisTab(roundInfo.round);
  const kept = keptReport(keptAt) ?? (noted?.key === keptAt ? noted : null);
  if (kept !== null) {
    await sendKeptAgain(kept);
    main.dataset.ready = "true";
    return;
  }
  client = new Client(spec, { ledger: ledger.withRound(roundInfo.round) });
  showShared();
  buildForm(spec);
  form.addEventListener("submit", onSubmit);
  form.hidden = false;
  setStatus("");
  main.dataset.ready = "true";
}

if (invited) window.addEventListener("hashchange", reopenedLink);
start();
