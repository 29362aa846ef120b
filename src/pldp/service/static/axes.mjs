// The share axis of the dashboard's charts: the bars of the current estimate (dashboard.mjs) and
// the lines of a recurring campaign's rounds (series.mjs).

import { largest } from "/static/client-checks.mjs";
import { svg } from "/static/common.mjs";

export const finite = (xs) => xs.filter((x) => Number.isFinite(x));

/** Tick step 1, 2 or 5 times a power of ten, about span / 5. */
export function tickStep(span) {
  const raw = span / 5;
  const p = 10 ** Math.floor(Math.log10(raw));
  const m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/** A share (a fraction) in percent with `decimals` digits: "16.9\u00a0%" ("−" for negatives). */
export function percent(x, decimals, unit = "\u00a0%") {
  if (!Number.isFinite(x)) return String(x);
  const text = (x * 100).toFixed(decimals);
  return (Number(text) === 0 ? text.replace("-", "") : text.replace("-", "−")) + unit;
}

/**
 * The vertical scale of a chart of shares from `lows` to `highs` (0 always shown), `plotH` px high
 * from `top`: its ends rounded to whole ticks, the tick step, and `y(v)`, the pixel of share `v`.
 */
export function shareScale(lows, highs, top, plotH) {
  let yMin = Math.min(0, ...finite(lows));
  let yMax = Math.max(largest(finite(highs)), 1e-9);
  const step = tickStep(yMax - yMin);
  yMin = Math.floor(yMin / step) * step;
  yMax = Math.ceil(yMax / step) * step;
  const y = (v) => top + ((yMax - Math.min(yMax, Math.max(yMin, v))) / (yMax - yMin)) * plotH;
  return { yMin, yMax, step, y, top, plotH };
}

/** The axis of a scale between x = `left` and `width - right`: grid lines, ticks in percent, the zero line, its title. */
export function shareAxis(scale, left, right, width) {
  const { yMin, yMax, step, y, top, plotH } = scale;
  const tickDecimals = Math.max(0, -Math.floor(Math.log10(step * 100)));
  const axis = svg("g", { class: "axis" });
  for (let t = yMin, i = 0; t <= yMax + step / 2 && i < 50; t += step, i++) {
    const v = Math.abs(t) < step / 1e6 ? 0 : t;
    axis.append(
      svg("line", { class: "grid", x1: left, x2: width - right, y1: y(v), y2: y(v) }),
      svg("text", { class: "tick", x: left - 6, y: y(v) + 4, "text-anchor": "end" }, percent(v, tickDecimals, "%")),
    );
  }
  axis.append(svg("line", { class: "zero", x1: left, x2: width - right, y1: y(0), y2: y(0) }));
  const mid = top + plotH / 2;
  axis.append(
    svg("text", { class: "axis-title", x: 12, y: mid, "text-anchor": "middle", transform: `rotate(-90 12 ${mid})` }, "Estimated share"),
  );
  return axis;
}
