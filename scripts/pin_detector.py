"""Write the shipped detector's outputs on fixed inputs to tests/data/detector_pins.json.

tests/test_detector_pins.py compares the detector against this file, so a refactor of
the model, its inputs or its windows that changes any output fails.  Regenerate only
when the output is meant to change (a new model version):

    .venv/bin/python scripts/pin_detector.py

The file records the sha256 of the weights it was made with; the test says so when
the shipped weights differ.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PINS = ROOT / "tests" / "data" / "detector_pins.json"

TOWER = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris. "
         "It was built from 1887 to 1889 by the company of Gustave Eiffel as the entrance "
         "to the 1889 World's Fair. It is 330 metres tall.")
FILLER = ("The committee met on Tuesdays to review the budget of the regional library "
          "network, which had grown to nineteen branches by the end of the decade. ")

# (name, context, question, response): one window; many windows (min over them); a
# response longer than one window (scored in pieces); a JSON tool result.
CASES = [
    ("one_window", TOWER, "When was the Eiffel Tower built?",
     "The Eiffel Tower is a wrought-iron lattice tower in Paris. It was completed in 1950 "
     "by a team of Italian architects. It is 330 metres tall."),
    ("many_windows", FILLER * 40 + TOWER + " " + FILLER * 20, "How tall is the tower?",
     "The tower is 330 metres tall and was built for the 1889 World's Fair."),
    ("split_response", TOWER, "Tell me about the tower.",
     " ".join(["It was built from 1887 to 1889 by the company of Gustave Eiffel."] * 40)),
    ("json_tool", json.dumps({"name": "Eiffel Tower", "completed": 1889, "height_m": 330}),
     "When was it completed?", "The Eiffel Tower was completed in 1889."),
]


def weights_sha256(model_dir: Path) -> str:
    h = hashlib.sha256()
    for name in ("model.safetensors", "exits.safetensors"):
        h.update((model_dir / name).read_bytes())
    return h.hexdigest()


def outputs(det) -> dict:
    """Every case at every exit and at full depth: token probabilities, spans, facts."""
    out = {}
    for name, ctx, q, resp in CASES:
        for layer in (*det.exit_layers, None):
            d = det.detect(ctx, q, resp, exit_layer=layer)
            out[f"{name}@{layer or 'full'}"] = {
                "token_probs": list(d.token_probs),
                "token_offsets": [list(o) for o in d.token_offsets],
                "spans": [s.to_json() for s in d.spans],
                "exit_layer": d.exit_layer, "threshold": d.threshold,
                "windows_total": d.windows_total, "windows_scored": d.windows_scored,
                "response_split": d.response_split}
    return out


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from guardrail.model import DEFAULT_MODEL, Detector

    det = Detector.from_pretrained(None, device="cpu")
    PINS.parent.mkdir(parents=True, exist_ok=True)
    PINS.write_text(json.dumps({"weights_sha256": weights_sha256(DEFAULT_MODEL),
                                "outputs": outputs(det)}, indent=1) + "\n")
    print(f"wrote {PINS.relative_to(ROOT)} ({len(CASES)} cases)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
