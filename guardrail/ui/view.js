// How one answer looks: its sentences as guardrail released them, each with its verdict
// on hover, a strip of per-sentence verdicts and the final report.
//
// Safety rule of this page: the text of an unsupported sentence must never be shown.
// Only what guardrail released is rendered (the content chunks, an event's "released"
// and "redacted_original", a report sentence's "released"); the report's "original"
// and "spans[].text" fields are never read.  Everything goes in with textContent.

export const MARKER = "[unsupported]";   // guardrail's default policy.redact_marker

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value == null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) if (child != null && child !== false) node.append(child);
  return node;
}

const VERB = { release: "Released", annotate: "Annotated", redact: "Redacted",
               regenerate: "Regenerated", block: "Blocked", pending: "Released" };
// What a flag rests on (the explanation's basis), in words.
const BASIS = { value_changed: "the grounding states a value otherwise",
                other_record: "a value of another record",
                general: "a claim of what usually happens",
                unlisted: "an extra the tool result does not list",
                value_missing: "a value the grounding does not hold",
                value_worked_out: "a value it says it worked out that no rule reproduces",
                negation: "a negation the grounding does not share",
                words: "the model and the words" };
const fmt = (x, digits = 2) => (typeof x === "number" ? x.toFixed(digits) : "–");

// The verdict of one sentence, for its tooltip and the report table (no sentence text).
function verdictLines(v) {
  const lines = [];
  const why = v.explanation;
  let head = VERB[v.action] || v.action;
  if (why) head += ` · ${why.kind} (${why.severity})`;
  if (v.attempts) head += ` · ${v.attempts} rewrite${v.attempts > 1 ? "s" : ""}`;
  lines.push(head);
  if (v.skipped === "language") lines.push("released without a check: a language the detector does not read");
  else if (v.checked === false) lines.push("released without a check (code, whitespace or no verdict)");
  else if (v.claim === false) lines.push("no claim: passed without a check");
  else lines.push(`score ${fmt(v.score)} · exit layer ${v.exit_layer ?? "–"}`
                  + (typeof v.latency_ms === "number" ? ` · ${Math.round(v.latency_ms)} ms` : ""));
  if (why && why.basis) lines.push(`found: ${BASIS[why.basis] || why.basis}`);
  if (why && why.evidence) lines.push(`closest context: ${why.evidence}`);
  return lines;
}

function tooltip(v) {
  const [head, ...rest] = verdictLines(v);
  return el("span", { class: "tip", role: "tooltip" }, el("b", { text: head }),
            ...rest.map((line) => el("span", { text: line })));
}

// Released text, the redaction marker shown as a marker.
function withMarkers(text) {
  const parts = text.split(MARKER);
  const out = [];
  parts.forEach((part, i) => {
    if (i) out.push(el("mark", { class: "marker", text: MARKER }));
    if (part) out.push(document.createTextNode(part));
  });
  return out;
}

export class AnswerView {
  // One assistant turn in the transcript.
  constructor(transcript) {
    this.t0 = performance.now();
    for (const open of transcript.querySelectorAll("details.report[open]")) open.open = false;
    this.sentences = [];        // {node, text, verdict|null, arrivedMs}
    this.raw = null;            // unchecked pass-through text goes here, token by token
    this.checked = false;
    this.text = "";             // what the client received, for the next turn's history
    this.node = el("div", { class: "turn assistant" });
    this.meta = el("div", { class: "meta", text: "guardrail is checking…" });
    this.body = el("div", { class: "bubble answer", "aria-live": "polite" });
    this.strip = el("div", { class: "strip" });
    this.tail = el("div", { class: "tail" });
    this.node.append(el("div", { class: "who", text: "assistant" }), this.body, this.strip,
                     this.tail, this.meta);
    transcript.append(this.node);
  }

  started({ verified, streamId }) {
    this.checked = verified === "true";
    this.streamId = streamId;
    this.meta.textContent = this.checked ? "checked by guardrail · streaming…"
      : "not checked: no grounding in this request (add a document or a tool result)";
    if (!this.checked) this.node.classList.add("unverified");
  }

  content(text, event) {
    this.text += text;
    if (event || this.checked) this.addSentence(text, event);
    else {
      if (!this.raw) this.body.append(this.raw = el("span", { class: "raw" }));
      this.raw.append(document.createTextNode(text));
    }
  }

  addSentence(text, event) {
    const entry = { text, verdict: event, arrivedMs: performance.now() - this.t0 };
    if (event) entry.verdict = { ...event };
    entry.node = el("span", { class: "s", "data-index": event ? event.index : "" });
    this.sentences.push(entry);
    this.paint(entry);
    this.body.append(entry.node);
  }

  paint(entry) {
    const v = entry.verdict;
    const action = v ? v.action : "pending";
    const node = entry.node;
    node.className = `s s-${action}`;
    node.dataset.action = action;
    node.replaceChildren();
    if (action === "regenerate" && v.redacted_original) {
      node.append(el("del", { class: "s-old", text: v.redacted_original.trimEnd() }), " ");
    }
    const cls = action === "regenerate" ? "s-text new" : "s-text";
    node.append(el("span", { class: cls }, ...(action === "redact" ? withMarkers(entry.text)
                                                                 : [entry.text])));
    if (v) {
      node.tabIndex = 0;
      node.append(tooltip(v));
      this.chip(entry);
    }
  }

  chip(entry) {
    const v = entry.verdict;
    const label = `#${v.index} ${v.action}` + (v.claim === false ? " · no claim"
      : v.checked === false ? " · unchecked" : ` ${fmt(v.score)}`)
      + (typeof v.latency_ms === "number" ? ` · ${Math.round(v.latency_ms)} ms` : "");
    const chip = el("span", { class: `chip c-${v.action}`, title: verdictLines(v).join("\n"),
                              text: label });
    if (entry.chip) entry.chip.replaceWith(chip);
    else this.strip.append(chip);
    entry.chip = chip;
  }

  toolCalls(calls) {
    for (const c of calls) this.tail.append(toolCard(c.function.name, c.function.arguments));
  }

  // The finish chunk's report: fill in verdicts the stream did not carry (a server
  // without per-sentence events), then show the report.
  finished(reason, report) {
    if (report) this.applyReport(report);
    const blocked = reason === "content_filter";
    if (blocked) {
      const why = report && (report.errors || []).find((e) => e.startsWith("blocked"));
      this.banner("blocked", "Blocked by guardrail: the rest of the answer was withheld.",
                  why || "");
    }
    this.meta.textContent = this.summary(report, blocked ? "blocked" : "done");
    this.done = true;
  }

  failed(title, detail, report) {
    if (report) this.applyReport(report);
    this.banner("error", title, detail);
    this.meta.textContent = this.summary(report, "stopped");
    this.done = true;
  }

  applyReport(report) {
    const shown = (report.sentences || []).filter((s) => s.released);
    const pending = this.sentences.filter((e) => !e.verdict);
    if (pending.length && shown.length === this.sentences.length
        && shown.every((s, i) => s.released === this.sentences[i].text)) {
      shown.forEach((s, i) => {
        const entry = this.sentences[i];
        if (!entry.verdict) {
          entry.verdict = pick(s);
          this.paint(entry);
        }
      });
    }
    this.tail.append(reportView(report, this.sentences));
  }

  summary(report, state) {
    const secs = ((performance.now() - this.t0) / 1000).toFixed(1);
    if (!report) return `${this.checked ? "" : "not checked (no grounding) · "}${state} · ${secs} s`;
    const parts = [report.hallucination_detected ? "hallucination detected" : "no hallucination found",
                   `action ${report.action}`, `${this.sentences.length} sentences`, `${secs} s`];
    if (report.partial) parts.unshift("partial");
    return parts.join(" · ");
  }

  banner(kind, title, detail) {
    this.tail.prepend(el("div", { class: `banner ${kind}`, role: "alert" },
                         el("b", { text: title }), detail ? el("span", { text: detail }) : null));
  }
}

// A report sentence without its original text or span texts.
function pick(s) {
  const { index, action, released, checked, claim, skipped, score, exit_layer, attempts,
          explanation } = s;
  return { index, action, released, checked, claim, skipped, score, exit_layer, attempts,
           explanation };
}

export function toolCard(name, args, result) {
  const card = el("div", { class: "tool-card" },
                  el("div", { class: "tool-title" }, el("span", { class: "label", text: "tool call" }),
                     el("code", { text: `${name}(${args || ""})` })));
  if (result != null) {
    card.append(el("details", {}, el("summary", { text: "result" }),
                   el("pre", { text: prettyJson(result) })));
  }
  return card;
}

export function prettyJson(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch (e) {
    return text;
  }
}

function reportView(report, sentences) {
  const facts = [
    ["verified", String(report.verified)],
    ["hallucination", report.hallucination_detected ? "detected" : "none found"],
    ["action", report.action],
    ["spans", String(report.span_count ?? 0)],
    ["tenant", (report.policy && report.policy.tenant) || "default"],
    ["policy", report.policy ? report.policy.action : "–"],
  ];
  if (report.final) {
    facts.push(["full depth", `${fmt(report.final.score)} at layer ${report.final.exit_layer}`
                              + (report.final.hallucinated ? " · flagged" : "")]);
  }
  if ((report.missed_by_shallow || []).length) {
    facts.push(["missed by shallow", report.missed_by_shallow.join(", ")]);
  }
  const arrived = new Map(sentences.filter((e) => e.verdict)
                                   .map((e) => [e.verdict.index, e]));
  const rows = (report.sentences || []).map((s) => {
    const seen = arrived.get(s.index);
    const latency = seen && typeof seen.verdict.latency_ms === "number"
      ? `${Math.round(seen.verdict.latency_ms)} ms` : "–";
    const at = seen ? `+${(seen.arrivedMs / 1000).toFixed(2)} s` : "–";
    const why = s.explanation ? `${s.explanation.kind} (${s.explanation.severity})`
      : s.claim === false ? "no claim" : s.skipped === "language" ? "other language" : "";
    const final = s.final ? fmt(s.final.score) + (s.final.hallucinated ? " flagged" : "")
                            + (s.final.missed_by_shallow ? " (missed)" : "") : "–";
    return el("tr", { class: `r-${s.action}` },
              el("td", { text: String(s.index) }), el("td", { class: "act", text: s.action }),
              el("td", { text: s.checked === false ? "unchecked" : fmt(s.score) }),
              el("td", { text: String(s.exit_layer ?? "–") }), el("td", { text: why }),
              el("td", { text: latency }), el("td", { text: at }), el("td", { text: final }),
              el("td", { class: "released", text: s.released }));
  });
  const head = ["#", "action", "score", "exit", "why", "check", "arrived", "full depth",
                "client received"].map((h) => el("th", { text: h }));
  const errors = (report.errors || []).map((e) => el("li", { text: e }));
  return el("details", { class: "report", open: true },
            el("summary", {}, el("b", { text: "guardrail report" }),
               ...facts.map(([k, v]) => el("span", { class: "fact" }, el("i", { text: k }), ` ${v}`))),
            el("table", {}, el("thead", {}, el("tr", {}, ...head)), el("tbody", {}, ...rows)),
            errors.length ? el("ul", { class: "errors" }, ...errors) : null);
}
