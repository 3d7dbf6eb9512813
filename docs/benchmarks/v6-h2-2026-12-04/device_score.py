"""Scratch (device run, not in the repo): the detector's part of `guardrail judge`'s rows
cache, without the evidence features, so the CPU machine fits and measures from it.

    python3 .gpu/score.py MODEL|default CACHE LAYERS LIMIT WHOLE SPEC...
"""
import hashlib
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from guardrail.commands.judge import _examples
from guardrail.model import Detector
from guardrail.train.judge import score

model, cache, layers, limit, whole, *specs = sys.argv[1:]
layers = sorted(int(x) for x in layers.split(","))
limit = int(limit) or None
det = Detector.from_pretrained(None if model == "default" else model,
                               device="cuda" if __import__("torch").cuda.is_available() else "cpu")
stored = json.loads(Path(cache).read_text())["entries"] if Path(cache).exists() else {}
for spec in specs:
    k = hashlib.sha256(json.dumps([det.name, det.meta.get("training", {}).get("report"), spec,
                                   layers, limit, whole, "scored"], default=str).encode()
                       ).hexdigest()
    if k in stored:
        continue
    t = time.time()
    ex = _examples(det, spec, limit, whole)
    stored[k] = [asdict(sc) for layer in layers for sc in
                 score(det, ex, None if layer >= det.n_layers else layer, batch=64)]
    Path(cache).write_text(json.dumps({"entries": stored}))
    print(f"{spec}: {len(ex)} examples, {time.time() - t:.1f} s", flush=True)
