"""scripts/turn_sets.py: the newest hand-written sets of tool turns are cut where the
proxy cuts them, and the checker catches a set that is not."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETS = ROOT / "docs" / "model-card" / "paraphrases"


def _script():
    spec = importlib.util.spec_from_file_location("turn_sets", ROOT / "scripts" / "turn_sets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_newest_sets_are_cut_as_the_proxy_cuts_them():
    turn_sets = _script()
    for name in ("turns-ad", "turns-ae", "turns-af", "turns-ag"):
        assert turn_sets.check(str(SETS / f"{name}.jsonl")) == [], name


def test_a_row_made_by_make_turn_checks_and_a_moved_bound_does_not(tmp_path):
    turn_sets = _script()
    row = turn_sets.make_turn("t", 1, {"city": "Denver", "state": "CO"}, "Where?",
                              "It ships from Denver, CO. The box is 4 kg.", {1: "unverifiable"})
    assert [s["label"] for s in row["sentences"]] == ["supported", "unverifiable"]
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(row) + "\n")
    assert turn_sets.check(str(good)) == []
    row["sentences"][0]["end"] -= 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(row) + "\n")
    assert any("the proxy cuts" in e for e in turn_sets.check(str(bad)))
