"""Command: `guardrail bench compare` — two sets of `guardrail bench verdicts` runs over the
same answers: what each released, and A - B with its paired bootstrap interval
(``guardrail.train.compare``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer


def register(bench_app: typer.Typer) -> None:
    @bench_app.command("compare")
    def compare_cmd(
        run: list[str] = typer.Option(..., "--run", help="A `bench verdicts` --out folder "
                                      "of the candidate (A); repeatable, e.g. one per set."),
        against: list[str] = typer.Option(..., "--against", help="A folder of the model "
                                          "or settings to compare with (B), over the same "
                                          "answers; repeatable."),
        resamples: int = typer.Option(1000, min=100, help="Bootstrap resamples of the "
                                      "answers."),
        seed: int = typer.Option(0, help="Seed of the resampling."),
        out: Optional[Path] = typer.Option(None, help="Write the comparison JSON here."),
    ) -> None:
        """Streamed runs compared answer by answer: supported kept, unsupported stopped,
        stop F1 and example F1 of each, and A - B with its 95 % paired bootstrap interval
        over the answers."""
        from guardrail.train.compare import compare, format_compare, pair, streamed

        try:
            (rows_a, decide_a), (rows_b, decide_b) = streamed(run), streamed(against)
            paired = pair(rows_a, rows_b)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
        result = compare(paired, decide_a, decide_b, resamples, seed)[0]
        typer.echo(format_compare({"streamed": result}, ", ".join(run), ", ".join(against)))
        if out:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps({"a": run, "b": against, "resamples": resamples,
                                       "seed": seed, "groups": result}, indent=2) + "\n")
