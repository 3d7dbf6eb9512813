"""`guardrail serve | demo | check | train | eval | judge | bench`.

Each command group lives in its own module under ``guardrail/commands/`` and
registers itself on the one Typer app; heavy imports (torch) happen inside the
commands, so ``guardrail --help`` stays fast.
"""

from __future__ import annotations

import typer

from guardrail.commands import (average, bench, compare, data, detector, judge, long_context,
                                proxy)
from guardrail.errors import GuardrailError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Streaming hallucination guardrail for OpenAI-compatible LLM servers.")

for module in (proxy, detector, long_context, judge, data, bench):
    module.register(app)
average.register(next(g.typer_instance for g in app.registered_groups if g.name == "train"))
compare.register(next(g.typer_instance for g in app.registered_groups if g.name == "bench"))


def main() -> None:
    try:
        app()
    except GuardrailError as exc:  # a clear message, not a traceback
        typer.echo(f"error: {exc.message}", err=True)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
