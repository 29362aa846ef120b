// The dashboard's estimate of one attribute (dashboard.mjs): its bar chart, the estimated share of
// each answer with its confidence interval on a share axis, and the same numbers as a table.

import { finite, percent, shareAxis, shareScale } from "/static/axes.mjs";
import { largest, smallest } from "/static/client-checks.mjs";
import { el, svg } from "/static/common.mjs";

/**
 * Decimals of a share in percent: one digit below the leading digit of the smallest standard
 * error (noise makes finer digits meaningless), from 0 to 3.
 */
function percentDecimals(stdErrors) {
  const se = finite(stdErrors).filter((x) => x > 0);
  if (!se.length) return 1;
  return Math.min(3, Math.max(0, 1 - Math.floor(Math.log10(smallest(se) * 100))));
}

/** Answers beyond which the chart and the table show the top answers only. */
export const MANY_ANSWERS = 30;
/** The answers shown of a large domain: those of the largest estimated shares. */
export const TOP_ANSWERS = 20;

/**
 * The answers to draw of one attribute's estimate: all of them, or for more than MANY_ANSWERS the
 * TOP_ANSWERS of the largest estimated shares, largest first (ties: the first answer), each with
 * its own numbers; `shown` and `of` say how many of how many. Chosen by their estimates, the
 * shown shares lean high (the largest of many noisy estimates) and each interval is its answer's
 * alone, not one that holds for the selection: the dashboard says so.
 */
export function shownAnswers(attr) {
  const d = attr.labels.length;
  if (d <= MANY_ANSWERS) return { ...attr, shown: d, of: d };
  const order = [...attr.frequencies.keys()].sort((a, b) => attr.frequencies[b] - attr.frequencies[a] || a - b);
  const top = order.slice(0, TOP_ANSWERS);
  const pick = (values) => top.map((i) => values[i]);
  return {
    ...attr,
    labels: pick(attr.labels),
    frequencies: pick(attr.frequencies),
    std_error: pick(attr.std_error),
    ci_low: pick(attr.ci_low),
    ci_high: pick(attr.ci_high),
    ...(attr.noise ? { noise: pick(attr.noise) } : {}),
    indices: top,
    shown: top.length,
    of: d,
  };
}

function clip(label, n) {
  return label.length > n ? label.slice(0, n - 1) + "…" : label;
}

/**
 * One attribute's bar chart, `width` px wide (its container's width, at least 14 px per answer): a
 * bar per answer (its estimated frequency in `data-value`), a whisker per confidence interval
 * (`data-ci-low`, `data-ci-high`), a labelled share axis with ticks in percent; an answer that may
 * be noise (`attr.noise[i]`: a discovered answer below the floor) drawn faint.
 */
export function chart(attr, meta, titleId, width) {
  const d = attr.labels.length;
  const f = attr.frequencies;
  const lo = attr.ci_low;
  const hi = attr.ci_high;
  const left = 62;
  const right = 8;
  const top = 12;
  const slot = Math.max(14, (width - left - right) / d);
  width = Math.max(width, left + right + slot * d);
  const rotate = attr.labels.some((l) => l.length * 7 > slot - 4);
  const plotH = width < 480 ? 200 : 230;
  const longest = Math.min(14, largest(Array.from(attr.labels, (l) => l.length)));
  const bottom = rotate ? 22 + longest * 5 : 30;
  const height = top + plotH + bottom;
  const scale = shareScale([...f, ...lo], [...f, ...hi], top, plotH);
  const y = scale.y;
  const pct = Math.round(meta.level * 1000) / 10;
  const decimals = percentDecimals(attr.std_error);

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
  root.append(shareAxis(scale, left, right, width));

  const bars = svg("g", { class: "bars" });
  for (let i = 0; i < d; i++) {
    const x = left + i * slot;
    const bw = Math.max(6, slot * 0.62);
    const cx = x + slot / 2;
    const top0 = Math.min(y(f[i]), y(0));
    const label = attr.labels[i];
    const tip = `${label}: ${percent(f[i], decimals)} (${pct}\u00a0% interval ${percent(lo[i], decimals)} to ${percent(hi[i], decimals)})`;
    bars.append(
      svg(
        "rect",
        {
          class: ["bar", f[i] < 0 ? "negative" : "", attr.noise?.[i] ? "noise" : ""].filter(Boolean).join(" "),
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
    const labelClass = attr.noise?.[i] ? "label noise" : "label";
    bars.append(
      svg(
        "text",
        rotate
          ? { class: labelClass, x: cx + 4, y: ly, "text-anchor": "end", transform: `rotate(-40 ${cx + 4} ${ly})` }
          : { class: labelClass, x: cx, y: ly, "text-anchor": "middle" },
        clip(label, 14),
        svg("title", {}, label),
      ),
    );
  }
  root.append(bars);
  return root;
}

export function estimateTable(attr, level) {
  const pct = Math.round(level * 1000) / 10;
  const decimals = percentDecimals(attr.std_error);
  return el(
    "table",
    { class: "numbers" },
    el("caption", {}, `Estimated shares with ${pct}\u00a0% confidence intervals`),
    el(
      "thead",
      {},
      el("tr", {}, ...["Answer", "Share", "Standard error", `${pct}\u00a0% interval`].map((h) => el("th", { scope: "col" }, h))),
    ),
    el(
      "tbody",
      {},
      ...attr.labels.map((label, i) =>
        el(
          "tr",
          {},
          el("th", { scope: "row" }, label),
          el("td", {}, percent(attr.frequencies[i], decimals)),
          el("td", {}, percent(attr.std_error[i], decimals)),
          el("td", {}, `${percent(attr.ci_low[i], decimals)} to ${percent(attr.ci_high[i], decimals)}`),
        ),
      ),
    ),
  );
}
