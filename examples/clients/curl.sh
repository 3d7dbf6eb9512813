#!/usr/bin/env bash
# curl through guardrail: the demo conversation streamed (-N: each event as it arrives),
# then not streamed, each with its response headers (-D -: the x-guardrail-* ones).
#   bash examples/clients/curl.sh
# The streamed report is the `guardrail` field of the event with a finish_reason; the
# non-streamed one is the body's `guardrail` field, its summary in the headers.
set -euo pipefail
GUARDRAIL_URL=${GUARDRAIL_URL:-http://127.0.0.1:8080/v1}
API_KEY=${GUARDRAIL_API_KEY:-client-key}   # guardrail's key, not the LLM's
MODEL=${GUARDRAIL_MODEL:-fake-llm}

body() {  # $1: stream, true or false
  cat <<JSON
{"model": "$MODEL", "stream": $1,
 "messages": [
  {"role": "user", "content": "When was the Eiffel Tower built, and how tall is it?"},
  {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
   "function": {"name": "search", "arguments": "{\"query\": \"Eiffel Tower\"}"}}]},
  {"role": "tool", "tool_call_id": "call_1", "content": "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It was designed and built by the company of Gustave Eiffel from 1887 to 1889 as the centrepiece of the 1889 World's Fair. The tower is 330 metres tall."}],
 "guardrail": {"policy": {"action": "redact"}}}
JSON
}

chat() {  # $1: stream
  curl -sS -N --fail-with-body -D - "$GUARDRAIL_URL/chat/completions" \
    -H "authorization: Bearer $API_KEY" -H "content-type: application/json" \
    -d "$(body "$1")"
}

echo "=== streaming"
chat true
echo "=== non-streaming"
chat false
echo
