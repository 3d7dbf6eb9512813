// guardrail copilot chat: the page's state and controls.  stream.js talks to the
// server, view.js draws an answer; this file keeps the conversation and the settings.
import { HttpError, streamChat } from "./stream.js";
import { AnswerView, el, prettyJson, toolCard } from "./view.js";

const $ = (id) => document.getElementById(id);

const state = {
  messages: [],          // the conversation as sent: user / assistant (tool_calls) / tool
  controller: null,      // AbortController of the answer streaming now
  calls: 0,              // tool call ids: call_1, call_2, ...
};

// -- settings ---------------------------------------------------------------------------

function endpoint() {
  return $("endpoint").value.trim().replace(/\/+$/, "");
}

function apiKey() {
  const tenant = $("tenant").value;
  return tenant === "__custom" ? $("api-key").value.trim() : tenant;
}

// Tenants for the picker come from the page's address: #tenants=name:key,name:key
// (guardrail never lists keys; the demo prints such an address).  The fragment is
// never sent to a server.
function loadTenants() {
  const match = /(?:^|[#&])tenants=([^&]*)/.exec(location.hash);
  if (!match) return;
  const custom = $("tenant").lastElementChild;
  for (const pair of decodeURIComponent(match[1]).split(",")) {
    const at = pair.indexOf(":");
    if (at > 0) custom.before(el("option", { value: pair.slice(at + 1), text: pair.slice(0, at) }));
  }
}

async function loadModels() {
  try {
    const headers = apiKey() ? { authorization: `Bearer ${apiKey()}` } : {};
    const r = await fetch(`${endpoint()}/models`, { headers });
    if (!r.ok) return;
    const ids = ((await r.json()).data || []).map((m) => m.id).filter(Boolean);
    $("models").replaceChildren(...ids.map((id) => el("option", { value: id })));
    if (!$("model").value && ids.length) $("model").value = ids[0];
  } catch (e) { /* no model list: the user types one */ }
}

function setStatus(text, kind = "") {
  $("status").textContent = text;
  $("status").className = `status ${kind}`;
}

// -- documents, tool editor, extra JSON ---------------------------------------------------

function addDocument(text = "") {
  const area = el("textarea", { rows: 5, spellcheck: "false", "aria-label": "document" });
  area.value = text;
  const row = el("div", { class: "doc" }, area,
                 el("button", { type: "button", class: "ghost small", title: "remove",
                                text: "✕", onclick: () => row.remove() }));
  $("documents").append(row);
}

function documents() {
  return [...document.querySelectorAll("#documents textarea")].map((a) => a.value)
    .filter((d) => d.trim());
}

function showTool(tool) {
  $("tool-editor").hidden = !tool;
  $("tool-add").hidden = !!tool;
  if (!tool) return;
  $("tool-name").value = tool.name || "";
  $("tool-args").value = typeof tool.arguments === "string" ? tool.arguments
    : JSON.stringify(tool.arguments || {});
  $("tool-result").value = typeof tool.result === "string" ? tool.result
    : JSON.stringify(tool.result ?? {}, null, 2);
  checkTool();
}

// The composer's tool call, validated: {name, arguments, result} or an error string.
function composedTool() {
  if ($("tool-editor").hidden) return null;
  const name = $("tool-name").value.trim();
  const args = $("tool-args").value.trim() || "{}";
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) return "the tool name must be 1-64 letters, digits, _ or -";
  try {
    JSON.parse(args);
  } catch (e) {
    return `the tool arguments are not JSON: ${e.message}`;
  }
  if (!$("tool-result").value.trim()) return "the tool result is empty";
  return { name, arguments: args, result: $("tool-result").value };
}

function checkTool() {
  const tool = composedTool();
  let note = typeof tool === "string" ? tool : "";
  if (!note && tool) {
    try {
      JSON.parse(tool.result);
      note = "JSON result ✓ (sent as the tool message, checked as grounding)";
    } catch (e) {
      note = "the result is not JSON: it is sent as plain text";
    }
  }
  $("tool-check").textContent = note;
  $("tool-check").className = typeof tool === "string" ? "hint bad" : "hint";
}

function extraBody() {
  const text = $("extra").value.trim();
  if (!text) return {};
  const value = JSON.parse(text);
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new SyntaxError("must be a JSON object");
  }
  return value;
}

function checkExtra() {
  try {
    extraBody();
    $("extra-check").textContent = "";
  } catch (e) {
    $("extra-check").textContent = `not sent: ${e.message}`;
  }
  $("extra-check").className = "hint bad";
}

// -- the conversation -------------------------------------------------------------------

function showUser(text, tool) {
  $("empty")?.remove();
  const turn = el("div", { class: "turn user" }, el("div", { class: "who", text: "you" }));
  if (text) turn.append(el("div", { class: "bubble", text }));
  const nodes = [turn];
  if (tool) nodes.push(toolCard(tool.name, tool.arguments, tool.result));
  $("transcript").append(...nodes);
  return nodes;
}

function request() {
  const ext = {};
  const docs = documents();
  if (docs.length) ext.context = docs;
  if ($("action").value) ext.policy = { action: $("action").value };
  if ($("events").checked) ext.sentence_events = true;   // off: verdicts come with the report
  const extra = extraBody();
  const body = { model: $("model").value.trim(), stream: true, messages: state.messages, ...extra };
  if (extra.guardrail && typeof extra.guardrail === "object") Object.assign(ext, extra.guardrail);
  if (Object.keys(ext).length) body.guardrail = ext;
  return body;
}

function scrollDown() {
  const t = $("transcript");
  if (t.scrollHeight - t.scrollTop - t.clientHeight < 200) t.scrollTop = t.scrollHeight;
}

// Send the conversation and stream the answer into a new AnswerView.  `undo`: how many
// messages this turn added, taken back if the server refuses the request (`shown`: their
// nodes in the transcript, marked as not sent).
async function answer(undo, shown = []) {
  let body;
  try {
    body = request();
  } catch (e) {  // the extra body JSON does not parse: nothing is sent
    $("debug").open = true;
    checkExtra();
    refused(new HttpError(0, { message: `not sent: the extra body JSON is invalid (${e.message})` }),
            undo, shown);
    return false;
  }
  const view = new AnswerView($("transcript"));
  const calls = [];
  let report = null;
  let finish = null;
  let refusedNow = false;
  state.controller = new AbortController();
  setBusy(true);
  setStatus("streaming…", "busy");
  const on = {
    start: (info) => view.started(info),
    content: (text, event) => { view.content(text, event); scrollDown(); },
    toolCall: (i, d) => {
      const c = calls[i] || (calls[i] = { id: d.id, type: "function", function: { name: "", arguments: "" } });
      if (d.id) c.id = d.id;
      if (d.function?.name) c.function.name += d.function.name;
      if (d.function?.arguments) c.function.arguments += d.function.arguments;
    },
    finish: (reason, r) => { finish = reason; report = r || report; },
    error: (err, r) => {
      const kind = [err.type, err.code].filter(Boolean).join(" · ");
      view.failed("The answer stopped: the server reported an error.",
                  `${err.message || "unknown error"}${kind ? ` (${kind})` : ""}`, r);
      finish = "error";
    },
  };
  try {
    const end = await streamChat(`${endpoint()}/chat/completions`, body, apiKey(),
                                 state.controller.signal, on);
    if (finish !== "error") {
      if (finish || report) view.finished(finish, report);
      if (end === "closed" || (!finish && !report)) {
        view.failed("The connection closed before the answer was complete.", "", null);
      }
    }
    setStatus(finish === "error" ? "error" : "ready", finish === "error" ? "bad" : "");
  } catch (e) {
    if (e instanceof HttpError) {
      view.node.remove();
      refused(e, undo, shown);
      refusedNow = true;
    } else if (e.name === "AbortError") {
      view.failed("Stopped.", "You cancelled the answer; guardrail dropped the upstream request.", null);
      setStatus("stopped");
    } else {
      view.failed("Could not reach the endpoint.", `${e.message} (${endpoint()})`, null);
      setStatus("unreachable", "bad");
    }
  } finally {
    state.controller = null;
    setBusy(false);
  }
  if (refusedNow) return false;
  const calledTools = calls.filter(Boolean);
  if (view.text || calledTools.length) {
    const msg = { role: "assistant", content: view.text || null };
    if (calledTools.length) msg.tool_calls = calledTools;
    state.messages.push(msg);
  }
  if (calledTools.length && finish === "tool_calls") askToolResults(view, calledTools);
  scrollDown();
  return true;
}

// A 4xx/5xx before the stream began: nothing reached the LLM; the turn is taken back.
function refused(e, undo, shown) {
  const taken = state.messages.splice(state.messages.length - undo, undo);
  const user = taken.find((m) => m.role === "user");
  if (user && !$("prompt").value) $("prompt").value = user.content;
  for (const node of shown) node.classList.add("refused");
  $("transcript").append(el("div", { class: "banner error", role: "alert" },
    el("b", { text: e.status ? `HTTP ${e.status}${e.type ? ` · ${e.type}` : ""}${e.code ? ` · ${e.code}` : ""}`
                             : "Not sent" }),
    el("span", { text: e.message }),
    el("span", { class: "muted", text: "Nothing was sent to the LLM; your message is back in the composer." })));
  setStatus(e.status ? `HTTP ${e.status}` : "not sent", "bad");
}

// The LLM asked for tools: show each call with a result editor, then continue.
function askToolResults(view, calls) {
  const editors = calls.map((c) => {
    const area = el("textarea", { rows: 4, spellcheck: "false", "aria-label": `result of ${c.function.name}`,
                                  placeholder: "the tool's result (JSON)" });
    return { call: c, area };
  });
  const go = el("button", { type: "button", class: "primary small", text: "Send tool results" });
  const card = el("div", { class: "tool-card ask" },
                  el("div", { class: "muted", text: "The assistant called tools; give their results:" }),
                  ...editors.map(({ call, area }) => el("div", { class: "ask-call" },
                    el("code", { text: `${call.function.name}(${call.function.arguments})` }), area)),
                  go);
  view.tail.append(card);
  go.addEventListener("click", async () => {
    if (state.controller) return;
    card.remove();
    const shown = editors.map(({ call, area }) => {
      state.messages.push({ role: "tool", tool_call_id: call.id, content: area.value });
      return toolCard(call.function.name, call.function.arguments, area.value);
    });
    $("transcript").append(...shown);
    await answer(editors.length, shown);
  });
}

async function send(event) {
  event?.preventDefault();
  if (state.controller) return;
  const text = $("prompt").value.trim();
  const tool = composedTool();
  if (typeof tool === "string") {
    checkTool();
    return;
  }
  if (!text && !tool) return;
  const added = [{ role: "user", content: text }];
  if (tool) {
    const id = `call_${++state.calls}`;
    added.push({ role: "assistant", content: null, tool_calls: [
      { id, type: "function", function: { name: tool.name, arguments: tool.arguments } }] });
    added.push({ role: "tool", tool_call_id: id, content: tool.result });
  }
  state.messages.push(...added);
  const shown = showUser(text, tool);
  $("prompt").value = "";
  showTool(null);
  await answer(added.length, shown);
}

function setBusy(busy) {
  $("send").disabled = busy;
  $("stop").disabled = !busy;
  document.body.classList.toggle("busy", busy);
}

function newChat() {
  if (state.controller) state.controller.abort();
  state.messages = [];
  $("transcript").replaceChildren(el("div", { class: "empty", id: "empty" },
    el("h1", { text: "New chat" }), el("p", { text: "Ask a question with grounding, or pick an example." })));
  setStatus("ready");
}

async function loadExamples() {
  let examples = [];
  try {
    const r = await fetch("examples.json");
    if (r.ok) examples = await r.json();
  } catch (e) { /* no examples */ }
  if (!examples.length) return;
  $("examples").replaceChildren(...examples.map((ex, i) => el("button", {
    type: "button", class: "example", title: ex.about || "",
    onclick: () => useExample(ex),
  }, el("b", { text: `${i + 1}. ${ex.title}` }), el("span", { text: ex.about || "" }))));
}

function useExample(ex) {
  $("prompt").value = ex.prompt || "";
  showTool(ex.tool || null);
  if (Array.isArray(ex.documents)) {
    $("documents").replaceChildren();
    ex.documents.forEach((d) => addDocument(d));
  }
  if (ex.action !== undefined) $("action").value = ex.action;
  $("prompt").focus();
}

function init() {
  $("endpoint").value = new URL("../v1", location.href).href;
  loadTenants();
  $("composer").addEventListener("submit", send);
  $("prompt").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) send(e);
  });
  $("stop").addEventListener("click", () => state.controller?.abort());
  $("tool-add").addEventListener("click", () => showTool({ name: "", arguments: "{}", result: "" }));
  $("tool-remove").addEventListener("click", () => showTool(null));
  for (const id of ["tool-name", "tool-args", "tool-result"]) $(id).addEventListener("input", checkTool);
  $("extra").addEventListener("input", checkExtra);
  $("doc-add").addEventListener("click", () => addDocument());
  $("new-chat").addEventListener("click", newChat);
  $("tenant").addEventListener("change", () => {
    $("key-row").hidden = $("tenant").value !== "__custom";
  });
  $("endpoint").addEventListener("change", loadModels);
  $("tool-result").addEventListener("blur", () => {
    $("tool-result").value = prettyJson($("tool-result").value);
  });
  loadModels();
  loadExamples();
  document.body.dataset.ready = "true";
}

init();
