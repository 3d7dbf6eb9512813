"""`guardrail serve | demo | check | train | eval | bench`.

Each command group lives in its own module under ``guardrail/commands/`` and
registers itself on the one Typer app; heavy imports (torch) happen inside the
commands, so ``guardrail --help`` stays fast.
"""

from __future__ import annotations

import typer

from guardrail.commands import bench, detector, proxy

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Streaming hallucination guardrail for OpenAI-compatible LLM servers.")

for module in (proxy, detector, bench):
    module.register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
