// The collector's HTTP API page (/docs): every operation of /openapi.json with its parameters,
// body and answers, and a form that sends it to this collector. Nothing is loaded from any other
// origin (FastAPI's own documentation pages load scripts from a CDN, so the collector has none).

import { apiError, el, fetchWithin, plural } from "/static/common.mjs";

const main = document.getElementById("api");
const statusLine = document.getElementById("status");
const tokenInput = document.getElementById("token");
const tokenState = document.getElementById("token-state");
const TOKEN_KEY = "pldp.api.token";
const METHODS = ["get", "post", "put", "patch", "delete"];
const REF = "#/components/schemas/";

// ------------------------------------------------------------------ the token

const storedToken = () => sessionStorage.getItem(TOKEN_KEY);

function showTokenState() {
  tokenState.textContent = storedToken()
    ? "A token is in use: the “Send” buttons send it."
    : "No token: only the public operations will answer.";
}

document.getElementById("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const token = tokenInput.value.trim();
  tokenInput.value = "";
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  showTokenState();
});

document.getElementById("forget-token").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  showTokenState();
});

// ------------------------------------------------------------------ schema words

/** A schema in a few words: a model's name (a link to it), a type, a list of them. */
function typeOf(schema) {
  if (!schema) return "";
  if (schema.$ref) {
    const name = schema.$ref.startsWith(REF) ? schema.$ref.slice(REF.length) : schema.$ref;
    return el("a", { href: `#schema-${name}` }, name);
  }
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) {
    const parts = alternatives.map(typeOf);
    return el("span", {}, ...parts.flatMap((p, i) => (i ? [" or ", p] : [p])));
  }
  if (schema.type === "array") return el("span", {}, "list of ", typeOf(schema.items));
  return schema.type ?? (schema.const !== undefined ? JSON.stringify(schema.const) : "any");
}

/**
 * A docstring's line as nodes: reStructuredText literals (``x``) and roles (:class:`~a.B`) become
 * code elements (``~`` keeps the last name); everything is text, never HTML.
 */
function inline(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(/``(.+?)``|:[\w:]+:`(~?)([^`]+)`/g)) {
    out.push(text.slice(last, m.index));
    const code = m[1] ?? (m[2] ? m[3].split(".").pop() : m[3]);
    out.push(el("code", {}, code));
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out.filter((x) => x !== "");
}

/** Paragraphs of a description (blank lines separate them). */
function paragraphs(text) {
  if (!text) return [];
  return text
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => el("p", {}, ...inline(p)));
}

function table(caption, head, rows) {
  return el(
    "div",
    { class: "table-wrap" },
    el(
      "table",
      {},
      el("caption", {}, caption),
      el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...rows.map((cells) => el("tr", {}, ...cells.map((c) => el("td", {}, c))))),
    ),
  );
}

// ------------------------------------------------------------------ sending

/** The answer of a request, for people: status line, type, and the body (JSON pretty-printed). */
async function describeAnswer(response) {
  const type = response.headers.get("content-type") ?? "";
  const head = `${response.status} ${response.statusText}`.trim() + (type ? ` · ${type}` : "");
  let body;
  if (type.includes("json")) {
    const text = await response.text();
    try {
      body = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      body = text;
    }
  } else if (type.startsWith("text/")) {
    body = await response.text();
  } else {
    body = `(${plural((await response.arrayBuffer()).byteLength, "byte")} of ${type || "data"})`;
  }
  return { head, body };
}

async function send(form, path, method, op, out) {
  const data = new FormData(form);
  let url = path;
  const query = new URLSearchParams();
  for (const p of op.parameters ?? []) {
    const value = String(data.get(`param-${p.name}`) ?? "").trim();
    if (p.in === "path") {
      if (!value) {
        out.replaceChildren(el("p", { class: "message error" }, `Fill in ${p.name}: it is part of the path.`));
        return;
      }
      url = url.replace(`{${p.name}}`, encodeURIComponent(value));
    } else if (p.in === "query" && value) {
      query.set(p.name, value);
    }
  }
  if ([...query].length) url += `?${query}`;
  const headers = {};
  const token = storedToken();
  if (token) headers.authorization = `Bearer ${token}`;
  const init = { method: method.toUpperCase(), headers };
  if (op.requestBody) {
    headers["content-type"] = "application/json";
    init.body = String(data.get("body") ?? "");
  }
  out.replaceChildren(el("p", { class: "hint" }, `${init.method} ${url} …`));
  try {
    const response = await fetchWithin(url, init);
    const { head, body } = await describeAnswer(response);
    out.replaceChildren(
      el("p", { class: "answer-head", "data-status": response.status }, `${init.method} ${url} → ${head}`),
      el("pre", { class: "answer" }, body),
    );
  } catch (exc) {
    out.replaceChildren(el("p", { class: "message error" }, `The collector could not be reached: ${exc.message || exc}`));
  }
  main.dataset.answers = String(Number(main.dataset.answers || 0) + 1); // how many answers were shown
}

// ------------------------------------------------------------------ operations

function operationId(method, path) {
  return `op-${method}-${path.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "")}`;
}

function operation(path, method, op) {
  const id = operationId(method, path);
  const params = op.parameters ?? [];
  const pieces = [...paragraphs(op.description)];
  if (params.length) {
    pieces.push(
      table(
        "Parameters",
        ["Name", "In", "Required", "Type", "Meaning"],
        params.map((p) => [
          el("code", {}, p.name),
          p.in,
          p.required ? "yes" : "no",
          typeOf(p.schema),
          el("span", {}, ...inline(p.description ?? p.schema?.description ?? "")),
        ]),
      ),
    );
  }
  if (op.requestBody) {
    const kinds = Object.entries(op.requestBody.content ?? {});
    pieces.push(el("p", {}, "Body: ", ...kinds.flatMap(([type, media], i) => [i ? "; " : "", `${type} `, typeOf(media.schema)])));
  }
  pieces.push(
    table(
      "Answers",
      ["Status", "Meaning", "Body"],
      Object.entries(op.responses ?? {}).map(([status, r]) => [
        status,
        el("span", {}, ...inline(r.description ?? "")),
        el("span", {}, ...Object.entries(r.content ?? {}).flatMap(([type, media], i) => [i ? "; " : "", `${type} `, typeOf(media.schema)])),
      ]),
    ),
  );
  // the form that sends it
  const fields = params
    .filter((p) => p.in === "path" || p.in === "query")
    .map((p) => {
      const fieldId = `${id}-${p.name}`;
      return el(
        "p",
        { class: "field" },
        el("label", { for: fieldId }, `${p.name} (${p.in}${p.required ? ", required" : ""})`),
        el("input", {
          type: "text",
          id: fieldId,
          name: `param-${p.name}`,
          placeholder: p.schema?.default !== undefined ? String(p.schema.default) : "",
          spellcheck: "false",
          autocomplete: "off",
        }),
      );
    });
  if (op.requestBody) {
    fields.push(
      el(
        "p",
        { class: "field" },
        el("label", { for: `${id}-body` }, "Body (JSON)"),
        el("textarea", { id: `${id}-body`, name: "body", rows: 6, spellcheck: "false" }),
      ),
    );
  }
  const out = el("div", { class: "answer-box", "aria-live": "polite" });
  const form = el("form", { class: "try", "data-method": method, "data-path": path }, ...fields, el("p", {}, el("button", { type: "submit" }, "Send")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    send(form, path, method, op, out);
  });
  pieces.push(el("h3", { class: "try-title" }, "Try it"), form, out);
  return el(
    "details",
    { class: "operation", id, "data-method": method.toUpperCase(), "data-path": path },
    el(
      "summary",
      {},
      el("span", { class: `method method-${method}` }, method.toUpperCase()),
      " ",
      el("code", { class: "path" }, path),
      " ",
      el("span", { class: "op-summary" }, op.summary ?? ""),
    ),
    el("div", { class: "operation-body" }, ...pieces),
  );
}

function render(schema) {
  const info = schema.info ?? {};
  document.getElementById("api-title").textContent = `${info.title ?? "HTTP API"} ${info.version ?? ""}`.trim();
  document.title = `${info.title ?? "HTTP API"} · API`;
  const lead = document.getElementById("api-description");
  lead.replaceChildren(
    `${info.description ?? ""} `,
    "Every operation below is one of its ",
    el("a", { href: "/openapi.json" }, "OpenAPI schema"),
    "; open one to read it and send it to this collector.",
  );
  const byTag = new Map();
  for (const [path, item] of Object.entries(schema.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? "other";
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push(operation(path, method, op));
    }
  }
  const sections = [...byTag].map(([tag, ops]) =>
    el("section", { class: "tag", id: `tag-${tag}` }, el("h2", {}, tag), ...ops),
  );
  document.getElementById("operations").replaceChildren(...sections);
  document
    .getElementById("api-index")
    .replaceChildren(
      el("p", { class: "hint" }, "Groups: ", ...[...byTag.keys()].flatMap((tag, i) => [i ? " · " : "", el("a", { href: `#tag-${tag}` }, tag)])),
    );
  const schemas = Object.entries(schema.components?.schemas ?? {});
  document.getElementById("schema-list").replaceChildren(
    ...schemas.map(([name, s]) =>
      el(
        "details",
        { class: "schema", id: `schema-${name}` },
        el("summary", {}, el("code", {}, name), ...(s.description ? inline(` ${s.description.split("\n")[0]}`) : [])),
        el("pre", {}, JSON.stringify(s, null, 2)),
      ),
    ),
  );
  document.getElementById("schemas").hidden = !schemas.length;
  // a link to a schema opens it
  window.addEventListener("hashchange", openTarget);
  openTarget();
}

function openTarget() {
  const target = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
  if (target && target.tagName === "DETAILS") target.open = true;
}

async function start() {
  showTokenState();
  try {
    const response = await fetchWithin("/openapi.json");
    if (!response.ok) throw new Error((await apiError(response)).reason);
    render(await response.json());
    statusLine.hidden = true;
    main.dataset.ready = "true";
  } catch (exc) {
    statusLine.className = "message error";
    statusLine.textContent = `The schema could not be read: ${exc.message || exc}.`;
  }
}

start();
