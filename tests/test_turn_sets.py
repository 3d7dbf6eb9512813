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


def _hand_judge():
    spec = importlib.util.spec_from_file_location("hand_judge", ROOT / "scripts" / "hand_judge.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_detector_saw_no_hand_written_set_it_is_measured_on():
    """The default model was trained on the sets of part A alone (docs/model-card.md,
    "v6-H2"): no example of a set of B or C, which its numbers are measured on, is in
    the training or calibration data its guardrail.json records, and every set of A is."""
    parts = _hand_judge().parts()
    assert len(parts["A"]) == 90 and {"turns-et", "turns-eu"} <= {
        Path(p).stem for p in parts["C"]}
    meta = json.loads((ROOT / "guardrail" / "models" / "default" / "guardrail.json").read_text())
    seen = {name.split("/")[0] for part in ("train", "calib")
            for name in meta["training"][part]["by_dataset"]}

    def family(path):  # a set's rows name their family: "paraphrases-b/changed" ...
        return json.loads(Path(path).read_text().splitlines()[0])["dataset"].split("/")[0]

    held = {family(p) for p in parts["B"] + parts["C"]}
    assert held and not held & seen
    assert {family(p) for p in parts["A"]} <= seen
