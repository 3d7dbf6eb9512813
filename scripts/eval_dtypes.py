"""The same detector in float32 and in bfloat16 weights, side by side, on held-out sets
(docs/context-states.md, "bfloat16 weights on the CPU").

    .venv/bin/python scripts/eval_dtypes.py [MODEL] [LAYER|full]

MODEL: ``default`` (the shipped cross-encoder) or ``pcw``; LAYER: the exit (default 4).
Reads RAGTruth's dev split (``runs/ragtruth``, the split the model recorded) and the
generated tool turns ``runs/toolctx/dev.jsonl`` and ``holdout.jsonl``; prints for each
set and dtype the token-rule example F1, AUROC and token F1, and what the model's
sentence judge does (supported kept, unsupported stopped, stop F1, example F1).
"""

from __future__ import annotations

import sys
import time

import torch

from guardrail.model import Detector
from guardrail.train.data import load_any, split_by_source
from guardrail.train.evaluate import evaluate


def main() -> None:
    model = sys.argv[1] if len(sys.argv) > 1 else "default"
    layer = None if len(sys.argv) > 2 and sys.argv[2] == "full" else \
        int(sys.argv[2]) if len(sys.argv) > 2 else 4
    fp32 = Detector.from_pretrained(model)
    split = fp32.meta.get("training", {}).get("split", {"dev_fraction": 0.2, "seed": 13})
    _, rt_dev = split_by_source(load_any("runs/ragtruth", "auto"), split["dev_fraction"],
                                split["seed"])
    sets = {"rt-dev": rt_dev, **{f"tool-{n}": load_any(f"runs/toolctx/{n}.jsonl", "auto")
                                 for n in ("dev", "holdout")}}
    for name, det in (("fp32", fp32),
                      ("bf16", Detector.from_pretrained(model, dtype=torch.bfloat16))):
        for set_name, examples in sets.items():
            t0 = time.perf_counter()
            r = evaluate(det, examples, exit_layer=layer, progress=False)
            j = (r.get("judge") or {}).get("all", {})
            print(f"{name} {set_name} layer {layer}: exF1 {r['example']['f1']:.4f} AUROC "
                  f"{r['auroc']:.4f} tokF1 {r['token']['f1']:.4f}; judge kept "
                  f"{j.get('supported_kept')} stopped {j.get('unsupported_stopped')} stopF1 "
                  f"{j.get('stop_f1')} exF1 {j.get('example_f1')} "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
