// client-answers.mjs: a user's answer and level choices as the JS client's sampler input
// (pldp-client.mjs), checked against the spec before any word is drawn. The messages never
// repeat the answer's value.

import { HashedAnswers, normalizeText } from "./client-labels.mjs";
import { AnswerError } from "./client-wire.mjs";

const describe = (v) => (v === null ? "null" : Array.isArray(v) ? "an array" : `a ${typeof v}`);

/**
 * Item index of an answer (a label of list `part` of `labelIndex`, or an index) among d items; for
 * the hashed form, text only, hashed to its bucket.
 */
function item(labelIndex, answer, part, d) {
  if (labelIndex[part] instanceof HashedAnswers) return labelIndex[part].bucket(answer);
  if (typeof answer === "number") {
    if (!Number.isInteger(answer) || answer < 0 || answer >= d) {
      throw new AnswerError(`an answer index must be an integer in [0, ${d})`);
    }
    return answer;
  }
  if (typeof answer === "string") {
    const i = labelIndex[part].get(answer);
    if (i === undefined || i >= d) throw new AnswerError("the answer is not one of the spec's labels");
    return i;
  }
  throw new AnswerError(`an answer must be a label (string) or an index (integer), got ${describe(answer)}`);
}

/**
 * A free-text answer's row of `maxBytes` bytes (pldp.channel.heavy.answer_rows): its text normalised as a
 * hashed answer's is (no bound: the row cuts it), UTF-8, cut to maxBytes bytes and padded with 0x00; an
 * AnswerError for what is not text, is empty or holds U+0000 (the padding byte).
 */
function textRow(answer, maxBytes) {
  const bytes = normalizeText(answer, null);
  if (bytes.includes(0)) throw new AnswerError("the answer holds a byte 0x00, which marks the end of an answer");
  const row = new Uint8Array(maxBytes);
  row.set(bytes.subarray(0, maxBytes));
  return row;
}

function levelIndex(level, T, name) {
  if (level === undefined || level === null) {
    throw new AnswerError(`this spec needs the user's chosen ${name} (an index in [0, ${T}))`);
  }
  if (typeof level !== "number" || !Number.isInteger(level) || level < 0 || level >= T) {
    throw new AnswerError(`${name} must be an integer index in [0, ${T})`);
  }
  return level;
}

/**
 * The sampler's input for one answer of the spec whose root is `node` (its labels' indices
 * `labelIndex`, one Map per attribute), validated before any word is drawn; its shape is what the
 * node's kind takes (`node.takes`, client-nodes.mjs).
 */
export function answerInput(node, labelIndex, answer, level, levels) {
  const given = (v) => v !== undefined && v !== null;
  if (node.takes !== "item and level" && given(level)) throw new AnswerError("this spec has no level choice (level)");
  if (node.takes !== "parts" && given(levels)) throw new AnswerError("this spec has no per-attribute levels (levels)");
  const part = 0;
  switch (node.takes) {
    case "item":
      return item(labelIndex, answer, part, node.d);
    case "text":
      return textRow(answer, node.max_bytes);
    case "item-set": {
      if (!Array.isArray(answer)) throw new AnswerError(`this spec takes a set of answers (an array), got ${describe(answer)}`);
      const items = answer.map((a) => item(labelIndex, a, part, node.d)).sort((a, b) => a - b);
      for (let i = 1; i < items.length; i++) {
        if (items[i] === items[i - 1]) throw new AnswerError("an item-set repeats an item");
      }
      return items;
    }
    case "item and level":
      return { x: item(labelIndex, answer, part, node.d), t: levelIndex(level, node.levels.length, "level") };
    case "parts": {
      const P = node.parts.length;
      if (!Array.isArray(answer) || answer.length !== P) throw new AnswerError(`each answer needs one value per attribute (${P})`);
      const anyLeveled = node.parts.some((p) => p.takes === "item and level");
      if (levels === undefined || levels === null) {
        if (anyLeveled) throw new AnswerError(`this spec needs levels: one level index per attribute (${P})`);
        levels = new Array(P).fill(null);
      }
      if (!Array.isArray(levels) || levels.length !== P) throw new AnswerError(`levels must hold one entry per attribute (${P})`);
      return node.parts.map((p, i) => {
        if (p.takes === "item and level") {
          return { x: item(labelIndex, answer[i], i, p.d), t: levelIndex(levels[i], p.levels.length, `levels[${i}]`) };
        }
        if (levels[i] !== null && levels[i] !== undefined) throw new AnswerError(`attribute ${i} has no level: levels[${i}] must be null`);
        return item(labelIndex, answer[i], i, p.d);
      });
    }
    default:
      throw new TypeError(`a ${node.kind} node takes no answer this client knows (${node.takes})`);
  }
}
