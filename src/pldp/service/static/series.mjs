// The time series of a recurring campaign on the dashboard: per attribute an SVG chart with one
// line per answer across the rounds, each round's estimate a point and its confidence interval a
// band, drawn from GET /v1/campaigns/{id}/series (the same numbers, in data- attributes).

import { percent, shareAxis, shareScale } from "/static/axes.mjs";
import { el, svg } from "/static/common.mjs";

/** Colours of the answers' lines: classes s0 ... s7 of pldp.css, reused beyond eight answers. */
const COLOURS = 8;

/** A round's start as the chart writes it: "3 Mar" (UTC) for daily and weekly rounds, else its number. */
function roundLabel(point, rounds) {
  if (rounds !== "daily" && rounds !== "weekly") return `${point.round}`;
  const day = new Date(point.started_at * 1000);
  return day.toLocaleDateString("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });
}

/** Runs of consecutive rounds that have an estimate (a round without reports breaks the line). */
function runs(points, a) {
  const out = [];
  let run = [];
  for (const p of points) {
    if (p.attributes) run.push(p);
    else if (run.length) {
      out.push(run);
      run = [];
    }
  }
  if (run.length) out.push(run);
  return out.map((r) => r.map((p) => ({ round: p.round, part: p.attributes[a] })));
}

/**
 * One attribute's chart, `width` px wide: per answer a line through its rounds' estimates (circles
 * with `data-round`, `data-label`, `data-value`, `data-ci-low`, `data-ci-high`) over its interval band.
 */
function seriesChart(data, a, labels, titleId, width) {
  const points = data.series;
  const left = 62;
  const right = 12;
  const top = 12;
  const plotH = 220;
  const bottom = 40;
  const height = top + plotH + bottom;
  const slot = Math.max(6, (width - left - right) / points.length);
  width = Math.max(width, left + right + slot * points.length);
  const x = (round) => left + (round - points[0].round + 0.5) * slot;
  const values = points.flatMap((p) => (p.attributes ? [...p.attributes[a].ci_low, ...p.attributes[a].ci_high] : []));
  const scale = shareScale(values, values, top, plotH);
  const y = scale.y;

  const root = svg("svg", {
    class: "chart series",
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-labelledby": titleId,
    "data-method": data.method,
    "data-level": data.level,
    "data-rounds": points.length,
  });
  const axis = shareAxis(scale, left, right, width);
  const every = Math.max(1, Math.ceil((points.length * 48) / (width - left - right)));
  points.forEach((p, i) => {
    if (i % every === 0 || i === points.length - 1) {
      axis.append(
        svg("text", { class: "label", x: x(p.round), y: top + plotH + 16, "text-anchor": "middle" }, roundLabel(p, data.rounds)),
      );
    }
  });
  axis.append(
    svg("text", { class: "axis-title", x: left + (width - left - right) / 2, y: height - 4, "text-anchor": "middle" }, "Round"),
  );
  root.append(axis);

  const pct = Math.round(data.level * 1000) / 10;
  labels.forEach((label, k) => {
    const line = svg("g", { class: `answer s${k % COLOURS}`, "data-label": label });
    for (const run of runs(points, a)) {
      const upper = run.map((r) => `${x(r.round)},${y(r.part.ci_high[k])}`);
      const lower = run.map((r) => `${x(r.round)},${y(r.part.ci_low[k])}`).reverse();
      const half = Math.min(slot / 2, 8);
      if (run.length === 1) {
        const r = run[0];
        line.append(svg("rect", { class: "band", x: x(r.round) - half, y: y(r.part.ci_high[k]), width: 2 * half, height: Math.max(0.5, y(r.part.ci_low[k]) - y(r.part.ci_high[k])) }));
      } else {
        line.append(svg("polygon", { class: "band", points: [...upper, ...lower].join(" ") }));
        line.append(svg("polyline", { class: "line", points: run.map((r) => `${x(r.round)},${y(r.part.frequencies[k])}`).join(" ") }));
      }
      for (const r of run) {
        const f = r.part.frequencies[k];
        const lo = r.part.ci_low[k];
        const hi = r.part.ci_high[k];
        line.append(
          svg(
            "circle",
            {
              class: "point",
              cx: x(r.round),
              cy: y(f),
              r: 3,
              "data-round": r.round,
              "data-label": label,
              "data-value": String(f),
              "data-ci-low": String(lo),
              "data-ci-high": String(hi),
            },
            svg("title", {}, `Round ${r.round}, ${label}: ${percent(f, 1)} (${pct}\u00a0% interval ${percent(lo, 1)} to ${percent(hi, 1)})`),
          ),
        );
      }
    }
    root.append(line);
  });
  return root;
}

function legend(labels) {
  return el(
    "ul",
    { class: "legend" },
    ...labels.map((label, k) => el("li", {}, el("span", { class: `swatch s${k % COLOURS}`, "aria-hidden": "true" }), label)),
  );
}

function seriesTable(data, a, labels) {
  const pct = Math.round(data.level * 1000) / 10;
  return el(
    "table",
    { class: "numbers" },
    el("caption", {}, `Each round's estimated shares with ${pct}\u00a0% confidence intervals`),
    el("thead", {}, el("tr", {}, ...["Round", "Reports", ...labels].map((h) => el("th", { scope: "col" }, h)))),
    el(
      "tbody",
      {},
      ...data.series.map((p) =>
        el(
          "tr",
          {},
          el("th", { scope: "row" }, `${p.round} (${roundLabel(p, "daily")})`),
          el("td", {}, p.n.toLocaleString("en")),
          ...labels.map((_, k) => {
            const part = p.attributes?.[a];
            return el("td", {}, part ? `${percent(part.frequencies[k], 1)} (${percent(part.ci_low[k], 1)} to ${percent(part.ci_high[k], 1)})` : "–");
          }),
        ),
      ),
    ),
  );
}

/**
 * Draw a series answer into `box`: per attribute a figure titled by `titleOf(attr, i, count)`, its chart
 * as wide as the box, a legend, and the numbers in a table. Nothing to draw (no round has reports
 * yet) says so.
 */
export function drawSeries(box, data, titleOf) {
  const first = data.series.find((p) => p.attributes);
  box.dataset.round = String(data.round);
  if (!first) {
    box.replaceChildren(el("p", { class: "hint" }, "No round has reports yet."));
    return;
  }
  const count = first.attributes.length;
  const width = box.clientWidth || 560;
  box.replaceChildren(
    ...first.attributes.map((attr, a) =>
      el(
        "figure",
        { class: "attribute series", "data-attribute": a },
        el("figcaption", { id: `series-title-${a}` }, titleOf(attr, a, count) || "Estimated shares by round"),
        el("div", { class: "chart-scroll" }, seriesChart(data, a, attr.labels, `series-title-${a}`, width)),
        legend(attr.labels),
        el("details", {}, el("summary", {}, "Numbers by round"), el("div", { class: "table-wrap" }, seriesTable(data, a, attr.labels))),
      ),
    ),
  );
}
