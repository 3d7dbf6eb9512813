"""Counts given on the command line: a negative (or, where it means nothing, zero) number of
examples, answers or turns is refused before any data is read or any model loads."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from guardrail.cli import app


@pytest.mark.parametrize("args", [
    ["eval", "--limit", "-1", "--data", "x.json"],
    ["eval", "--limit", "0", "--data", "x.json"],
    ["judge", "eval", "--limit", "-3", "--data", "x.jsonl"],
    ["judge", "fit", "--limit", "-3", "--data", "x.jsonl", "--out", "x"],
    ["bench", "verdicts", "--limit", "-1"],
    ["bench", "quality", "--limit", "-1"],
    ["bench", "all", "--quality-limit", "0"],
    ["data", "toolctx", "--n", "0", "--out", "x.jsonl"],
])
def test_a_count_below_its_range_is_a_usage_error_naming_the_option(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may be written, but never into the checkout
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    option = next(a for a in args if a.startswith("--"))
    said = " ".join(result.output.replace("│", " ").split())
    assert f"Invalid value for '{option}': Input should be greater than or equal to" in said
    assert not list(tmp_path.iterdir())
