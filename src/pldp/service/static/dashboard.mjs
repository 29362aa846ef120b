// The analyst's dashboard (/dashboard/{id}): the campaign's estimate as SVG bar charts with
// confidence-interval whiskers, refreshed every 2 s, beside the exact privacy table of its spec.

import { loadSpec, verify } from "/static/pldp-client.mjs";
import { apiError, canVerify, el, fetchSpecText, fetchWithin, formatEps, svg } from "/static/common.mjs";

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

// ------------------------------------------------------------------ messages and the token

function showMessage(text, kind = "notice", state = "") {
  message.replaceChildren(...(text ? [el("p", {}, text)] : []));
  message.className = `message ${text ? kind : ""}`.trim();
  message.hidden = !text;
  main.dataset.state = state;
}

const storedToken = () => sessionStorage.getItem(TOKEN_KEY);

tokenForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const token = tokenInput.value.trim();
  tokenInput.value = "";
  if (!token) {
    showMessage("Paste an analyst token into the field first.", "error", "no_token");
    tokenInput.focus();
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  refresh();
});

document.getElementById("forget-token").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  refresh();
});

methodSelect.addEventListener("change", () => refresh());
levelSelect.addEventListener("change", () => refresh());
// a hidden tab does not poll; it catches up when shown again
document.addEventListener("visibilitychange", () => {
  if (!document.hidden && main.dataset.state !== "unauthorized" && main.dataset.state !== "forbidden") refresh();
});

// ------------------------------------------------------------------ polling

function clearCharts() {
  charts.replaceChildren();
  summary.hidden = true;
}

/** Fetch the estimate now (cancelling a pending poll); poll again in 2 s unless stuck on an error. */
async function refresh() {
  clearTimeout(timer);
  const mine = ++generation;
  const token = storedToken();
  if (!token) {
    clearCharts();
    showMessage("Paste an analyst token above to see the estimates.", "notice", "no_token");
    return;
  }
  const method = methodSelect.value;
  const level = levelSelect.value;
  const url = `/v1/campaigns/${campaignId}/estimate?method=${encodeURIComponent(method)}&level=${encodeURIComponent(level)}`;
  let again = true;
  try {
    const response = await fetchWithin(url, { headers: { authorization: `Bearer ${token}` } });
    if (mine !== generation) return;
    if (response.ok) {
      const data = await response.json();
      if (mine !== generation) return;
      render(data);
      showMessage("", "notice", "ok");
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

function poll() {
  if (!document.hidden) refresh();
}

/** Show a refused estimate readably; whether polling should go on. */
function showFailure(err) {
  switch (err.status) {
    case 401:
      sessionStorage.removeItem(TOKEN_KEY);
      clearCharts();
      showMessage(`This token is not valid: ${err.reason}. Paste an analyst token.`, "error", "unauthorized");
      return false;
    case 403:
      clearCharts();
      showMessage(`This token may not read this campaign: ${err.reason}. Use a token granted this campaign.`, "error", "forbidden");
      return false;
    case 409:
      if (err.code === "no_reports") {
        clearCharts();
        showMessage("No reports yet: the charts appear when the first report arrives.", "notice", "no_reports");
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

const fmt = (x, digits = 4) => (Number.isFinite(x) ? String(Number(x.toPrecision(digits))) : String(x));
const finite = (xs) => xs.filter((x) => Number.isFinite(x));

/** Tick step 1, 2 or 5 times a power of ten, about span / 5. */
function tickStep(span) {
  const raw = span / 5;
  const p = 10 ** Math.floor(Math.log10(raw));
  const m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

function clip(label, n) {
  return label.length > n ? label.slice(0, n - 1) + "…" : label;
}

/**
 * One attribute's bar chart: a bar per answer (its estimated frequency, `data-value`), a whisker
 * per confidence interval (`data-ci-low`, `data-ci-high`), a value axis with ticks.
 */
function chart(attr, meta, titleId) {
  const d = attr.labels.length;
  const f = attr.frequencies;
  const lo = attr.ci_low;
  const hi = attr.ci_high;
  const slot = Math.max(14, Math.min(96, 640 / d));
  const rotate = slot < 40 || attr.labels.some((l) => l.length * 7 > slot);
  const left = 56;
  const top = 14;
  const plotH = 240;
  const bottom = rotate ? 90 : 36;
  const width = Math.max(360, left + d * slot + 16);
  const height = top + plotH + bottom;
  let yMin = Math.min(0, ...finite([...f, ...lo]));
  let yMax = Math.max(...finite([...f, ...hi]), 1e-9);
  const step = tickStep(yMax - yMin);
  yMin = Math.floor(yMin / step) * step;
  yMax = Math.ceil(yMax / step) * step;
  const y = (v) => top + ((yMax - Math.min(yMax, Math.max(yMin, v))) / (yMax - yMin)) * plotH;
  const pct = Math.round(meta.level * 1000) / 10;

  const root = svg("svg", {
    class: "chart",
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-labelledby": titleId,
    "data-method": meta.method,
    "data-level": meta.level,
    "data-n": meta.n,
  });
  const axis = svg("g", { class: "axis" });
  for (let t = yMin, i = 0; t <= yMax + step / 2 && i < 50; t += step, i++) {
    const v = Math.abs(t) < step / 1e6 ? 0 : t;
    axis.append(
      svg("line", { class: "grid", x1: left, x2: width - 8, y1: y(v), y2: y(v) }),
      svg("text", { class: "tick", x: left - 6, y: y(v) + 4, "text-anchor": "end" }, fmt(v, 3)),
    );
  }
  axis.append(svg("line", { class: "zero", x1: left, x2: width - 8, y1: y(0), y2: y(0) }));
  root.append(axis);

  const bars = svg("g", { class: "bars" });
  for (let i = 0; i < d; i++) {
    const x = left + i * slot;
    const bw = Math.max(6, slot * 0.62);
    const cx = x + slot / 2;
    const top0 = Math.min(y(f[i]), y(0));
    const label = attr.labels[i];
    const tip = `${label}: ${fmt(f[i])} (${pct} % interval ${fmt(lo[i])} to ${fmt(hi[i])})`;
    bars.append(
      svg(
        "rect",
        {
          class: f[i] < 0 ? "bar negative" : "bar",
          x: cx - bw / 2,
          y: top0,
          width: bw,
          height: Math.max(Math.abs(y(f[i]) - y(0)), 0.5),
          "data-index": i,
          "data-label": label,
          "data-value": String(f[i]),
          "data-ci-low": String(lo[i]),
          "data-ci-high": String(hi[i]),
        },
        svg("title", {}, tip),
      ),
    );
    if (Number.isFinite(lo[i]) && Number.isFinite(hi[i])) {
      const cap = Math.min(8, bw / 2);
      bars.append(
        svg(
          "g",
          { class: "whisker", "data-index": i },
          svg("line", { x1: cx, x2: cx, y1: y(lo[i]), y2: y(hi[i]) }),
          svg("line", { x1: cx - cap, x2: cx + cap, y1: y(lo[i]), y2: y(lo[i]) }),
          svg("line", { x1: cx - cap, x2: cx + cap, y1: y(hi[i]), y2: y(hi[i]) }),
        ),
      );
    }
    const ly = top + plotH + 16;
    bars.append(
      svg(
        "text",
        rotate
          ? { class: "label", x: cx, y: ly, "text-anchor": "end", transform: `rotate(-40 ${cx} ${ly})` }
          : { class: "label", x: cx, y: ly, "text-anchor": "middle" },
        clip(label, rotate ? 14 : Math.max(3, Math.floor(slot / 7))),
        svg("title", {}, label),
      ),
    );
  }
  root.append(bars);
  return root;
}

function estimateTable(attr, level) {
  const pct = Math.round(level * 1000) / 10;
  return el(
    "table",
    { class: "numbers" },
    el("caption", {}, `Estimates with ${pct} % intervals`),
    el(
      "thead",
      {},
      el("tr", {}, ...["Answer", "Frequency", "Std. error", "Low", "High"].map((h) => el("th", { scope: "col" }, h))),
    ),
    el(
      "tbody",
      {},
      ...attr.labels.map((label, i) =>
        el(
          "tr",
          {},
          el("th", { scope: "row" }, label),
          ...[attr.frequencies[i], attr.std_error[i], attr.ci_low[i], attr.ci_high[i]].map((v) => el("td", {}, fmt(v, 6))),
        ),
      ),
    ),
  );
}

function attributeTitle(attr, i, count) {
  if (count === 1) return Array.isArray(questions) ? questions[0] : (questions ?? "");
  const q = Array.isArray(questions) ? questions[i] : null;
  return q ?? attr.name ?? `Attribute ${i + 1}`;
}

function render(data) {
  const count = data.attributes.length;
  const pct = Math.round(data.level * 1000) / 10;
  summary.replaceChildren(
    "n = ",
    el("strong", { id: "n", "data-n": data.n }, data.n.toLocaleString("en")),
    ` reports · method ${data.method} · ${pct} % intervals · updated ${new Date().toLocaleTimeString("en-GB")}`,
  );
  summary.hidden = false;
  if (charts.children.length !== count) {
    charts.replaceChildren(
      ...data.attributes.map((_, i) =>
        el(
          "figure",
          { class: "attribute", "data-attribute": i },
          el("figcaption", { id: `chart-title-${i}` }),
          el("div", { class: "chart-scroll" }),
          el("p", { class: "hint diagnostics" }),
          el("details", {}, el("summary", {}, "Numbers"), el("div", { class: "table-scroll" })),
        ),
      ),
    );
  }
  data.attributes.forEach((attr, i) => {
    const figure = charts.children[i];
    const title = attributeTitle(attr, i, count);
    figure.querySelector("figcaption").textContent = title || "Estimated frequencies";
    figure.querySelector(".chart-scroll").replaceChildren(chart(attr, data, `chart-title-${i}`));
    figure.querySelector(".diagnostics").textContent =
      `on the simplex: ${attr.on_simplex ? "yes" : "no"} · converged: ${attr.converged ? "yes" : "no"}` +
      ` · iterations: ${attr.iterations}`;
    figure.querySelector("details .table-scroll").replaceChildren(estimateTable(attr, data.level));
  });
}

// ------------------------------------------------------------------ the privacy table

function privacyRows(result) {
  const table = document.getElementById("privacy-table");
  table.querySelector("tbody").replaceChildren(
    ...result.rows.map((row) =>
      el(
        "tr",
        { class: row.holds ? "holds" : "fails" },
        el("td", {}, row.part),
        el("td", {}, row.subject),
        el("td", { class: "num" }, formatEpsExact(row.claimed)),
        el("td", { class: "num" }, formatEpsExact(row.realised)),
        el("td", { class: "verdict" }, row.holds ? "✓ holds" : "✗ fails"),
      ),
    ),
  );
  table.hidden = false;
}

/** Ten significant digits: enough to see a realised ε just below its claim. */
const formatEpsExact = (e) => (e === Infinity ? "∞" : Number.isFinite(e) ? String(Number(e.toPrecision(10))) : String(e));

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
    privacyRows(result);
    out.textContent =
      `Every one of the ${result.rows.length} claims holds. ` +
      (result.ldp_epsilon === Infinity
        ? "Some answers are not treated as sensitive, so a whole report has no finite LDP bound (ε = ∞)."
        : `A whole report is ε-LDP with ε = ${formatEps(result.ldp_epsilon)}.`);
    main.dataset.privacy = "verified";
  } catch (exc) {
    out.textContent = `The spec failed its check: ${exc.message}`;
    main.dataset.privacy = "failed";
    try {
      privacyRows(verify(text));
    } catch {
      // a malformed sampler: nothing to tabulate
    }
  }
}

// ------------------------------------------------------------------ start

if (main.dataset.closed === "true") document.getElementById("closed-badge").hidden = false;
showPrivacy();
refresh();
