// The wire: POST /chat/completions with stream: true, read the body as it arrives and
// cut it into Server-Sent Events ourselves (EventSource cannot POST).  No DOM here.

export class SSEParser {
  // Incremental: feed() takes any slice of the decoded stream and returns the data of
  // every event it completes; a partial line waits for the next slice.
  constructor() {
    this.buffer = "";
    this.data = [];
  }

  feed(text) {
    this.buffer += text;
    // a trailing "\r" may be the first half of "\r\n": keep it for the next slice
    const cut = this.buffer.endsWith("\r") ? this.buffer.length - 1 : this.buffer.length;
    const lines = this.buffer.slice(0, cut).split(/\r\n|\r|\n/);
    this.buffer = lines.pop() + this.buffer.slice(cut);
    const events = [];
    for (const line of lines) {
      if (line === "") {                       // a blank line ends an event
        if (this.data.length) events.push(this.data.join("\n"));
        this.data = [];
      } else if (!line.startsWith(":")) {      // ":" lines are comments (keep-alive pings)
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "data") this.data.push(value);
      }
    }
    return events;
  }
}

export class HttpError extends Error {
  // A non-2xx answer; guardrail's errors are {"error": {"message", "type", "code"}}.
  constructor(status, error) {
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.type = error.type || "";
    this.code = error.code ?? "";
  }
}

async function errorOf(response) {
  const text = await response.text();
  try {
    const body = JSON.parse(text);
    if (body && typeof body.error === "object" && body.error) return new HttpError(response.status, body.error);
  } catch (e) { /* not JSON: show the text */ }
  return new HttpError(response.status, { message: text.slice(0, 500) || response.statusText });
}

// Stream one chat completion.  `on` receives:
//   start({verified, streamId})                 the response headers arrived
//   content(text, sentenceEvent | null)         choice 0 text, with guardrail.sentence if sent
//   toolCall(index, delta)                      a tool_calls delta of choice 0
//   finish(reason, report | null)               choice 0's finish chunk (report on it)
//   error(error, report | null)                 a mid-stream {"error": ...} event
// Resolves "done" after [DONE], "closed" when the body ended without it; rejects with
// HttpError (4xx/5xx), a TypeError (network) or an AbortError (stop button).
export async function streamChat(url, body, apiKey, signal, on) {
  const headers = { "content-type": "application/json", accept: "text/event-stream" };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body), signal });
  if (!response.ok) throw await errorOf(response);
  on.start({ verified: response.headers.get("x-guardrail-verified"),
             streamId: response.headers.get("x-guardrail-stream-id") });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const parser = new SSEParser();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return "closed";
    for (const data of parser.feed(decoder.decode(value, { stream: true }))) {
      if (data === "[DONE]") {
        reader.cancel().catch(() => {});
        return "done";
      }
      dispatch(data, on);
    }
  }
}

function dispatch(data, on) {
  let chunk;
  try {
    chunk = JSON.parse(data);
  } catch (e) {
    on.error({ message: "the server sent an event that is not JSON", code: "bad_event" }, null);
    return;
  }
  const report = chunk.guardrail && !chunk.guardrail.sentence ? chunk.guardrail : null;
  if (chunk.error) {
    on.error(chunk.error, report);
    return;
  }
  const choice = (chunk.choices || []).find((c) => (c.index ?? 0) === 0);
  if (!choice) {
    if (report) on.finish(null, report);       // a report without a choice-0 chunk
    return;
  }
  const delta = choice.delta || {};
  const sentence = (chunk.guardrail && chunk.guardrail.sentence) || null;
  const text = typeof delta.content === "string" ? delta.content : "";
  if (text || sentence) on.content(text, sentence);
  for (const call of delta.tool_calls || []) on.toolCall(call.index ?? 0, call);
  if (choice.finish_reason) on.finish(choice.finish_reason, report);
}
