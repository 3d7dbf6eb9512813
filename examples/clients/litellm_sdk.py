"""LiteLLM's SDK streaming through guardrail: ``api_base`` is guardrail, the model
``openai/<model>`` (guardrail speaks the OpenAI API).

    python examples/clients/litellm_sdk.py       # in .venv-examples (scripts/setup-examples)

The report rides on the finish chunk (LiteLLM keeps the extra ``guardrail`` field); the
``x-guardrail-stream-id`` header, for ``GET /v1/guardrail/reports/{id}``, is in
``response._hidden_params["additional_headers"]["llm_provider-x-guardrail-stream-id"]``.
"""

from __future__ import annotations

import os

import litellm

GUARDRAIL_URL = os.environ.get("GUARDRAIL_URL", "http://127.0.0.1:8080/v1")
API_KEY = os.environ.get("GUARDRAIL_API_KEY", "client-key")  # guardrail's key, not the LLM's
MODEL = os.environ.get("GUARDRAIL_MODEL", "fake-llm")

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
    response = litellm.completion(model=f"openai/{MODEL}", api_base=GUARDRAIL_URL,
                                  api_key=API_KEY, messages=MESSAGES, stream=True,
                                  extra_body={"guardrail": {"policy": {"action": "redact"}}})
    report = None
    for chunk in response:
        print(chunk.choices[0].delta.content or "", end="", flush=True)
        report = getattr(chunk, "guardrail", None) or report
    print("\n--- guardrail report")
    print(f"action: {report['action']}  hallucination_detected: "
          f"{report['hallucination_detected']}")
    for s in report["sentences"]:
        if s["action"] != "release":
            print(f"{s['action']}: {s['original'].strip()!r} -> {s['released'].strip()!r}")


if __name__ == "__main__":
    main()
