// The dashboard's words for the estimation methods, the detection screen of the reports and a
// fallback an estimator took: plain sentences from the estimate's JSON (pldp.deploy.estimates
// says the same in `pldp campaign estimate`). The methods' words come from the table of
// estimation methods (pldp.methods), written to method-table.mjs.

import { METHOD_LABELS, METHOD_SHORT, METHOD_WORDS } from "/static/method-table.mjs";

export { METHOD_LABELS, METHOD_SHORT, METHOD_WORDS };

/** A share (a fraction) in percent: one decimal from 0.1 % up, two significant digits below. */
export function shareWords(share) {
  const pct = share * 100;
  if (!Number.isFinite(pct)) return String(share);
  if (pct === 0) return "0\u00a0%";
  if (pct >= 0.1) return `${pct.toFixed(1)}\u00a0%`;
  return `${pct.toFixed(Math.min(20, 1 - Math.floor(Math.log10(pct))))}\u00a0%`;
}

/**
 * The detection screen of the estimate's `detection` member in plain words: the flagged share
 * (and whether honest devices alone give that many), the reports piling up on one number of ones,
 * or why there is no screen.
 *
 * The joint test of the whole histogram (when it fired) and what the screen can see at this
 * campaign's budget and number of reports follow in `joint` and `power` (the words of
 * `pldp.deploy.estimates.detection_words`).
 *
 * @returns {{flagged: string, excess: string|null, joint: string|null, power: string|null, suspicious: boolean}}
 */
export function screeningWords(detection) {
  if (!detection || !detection.available) {
    const why = detection?.reason ?? "the collector did not say";
    return { flagged: `Screening for fake reports is not available for this campaign: ${why}.`, excess: null, joint: null, power: null, suspicious: false };
  }
  const honest = 2 * detection.alpha;
  let flagged =
    `${shareWords(detection.flagged_share)} of reports have a number of ones that honest devices almost never produce; ` +
    "they may be fake.";
  if (detection.flagged_share <= honest) flagged += ` That is no more than honest devices produce by chance (up to ${shareWords(honest)}).`;
  const excess = detection.ones_excess_share
    ? `At least ${shareWords(detection.ones_excess_share)} of reports pile up on one number of ones more often than honest ` +
      "devices would; they may be fake reports made to look ordinary."
    : null;
  const joint = detection.joint_fired
    ? "Taken together, the numbers of ones do not fit honest devices " +
      `(${detection.joint_p < 0.001 ? "p < 0.001" : `p = ${Number(detection.joint_p).toFixed(3)}`}); too many reports have ` +
      `${(detection.suspect_ones ?? []).join(", ") || "none in particular"} ones: “Drop unlikely reports” leaves them out.`
    : null;
  return { flagged, excess, joint, power: powerWords(detection), suspicious: detection.flagged_share > honest || Boolean(excess) || Boolean(joint) };
}

/** What the screen can see at the campaign's budget and number of reports (null for an older screen). */
export function powerWords(detection) {
  if (detection.has_power == null || detection.largest_unflagged == null) return null;
  const top = detection.largest_unflagged;
  const hide = "fakes whose numbers of ones follow the honest ones are not seen by any screen of the counts";
  const single = detection.flag_from == null
    ? "no single report is unlikely enough to be flagged, "
    : `single reports are flagged from ${detection.flag_from} ones, `;
  if (!detection.has_power) {
    const need = detection.power_share == null ? "more reports than there are" : `${shareWords(detection.power_share)} of reports`;
    return `The screen has no power at this campaign's privacy budget and number of reports: ${single}and fakes ` +
      `with ${top} ones are seen only when they are at least ${need}; ${hide}.`;
  }
  return `What the screen can see here: ${single}fakes with ${top} ones (the most not flagged) are seen from ` +
    `${shareWords(detection.power_share)} of reports (9 times in 10); ${hide}.`;
}

const label = (method) => `“${(METHOD_LABELS[method] ?? method).replace(/ \(.*\)$/, "")}”`;

/** The fallback an attribute's estimate took, in plain words (null without one). */
export function fallbackWords(attr, method) {
  if (!attr.fallback) return null;
  return (
    `${label(method)} could not be used on these reports: they do not fit it, which fake users can cause. ` +
    `The shares shown come from ${label(attr.fallback)} instead.`
  );
}

/**
 * What a free-text campaign's discovery cannot see (an attribute's `discovery` member), in plain
 * words: how the answers were found, the floor, the share that may be missed, the bytes kept.
 */
export function discoveryWords(discovery) {
  const below = discovery.confident.filter((c) => !c).length;
  const words = [
    `Respondents typed their own answers; ${discovery.protocol} found the most frequent ones from the randomized ` +
      "reports alone, largest estimated share first (picked by their estimates, the shares near the end lean high).",
    `An answer estimated below ${shareWords(discovery.floor)} may be held by nobody` +
      (below ? ` (${below === 1 ? "one is" : `${below} are`} marked “may be noise”).` : "."),
    `An answer held by fewer than about ${shareWords(discovery.miss)} of respondents may be missed, and only ` +
      `the first ${discovery.max_bytes} bytes of an answer are seen.`,
  ];
  return words.join(" ");
}
