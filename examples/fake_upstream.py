"""Run the scripted fake OpenAI-compatible LLM server on its own.

    python examples/fake_upstream.py --script examples/demo.yaml --port 8000
    guardrail serve --upstream http://127.0.0.1:8000/v1

Then point any OpenAI client at guardrail (default http://127.0.0.1:8080/v1) and send
the conversation from demo.yaml.  Per-request failure modes (for trying error paths):
add ``"fake": {"mode": "cut" | "malformed" | "end" | "hang" | "error", ...}`` to the
request body; see guardrail/testing/fake_upstream.py.
"""

from __future__ import annotations

import argparse

import uvicorn

from guardrail.testing.fake_upstream import DEMO, FakeScript, create_fake_upstream


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", help="YAML with an `upstream:` section (default: the demo)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--delay", type=float, help="seconds between streamed pieces")
    args = parser.parse_args()
    script = FakeScript.from_yaml(args.script) if args.script else \
        FakeScript.from_dict(DEMO["upstream"])
    if args.delay is not None:
        script.token_delay_s = args.delay
    uvicorn.run(create_fake_upstream(script), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
