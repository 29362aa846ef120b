// Helpers shared by the collector's pages (respondent.mjs, dashboard.mjs). No innerHTML anywhere:
// every text from a spec or a server response goes into the page as a text node.

/**
 * A new element with attributes and children (strings become text nodes).
 *
 * @param {string} tag
 * @param {Object<string, string|number|boolean|null|undefined>} [attrs] `class`, `id`, `for`,
 *   any attribute; `true` sets an empty attribute, `false`/null/undefined leave it out.
 * @param {...(Node|string|number|null|undefined)} children
 * @returns {HTMLElement}
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "object" ? child : String(child));
  }
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * A new SVG element (presentation attributes only: the pages' policy allows no inline style).
 *
 * @param {string} tag
 * @param {Object<string, string|number>} [attrs]
 * @param {...(Node|string)} children
 * @returns {SVGElement}
 */
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function setAttrs(node, attrs) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    node.setAttribute(k, v === true ? "" : String(v));
  }
}

/** "1 report", "2 reports": a count and its noun, singular for one. */
export const plural = (n, one, many = `${one}s`) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`;

/** A spec's budget (a number or the string "inf") as a number. */
export const budget = (v) => (v === "inf" ? Infinity : Number(v));

/**
 * A budget for people: three significant digits, "∞" for an infinite one.
 *
 * @param {number} eps
 * @returns {string}
 */
export function formatEps(eps) {
  if (eps === Infinity) return "∞";
  if (!Number.isFinite(eps)) return String(eps);
  return String(Number(eps.toPrecision(3)));
}

/**
 * The readable reason of a failed API call: the JSON error's `reason`, else the status line.
 *
 * @param {Response} response
 * @returns {Promise<{status: number, code: string, reason: string}>}
 */
export async function apiError(response) {
  let code = "http_error";
  let reason = `the collector answered ${response.status} ${response.statusText}`.trim();
  try {
    const body = await response.json();
    if (body && typeof body.reason === "string") reason = body.reason;
    if (body && typeof body.error === "string") code = body.error;
  } catch {
    // not JSON: keep the status line
  }
  return { status: response.status, code, reason };
}

/**
 * fetch with a time limit (an expired limit rejects like a network error).
 *
 * @param {string} url
 * @param {RequestInit} [init]
 * @param {number} [ms=15000]
 * @returns {Promise<Response>}
 */
export async function fetchWithin(url, init = {}, ms = 15000) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ms);
  try {
    return await fetch(url, { ...init, signal: abort.signal, cache: "no-store", credentials: "omit" });
  } finally {
    clearTimeout(timer);
  }
}

/** The campaign's spec text from the collector (no token: the spec is public). */
export async function fetchSpecText(campaignId) {
  const response = await fetchWithin(`/v1/campaigns/${campaignId}/spec`);
  if (!response.ok) {
    const err = await apiError(response);
    throw new Error(err.status === 404 ? "there is no such survey on this collector" : err.reason);
  }
  return response.text();
}

/** Whether the browser can check a spec (crypto.subtle exists only in secure contexts). */
export function canVerify() {
  return Boolean(globalThis.crypto && globalThis.crypto.subtle && globalThis.crypto.getRandomValues);
}
