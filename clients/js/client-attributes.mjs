// client-attributes.mjs: the attributes node of the JS client (pldp-client.mjs;
// pldp.channel.attributes): one part per attribute, each a direct, unary or leveled node, their
// budgets added up (docs/wire-format.md §2, §3.5).

import { checkKeys } from "./client-checks.mjs";
import { SpecError } from "./client-wire.mjs";

/** The attributes node at `path`; `parseNode` parses its parts. */
export function parseAttributes(obj, path, parseNode) {
  checkKeys(obj, path, ["kind", "parts"]);
  if (!Array.isArray(obj.parts) || obj.parts.length === 0) {
    throw new SpecError(`${path}.parts must be a non-empty list of nodes`);
  }
  const parts = obj.parts.map((o, i) => parseNode(o, `${path}.parts[${i}]`));
  if (!parts.every((n) => n.attribute)) {
    throw new SpecError(`${path}.parts must be direct, unary or leveled nodes`);
  }
  return { kind: "attributes", parts };
}

/** The claims of every part, their budgets added up. */
export function verifyAttributes(node, part, verifyNode) {
  const rows = [];
  let total = 0;
  node.parts.forEach((p, i) => {
    const [r, e] = verifyNode(p, `attribute ${i}`);
    rows.push(...r);
    total += e;
  });
  return [rows, total];
}

/** One report per part, of the parts' inputs in order (`draw` draws one part's node). */
export const drawAttributes = (words, node, input, draw) => node.parts.map((p, i) => draw(words, p, input[i]));

/** The attributes kind (client-kinds.mjs): one answer per part in, one payload per part out. */
export const KIND = {
  parse: parseAttributes,
  verify: verifyAttributes,
  words: (node, input, wordCount) => node.parts.reduce((n, p, i) => n + wordCount(p, input[i]), 0),
  draw: drawAttributes,
  takes: "parts",
};
