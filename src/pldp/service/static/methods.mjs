// The dashboard's words for the estimation methods, the detection screen of the reports and a
// fallback an estimator took: plain sentences from the estimate's JSON (pldp.deploy.estimates
// says the same in `pldp campaign estimate`).

/** Each method as the method menu names it. */
export const METHOD_LABELS = {
  unbiased: "Unbiased (can fall below 0\u00a0%)",
  norm_sub: "Clipped to 0–100\u00a0% (Norm-Sub)",
  mle: "Most likely (maximum likelihood)",
  robust: "Robust to fake users claiming levels",
  huber: "Huber over the levels (the former robust method)",
  detect: "Drop unlikely reports",
  recover: "Subtract suspected fake reports",
  sum: "Levels added (the paper's baseline)",
  paper: "As printed in the paper",
};

/** Each method in a few words, for the summary line. */
export const METHOD_SHORT = {
  unbiased: "unbiased",
  norm_sub: "clipped",
  mle: "most likely",
  robust: "robust to fake levels",
  huber: "Huber over the levels",
  detect: "unlikely reports dropped",
  recover: "suspected fakes subtracted",
  sum: "levels added",
  paper: "as printed in the paper",
};

/** What each method does, in plain words. */
export const METHOD_WORDS = {
  unbiased:
    "Unbiased: averaged over many surveys these shares are exactly right, but the noise that protects the respondents " +
    "can push a share below 0\u00a0% or above 100\u00a0%.",
  norm_sub:
    "Clipped to 0–100\u00a0% (Norm-Sub): the unbiased shares, with every negative one set to 0\u00a0% and the others lowered " +
    "by one common amount so that they add up to 100\u00a0%.",
  mle: "Most likely (maximum likelihood): the shares, each between 0\u00a0% and 100\u00a0% and adding up to 100\u00a0%, under which the reports received are the most probable.",
  robust:
    "Robust to fake users claiming levels: the reports of each privacy level (in PLDP-FEBSF, of each reported level " +
    "and number of ones) give their own shares, and these are combined so that every report counts the same whatever " +
    "level it claims: fake users gain nothing by choosing or spreading their claims, and move a share about as much " +
    "as fake users move a survey where everyone has the average budget (at most 10\u00a0% more, measured). Without " +
    "fake users the shares are a little noisier than the unbiased ones (PLDP-FEBSF with unary reports: less noisy).",
  huber:
    "Huber over the levels: the former robust method, kept for comparison. Fake users who all claim one level " +
    "cannot take it over, but fake users who spread their claims over the levels of most weight move it more than " +
    "the unbiased shares.",
  detect:
    "Drop unlikely reports: reports with a number of ones that honest devices almost never produce are left out, and " +
    "the shares are corrected for the few honest reports left out with them.",
  recover:
    "Subtract suspected fake reports: the share of fake reports is estimated from the answers they push below what " +
    "honest reports allow, and their weight is taken off the shares.",
  sum: "Levels added: each privacy level's reports counted on their own, and the counts added (the paper's baseline).",
  paper: "As printed in the paper: kept to reproduce the paper's numbers; other methods estimate better.",
};

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
