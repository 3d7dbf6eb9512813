"""An app calling LiteLLM's proxy, which routes to guardrail (config.yaml):

    app --> LiteLLM proxy (:4000) --> guardrail (:8080) --> the LLM

    export GUARDRAIL_URL=http://127.0.0.1:8080/v1 GUARDRAIL_API_KEY=client-key \\
           LITELLM_MASTER_KEY=sk-$(openssl rand -hex 32)
    litellm --config examples/clients/litellm_proxy/config.yaml --host 127.0.0.1 --port 4000 &
    python examples/clients/litellm_proxy/client.py

LiteLLM passes guardrail's request extension on, and the report back on the finish
chunk; guardrail's headers come back prefixed ``llm_provider-``.
"""

from __future__ import annotations

import os

from openai import OpenAI

LITELLM_URL = os.environ.get("LITELLM_URL", "http://127.0.0.1:4000/v1")
API_KEY = os.environ["LITELLM_MASTER_KEY"]  # or a virtual key LiteLLM issued
MODEL = os.environ.get("LITELLM_MODEL", "fake-llm")  # a model_name of config.yaml

TOOL_RESULT = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in "
               "Paris, France. It was designed and built by the company of Gustave Eiffel "
               "from 1887 to 1889 as the centrepiece of the 1889 World's Fair. The tower is "
               "330 metres tall.")
MESSAGES = [
    {"role": "user", "content": "When was the Eiffel Tower built, and how tall is it?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "search", "arguments": '{"query": "Eiffel Tower"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": TOOL_RESULT},
]


def main() -> None:
    client = OpenAI(base_url=LITELLM_URL, api_key=API_KEY)
    raw = client.chat.completions.with_raw_response.create(
        model=MODEL, messages=MESSAGES, stream=True,
        extra_body={"guardrail": {"policy": {"action": "redact"}}})
    print(f"stream id: {raw.headers.get('llm_provider-x-guardrail-stream-id')}")
    report = None
    for chunk in raw.parse():
        if chunk.choices:
            print(chunk.choices[0].delta.content or "", end="", flush=True)
        report = (chunk.model_extra or {}).get("guardrail") or report
    print("\n--- guardrail report")
    print(f"action: {report['action']}  hallucination_detected: "
          f"{report['hallucination_detected']}")
    for s in report["sentences"]:
        if s["action"] != "release":
            print(f"{s['action']}: {s['original'].strip()!r} -> {s['released'].strip()!r}")


if __name__ == "__main__":
    main()
