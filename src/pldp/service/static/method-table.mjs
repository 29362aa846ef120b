// Generated from pldp.methods (the table of estimation methods) by
// `python -m pldp.methods`: do not edit; a test checks it against the table.

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
  discover: "Discover the most frequent answers",
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
  discover: "answers discovered",
};

/** What each method does, in plain words. */
export const METHOD_WORDS = {
  unbiased: "Unbiased: averaged over many surveys these shares are exactly right, but the noise that protects the respondents can push a share below 0\u00a0% or above 100\u00a0%.",
  norm_sub: "Clipped to 0–100\u00a0% (Norm-Sub): the unbiased shares, with every negative one set to 0\u00a0% and the others lowered by one common amount so that they add up to 100\u00a0%.",
  mle: "Most likely (maximum likelihood): the shares, each between 0\u00a0% and 100\u00a0% and adding up to 100\u00a0%, under which the reports received are the most probable.",
  robust: "Robust to fake users claiming levels: the reports of each privacy level (in PLDP-FEBSF, of each reported level and number of ones) give their own shares, and these are combined so that every report counts the same whatever level it claims: fake users gain nothing by choosing or spreading their claims, and move a share about as much as fake users move a survey where everyone has the average budget (at most 10\u00a0% more, measured). Without fake users the shares are a little noisier than the unbiased ones (PLDP-FEBSF with unary reports: less noisy).",
  huber: "Huber over the levels: the former robust method, kept for comparison. Fake users who all claim one level cannot take it over, but fake users who spread their claims over the levels of most weight move it more than the unbiased shares.",
  detect: "Drop unlikely reports: reports with a number of ones that honest devices almost never produce are left out, and the shares are corrected for the few honest reports left out with them.",
  recover: "Subtract suspected fake reports: the share of fake reports is estimated from the answers they push below what honest reports allow, and their weight is taken off the shares.",
  sum: "Levels added: each privacy level's reports counted on their own, and the counts added (the paper's baseline).",
  paper: "As printed in the paper: kept to reproduce the paper's numbers; other methods estimate better.",
  discover: "Discovered answers: respondents typed their own answers, and the most frequent ones were found from the randomized reports alone, each with its estimated share. An answer below the floor may be held by nobody, a rare answer may be missed, and only the first bytes of a long answer are seen.",
};
