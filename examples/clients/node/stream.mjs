// The openai Node SDK streaming through guardrail: only baseURL changes.
//
//   cd examples/clients/node && npm ci && node stream.mjs
//
// The grounding is the tool result (an assistant turn with tool_calls, then the
// role: "tool" message). The text printed is what guardrail released; the report rides
// on the last chunk that has a finish_reason.
import OpenAI from "openai";

const client = new OpenAI({
  baseURL: process.env.GUARDRAIL_URL ?? "http://127.0.0.1:8080/v1",
  apiKey: process.env.GUARDRAIL_API_KEY ?? "client-key", // guardrail's key, not the LLM's
});
const model = process.env.GUARDRAIL_MODEL ?? "fake-llm";

const searchResult = {
  name: "Eiffel Tower", type: "wrought-iron lattice tower",
  location: "Champ de Mars, Paris, France", construction: { start: 1887, end: 1889 },
  builder: "company of Gustave Eiffel", height_m: 330,
};
const messages = [
  { role: "user", content: "When was the Eiffel Tower built, and how tall is it?" },
  { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function",
    function: { name: "search", arguments: '{"query": "Eiffel Tower"}' } }] },
  { role: "tool", tool_call_id: "call_1", content: JSON.stringify(searchResult) },
];

const stream = await client.chat.completions.create({
  model, messages, stream: true,
  guardrail: { policy: { action: "redact" } }, // guardrail's extension: sent as is
});
let report;
for await (const chunk of stream) {
  const choice = chunk.choices[0];
  process.stdout.write(choice?.delta?.content ?? "");
  if (choice?.finish_reason) report = chunk.guardrail; // the finish chunk carries it
}

console.log("\n--- guardrail report");
console.log(`action: ${report.action}  hallucination_detected: ${report.hallucination_detected}`);
for (const s of report.sentences) {
  if (s.action !== "release") {
    console.log(`${s.action}: ${JSON.stringify(s.original.trim())} -> ${JSON.stringify(s.released.trim())}`);
  }
}
