// The survey page's form (respondent.mjs): one fieldset per question, its answers with what each
// one's report reveals, the privacy level to choose for a leveled question, and the answers read back;
// a free-text question (a heavy-hitter spec: no answers listed) is one text field.

import { budget, el, formatEps, plural } from "/static/common.mjs";
import { AnswerRange, HashedAnswers, MAX_TEXT_BYTES, normalizeText } from "/static/client-labels.mjs";
import { answerNotes, symbolOf } from "/static/protection.mjs";

const LEVEL_NOTES = {
  perturbed: "The level you pick is itself randomized before it is sent, and your report hides it only partly.",
  clear: "The level you pick is sent as it is, beside your randomized answer.",
  hidden: "The level you pick is not sent.",
};

/**
 * The answers of a question, each with its note (or null); `eps` (the one-sided protection per
 * answer, protection.mjs) goes into each choice's `data-epsilon` ("inf": not protected).
 */
function choiceList(name, type, labels, eps, notes, describedBy) {
  return el(
    "div",
    { class: "choices" },
    ...labels.map((label, i) => {
      const id = `${name}-${i}`;
      const noteId = notes[i] ? `${id}-note` : null;
      return el(
        "div",
        { class: "choice", "data-epsilon": eps ? (eps[i] === Infinity ? "inf" : String(eps[i])) : null },
        el("input", { type, id, name, value: i, "aria-describedby": [noteId, describedBy].filter(Boolean).join(" ") || null }),
        el("label", { for: id }, label, notes[i] ? el("span", { class: "hint", id: noteId }, ` (${notes[i]})`) : null),
      );
    }),
  );
}

/** Answers beyond which a question is a field that completes from the answers, not a list of buttons. */
export const MANY_CHOICES = 30;

/** A text field for any text (`hint` its label): the hashed form's, and a free-text question's. */
function textField(name, hint) {
  return el(
    "div",
    { class: "choices search" },
    el("label", { for: name, class: "hint" }, hint),
    el("input", { type: "text", id: name, name, autocomplete: "off" }),
  );
}

const decoder = new TextDecoder();

/**
 * Say under a free-text field what is used of an answer longer than `maxBytes` bytes: its first
 * whole characters within them (the client cuts the UTF-8 itself, a character cut in two included).
 */
function sayCut(box, raw, maxBytes) {
  let bytes;
  try {
    bytes = normalizeText(raw, null);
  } catch {
    bytes = new Uint8Array(0); // not an answer (yet): submitting says why
  }
  box.hidden = bytes.length <= maxBytes;
  if (box.hidden) return;
  let end = maxBytes;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--; // back to the start of a character
  const part = end < maxBytes ? ", and the first bytes of the next character" : "";
  box.textContent = `Your answer is ${bytes.length} bytes long: only its first ${maxBytes} are used (“${decoder.decode(bytes.subarray(0, end))}”${part}).`;
}

/**
 * A question of many answers: a text field completing from them (a datalist, each option with its
 * note), one of which must be chosen exactly (readAnswers refuses any other text). For answers that
 * are the integers 0 .. d-1 (a spec's {"range": d}), a field for the integer, with no list; for
 * free text (the hashed form), a field for any text.
 */
function searchChoice(name, labels, notes) {
  if (labels instanceof HashedAnswers) return textField(name, `Type your answer (any text, up to ${MAX_TEXT_BYTES} bytes):`);
  if (labels instanceof AnswerRange) {
    const last = (labels.length - 1).toLocaleString("en");
    return el(
      "div",
      { class: "choices search" },
      el("label", { for: name, class: "hint" }, `Type your answer: a whole number from 0 to ${last}`),
      el("input", { type: "text", id: name, name, inputmode: "numeric", autocomplete: "off", spellcheck: "false" }),
    );
  }
  const listId = `${name}-list`;
  return el(
    "div",
    { class: "choices search" },
    el("label", { for: name, class: "hint" }, `Type to find your answer among ${labels.length.toLocaleString("en")}:`),
    el("input", { type: "text", id: name, name, list: listId, autocomplete: "off", spellcheck: "false" }),
    el("datalist", { id: listId }, ...labels.map((label, i) => el("option", { value: label }, notes[i] ?? ""))),
  );
}

function levelFieldset(index, node, context) {
  const levels = node.levels.map(budget);
  const order = [...levels].sort((a, b) => a - b);
  const name = `level-${index}`;
  const helpId = `${name}-help`;
  const describe = (e) => {
    if (levels.length === 1) return "";
    if (e === order[0]) return "most private: your answer is randomized the most";
    if (e === order[order.length - 1]) return "least private: your answer is randomized the least and helps the survey most";
    return "in between";
  };
  return el(
    "fieldset",
    { class: "levels" },
    el("legend", {}, context ? `Your privacy level for “${context}”` : "Your privacy level"),
    el(
      "p",
      { class: "hint", id: helpId },
      "ε (epsilon) bounds how much your report can tell about your answer: the smaller it is, the more private your answer, " +
        "and the less your report helps the survey. ",
      LEVEL_NOTES[node.level_report] ?? "",
    ),
    el(
      "div",
      { class: "choices" },
      ...levels.map((e, t) => {
        const id = `${name}-${t}`;
        const note = describe(e);
        return el(
          "div",
          { class: "choice" },
          el("input", { type: "radio", id, name, value: t, "aria-describedby": helpId }),
          el("label", { for: id }, `Level ${t + 1}: ε = ${formatEps(e)}`, note ? el("span", { class: "hint" }, ` (${note})`) : null),
        );
      }),
    ),
  );
}

/** One question's fieldset: `q` is its entry of protection(spec), `node` its sampler node. */
export function questionFieldset(index, q, node, several) {
  const name = `answer-${index}`;
  const { question, labels, kind } = q;
  if (kind === "heavy") {
    // free text: the answer is the text itself (randomized on the device), cut to the node's bytes
    const hint = `Type your answer (any text: only the first ${plural(q.maxBytes, "byte")} (UTF-8) are used):`;
    const field = textField(name, hint);
    const cut = el("p", { class: "hint", id: `${name}-cut`, "aria-live": "polite", hidden: true });
    field.querySelector("input").addEventListener("input", (event) => sayCut(cut, event.target.value, q.maxBytes));
    const block = el("div", { class: "question" }, el("fieldset", {}, el("legend", {}, question), field, cut));
    return { block, part: { kind, name, level: null, question, search: null, text: q.maxBytes } };
  }
  const hashed = labels instanceof HashedAnswers; // free text: a text field whatever the number of buckets
  const pieces = [el("legend", {}, question)];
  if (kind === "padding") {
    pieces.push(el("p", { class: "hint", id: `${name}-help` }, "Choose all that apply, or none."));
    pieces.push(choiceList(name, "checkbox", labels, q.answers, answerNotes(q.answers), `${name}-help`));
  } else if (kind === "leveled") {
    // protected at the chosen level's ε; an answer a level does not protect says so
    const notes = labels.map((_, x) => {
      const open = q.byLevel.flatMap((level, t) => (level[x] === Infinity ? [t + 1] : []));
      if (!open.length) return null;
      return open.length === q.levels.length
        ? "not protected: your report may reveal this answer"
        : `not protected at level ${open.join(", ")}: your report may reveal this answer there`;
    });
    pieces.push(hashed ? searchChoice(name, labels, []) : choiceList(name, "radio", labels, null, notes, null));
  } else if (hashed || labels.length > MANY_CHOICES) {
    pieces.push(searchChoice(name, labels, answerNotes(q.answers, symbolOf(q))));
  } else {
    pieces.push(choiceList(name, "radio", labels, q.answers, answerNotes(q.answers, symbolOf(q)), null));
  }
  const block = el("div", { class: "question" }, el("fieldset", {}, ...pieces));
  if (kind === "leveled") block.append(levelFieldset(index, node, several ? question : null));
  const search = kind !== "padding" && (hashed || (kind !== "leveled" && labels.length > MANY_CHOICES)) ? labels : null;
  return { block, part: { kind, name, level: kind === "leveled" ? `level-${index}` : null, question, search } };
}

/**
 * The text typed for a free-text question (the hashed form's, at most `limit` UTF-8 bytes; a
 * heavy-hitter spec's, null: no bound, the client cuts it), refused here as the client would refuse
 * it (empty, oversized), else an Error saying why.
 */
function typedText(raw, part, label, limit) {
  try {
    normalizeText(raw, limit);
  } catch (err) {
    throw Object.assign(new Error(`Please type your answer to ${label}: ${err.message}.`), { field: part.name });
  }
  return raw;
}

/**
 * The answer typed for a question of many answers (`part.search` its labels): its index (for free
 * text, the text itself, which the client hashes), else an Error saying why.
 */
function searched(form, part, label) {
  const raw = form.querySelector(`input[name="${part.name}"]`).value;
  if (part.search instanceof HashedAnswers) return typedText(raw, part, label, MAX_TEXT_BYTES);
  const range = part.search instanceof AnswerRange;
  const typed = range ? raw.trim() : raw;
  const x = part.search.indexOf(typed);
  if (x >= 0) return x;
  const last = (part.search.length - 1).toLocaleString("en");
  const why = !typed ? "no answer was typed" : range ? `“${typed}” is not a whole number from 0 to ${last}` : `“${typed}” is not one of the answers`;
  const ask = range ? `Please type a whole number from 0 to ${last} as your answer to ${label}` : `Please choose one of the listed answers to ${label}`;
  throw Object.assign(new Error(`${ask}: ${why}.`), { field: part.name });
}

/** The answers of `form` to its questions `parts` (from questionFieldset): throws an Error naming the first question left unanswered. */
export function readAnswers(form, parts) {
  const checked = (name) => form.querySelector(`input[name="${name}"]:checked`);
  const answers = [];
  const levels = [];
  parts.forEach((part, i) => {
    const label = parts.length > 1 ? `question ${i + 1} (${part.question})` : "the question";
    if (part.kind === "padding") {
      answers.push([...form.querySelectorAll(`input[name="${part.name}"]:checked`)].map((x) => Number(x.value)));
    } else if (part.search) {
      answers.push(searched(form, part, label));
    } else if (part.text) {
      answers.push(typedText(form.querySelector(`input[name="${part.name}"]`).value, part, label, null));
    } else {
      const input = checked(part.name);
      if (!input) throw Object.assign(new Error(`Please choose an answer to ${label}.`), { field: part.name });
      answers.push(Number(input.value));
    }
    if (part.level) {
      const input = checked(part.level);
      if (!input) throw Object.assign(new Error(`Please choose your privacy level for ${label}.`), { field: part.level });
      levels.push(Number(input.value));
    } else {
      levels.push(null);
    }
  });
  return { answers, levels };
}
