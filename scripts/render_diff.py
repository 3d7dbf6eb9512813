"""Which documents a change of guardrail/evidence/render.py reads differently (docs/model-card.md,
"A tool result in a fenced block, after a label, or as Python prints it").

    .venv/bin/python scripts/render_diff.py dump OUT.json      # with PYTHONPATH at a checkout
    .venv/bin/python scripts/render_diff.py compare BEFORE.json AFTER.json

``dump`` renders every document of the hand-written sets (docs/model-card/paraphrases),
the generated tool-turn families (runs/toolctx/*.jsonl) and the RAGTruth QA subset
(runs/ragtruth/derived_ragtruth_format), and writes each one's form and lines with
their offsets; ``compare`` prints those whose form or lines differ.  Runs no model.
Run it from outside the checkout (e.g. ``cd /tmp``) so that PYTHONPATH decides which
code is read.
"""

import glob
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def dump(out: str) -> None:
    from guardrail.evidence.render import render

    files = sorted(glob.glob(str(ROOT / "docs/model-card/paraphrases/turns*.jsonl")))
    files += sorted(glob.glob(str(ROOT / "runs/toolctx/*.jsonl")))
    files += sorted(glob.glob(str(ROOT / "runs/ragtruth/derived_ragtruth_format/*.jsonl")))
    got = {}
    for f in files:
        for i, line in enumerate(open(f, encoding="utf-8")):
            d = json.loads(line)
            docs = d.get("documents") or d.get("context") or \
                (d.get("source_info") or {}).get("passages")  # RAGTruth's source_info
            for j, doc in enumerate(docs if isinstance(docs, list) else [docs]):
                if isinstance(doc, str):
                    r = render(doc)
                    got[f"{Path(f).relative_to(ROOT)}:{i}:{j}"] = [
                        r.format, [(x.text, x.source) for x in r.lines]]
    Path(out).write_text(json.dumps(got))
    print(f"{len(got)} documents from {len(files)} files")


def compare(before: str, after: str) -> None:
    a, b = json.loads(Path(before).read_text()), json.loads(Path(after).read_text())
    moved = [k for k in a if k in b and a[k] != b[k]]
    print(f"{len(a)} documents compared, {len(moved)} read differently")
    for k in moved:
        print(f"  {k}: {a[k][0]} -> {b[k][0]}")


if __name__ == "__main__":
    {"dump": lambda: dump(sys.argv[2]), "compare": lambda: compare(*sys.argv[2:4])}[sys.argv[1]]()
