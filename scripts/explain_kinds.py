"""How often a flag's kind (contradicted / unverifiable) agrees with the data's own, for
every unsupported sentence the data labels with one: no model runs, since the kind is
read from the evidence alone (``guardrail.evidence.judge.explain``; docs/model-card.md,
"What a flag is called").

    .venv/bin/python scripts/explain_kinds.py [--out FILE.json]

Sets (data as in docs/model-card.md): RAGTruth QA's training and dev splits
(``runs/ragtruth``; the data's conflict / baseless types), the hand-written sets in the
three parts of ``scripts/hand_judge.py`` (A and B are where the rule was read, C is held
out), and the generated families (``runs/toolctx``: judge.jsonl is the training family,
dev and holdout are held out).  Prints accuracy and the confusion per set.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys

from guardrail.commands.judge import load_split
from guardrail.commands.training_data import labelled_examples
from guardrail.evidence.focus import evidence_for
from guardrail.evidence.judge import explain
from guardrail.train.kinds import kinds_of
from guardrail.train.scores import sentence_bounds

sys.path.insert(0, "scripts")
from hand_judge import parts  # noqa: E402

META = json.load(open("guardrail/models/default/guardrail.json"))


def rows(name: str, specs: list[str]) -> list[dict]:
    out = []
    for spec in specs:
        kind_of = kinds_of(spec)
        for ex in labelled_examples(load_split(spec, META), ""):
            ev = None
            for s, e in sentence_bounds(ex.response):
                if kind_of is None or not any(a < e and b > s for a, b in ex.spans):
                    continue
                data = kind_of(ex, s, e)
                if data is None:
                    continue
                ev = ev or evidence_for(list(ex.documents) or [ex.context], ex.question)
                sev = ev.features(ex.response[s:e], ex.response[:s])
                try:
                    why = explain(sev, 1.0, ev.structured, ev.asks_value)
                except AttributeError:  # the code before 2026-12-05 (run.sh's baseline)
                    why = explain(sev, 1.0, ev.structured)
                out.append({"set": name, "id": ex.id, "sentence": ex.response[s:e],
                            "data": data, "kind": why.kind, "basis": why.basis})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", help="write every sentence's row here (JSON)")
    args = ap.parse_args()
    p = parts()
    sets = {"ragtruth train": ["runs/ragtruth@train"], "ragtruth dev": ["runs/ragtruth@dev"],
            "hand A": p["A"], "hand B": p["B"], "hand C": p["C"],
            "generated train": ["runs/toolctx/judge.jsonl"],
            "generated dev": ["runs/toolctx/dev.jsonl"],
            "generated holdout": ["runs/toolctx/holdout.jsonl"]}
    every = []
    print(f"{'set':18s} {'n':>5s} {'kind ok':>7s}  data -> explained")
    for name, specs in sets.items():
        got = rows(name, specs)
        every += got
        c = collections.Counter((r["data"], r["kind"]) for r in got)
        ok = sum(v for (a, b), v in c.items() if a == b) / max(len(got), 1)
        print(f"{name:18s} {len(got):5d} {ok:7.3f}  " + "  ".join(
            f"{a[:5]}->{b[:5]} {c[(a, b)]}" for a in ("contradicted", "unverifiable")
            for b in ("contradicted", "unverifiable")))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(every, f, indent=1)


if __name__ == "__main__":
    main()
