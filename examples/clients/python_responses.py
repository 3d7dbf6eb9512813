"""The openai Python SDK's Responses API streaming through guardrail (``POST
/v1/responses``): only ``base_url`` changes.

    python examples/clients/python_responses.py

The grounding is a JSON tool result (a ``function_call`` item, then its
``function_call_output``).  The text printed is what guardrail released, from the
``response.output_text.delta`` events; the report rides on ``response.completed``.
"""

from __future__ import annotations

import json
import os

from openai import OpenAI

GUARDRAIL_URL = os.environ.get("GUARDRAIL_URL", "http://127.0.0.1:8080/v1")
API_KEY = os.environ.get("GUARDRAIL_API_KEY", "client-key")  # guardrail's key, not the LLM's
MODEL = os.environ.get("GUARDRAIL_MODEL", "fake-llm")

SEARCH_RESULT = {"name": "Eiffel Tower", "type": "wrought-iron lattice tower",
                 "location": "Champ de Mars, Paris, France",
                 "construction": {"start": 1887, "end": 1889},
                 "builder": "company of Gustave Eiffel", "height_m": 330}
INPUT = [
    {"role": "user", "content": "When was the Eiffel Tower built, and how tall is it?"},
    {"type": "function_call", "call_id": "call_1", "name": "search",
     "arguments": '{"query": "Eiffel Tower"}'},
    {"type": "function_call_output", "call_id": "call_1", "output": json.dumps(SEARCH_RESULT)},
]


def main() -> None:
    client = OpenAI(base_url=GUARDRAIL_URL, api_key=API_KEY)
    stream = client.responses.create(model=MODEL, input=INPUT, stream=True,
                                     extra_body={"guardrail": {"policy": {"action": "redact"}}})
    report = None
    for event in stream:
        if event.type == "response.output_text.delta":
            print(event.delta, end="", flush=True)
        elif event.type == "response.completed":
            report = (event.model_extra or {}).get("guardrail")
    print("\n--- guardrail report")
    print(f"action: {report['action']}  hallucination_detected: "
          f"{report['hallucination_detected']}")
    for s in report["sentences"]:
        if s["action"] != "release":
            print(f"{s['action']}: {s['original'].strip()!r} -> {s['released'].strip()!r}")


if __name__ == "__main__":
    main()
