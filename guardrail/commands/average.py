"""Command: `guardrail train average` — a detector and the one a further training run made
of it, averaged weight by weight (``guardrail.train.average``)."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def register(train_app: typer.Typer) -> None:
    @train_app.command("average")
    def average_cmd(
        start: Path = typer.Argument(..., help="The detector the training run started from; "
                                     "its tokenizer, thresholds and judge are kept."),
        tuned: Path = typer.Argument(..., help="The detector the run produced."),
        out: Path = typer.Option(..., "--out", help="Directory to save the average to."),
        alpha: float = typer.Option(0.5, help="The tuned model's share: 0 is START, 1 TUNED."),
    ) -> None:
        """Average two detectors' weights (WiSE-FT), with START's other files.

        The average keeps more of what START did on the data it was trained on, and part
        of what TUNED learnt since."""
        from guardrail.train.average import average

        for path in (start, tuned):
            if not path.is_dir():
                raise typer.BadParameter(f"{path} is not a directory")
        try:
            record = average(start, tuned, out, alpha)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
        typer.echo(json.dumps({"out": str(out), **record}))
