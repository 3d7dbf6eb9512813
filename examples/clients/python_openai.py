"""The openai Python SDK streaming through guardrail: only ``base_url`` changes.

    python examples/clients/python_openai.py           # sync
    python examples/clients/python_openai.py --async   # the same with AsyncOpenAI

The grounding is a JSON tool result (an assistant turn with ``tool_calls``, then the
``role: tool`` message); ``extra_body`` carries guardrail's request extension.  The text
printed is what guardrail released; the report rides on the finish chunk.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from openai import AsyncOpenAI, OpenAI

GUARDRAIL_URL = os.environ.get("GUARDRAIL_URL", "http://127.0.0.1:8080/v1")
API_KEY = os.environ.get("GUARDRAIL_API_KEY", "client-key")  # guardrail's key, not the LLM's
MODEL = os.environ.get("GUARDRAIL_MODEL", "fake-llm")

SEARCH_RESULT = {"name": "Eiffel Tower", "type": "wrought-iron lattice tower",
                 "location": "Champ de Mars, Paris, France",
                 "construction": {"start": 1887, "end": 1889},
                 "builder": "company of Gustave Eiffel", "height_m": 330}
MESSAGES = [
    {"role": "user", "content": "When was the Eiffel Tower built, and how tall is it?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "search", "arguments": '{"query": "Eiffel Tower"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(SEARCH_RESULT)},
]
GUARDRAIL = {"policy": {"action": "redact"}}  # release | annotate | redact | regenerate | block


def report_of(chunk) -> dict | None:
    """guardrail's report: an extra field of the finish chunk, kept in ``model_extra``."""
    return (chunk.model_extra or {}).get("guardrail")


def show(report: dict) -> None:
    print("\n--- guardrail report")
    print(f"action: {report['action']}  hallucination_detected: "
          f"{report['hallucination_detected']}")
    for s in report["sentences"]:
        if s["action"] != "release":
            print(f"{s['action']}: {s['original'].strip()!r} -> {s['released'].strip()!r}")


def main() -> None:
    client = OpenAI(base_url=GUARDRAIL_URL, api_key=API_KEY)
    stream = client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True,
                                            extra_body={"guardrail": GUARDRAIL})
    report = None
    for chunk in stream:
        if chunk.choices:
            print(chunk.choices[0].delta.content or "", end="", flush=True)
        report = report_of(chunk) or report
    show(report)


async def amain() -> None:
    client = AsyncOpenAI(base_url=GUARDRAIL_URL, api_key=API_KEY)
    stream = await client.chat.completions.create(model=MODEL, messages=MESSAGES,
                                                  stream=True,
                                                  extra_body={"guardrail": GUARDRAIL})
    report = None
    async for chunk in stream:
        if chunk.choices:
            print(chunk.choices[0].delta.content or "", end="", flush=True)
        report = report_of(chunk) or report
    show(report)


if __name__ == "__main__":
    if "--async" in sys.argv[1:]:
        asyncio.run(amain())
    else:
        main()
