"""Which windows a `pcw` check reads over a long context, layer by layer, against where the
evidence is (docs/context-states.md, "Does a sentence read its evidence?").

    .venv/bin/python scripts/window_hits.py run DIR OUT.json [--model M] [--limit N]
    .venv/bin/python scripts/window_hits.py summary OUT.json

``run`` reads a set made by `guardrail data longctx` (its rows say where the item's
passages lie in the context), answers read a block per sentence as the proxy reads them,
and records for every answer sentence: whether the windows it reads at each layer (its
top ``top_windows`` by attention mass, ``attention._read_top``) include a window holding
part of the passages, and the rank of the best such window by BM25 over the sentence
alone (``model.bm25``, as the cold path ranks windows); an answer too long for one
query is left out.  ``summary`` prints the shares, for every sentence, the hallucinated
ones and those of supported answers.  Runs the model once per item, full depth.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

import numpy as np


def run(data: str, out: str, model: str, limit: int) -> None:
    from guardrail.model import attention
    from guardrail.model.bm25 import IndexCache
    from guardrail.model.detector import DetectInput, Detector
    from guardrail.train import scores
    from guardrail.train.data import load_any
    from guardrail.train.longctx_eval import read_fields

    det = Detector.from_pretrained(model)
    fields = read_fields(data)
    examples = [e for e in load_any(data) if "evidence" in fields.get(e.id, {})][:limit]
    chosen: list[list[list[int]]] = []  # per layer of the last forward: per block, windows
    read_top = attention._read_top

    def recording(o, lse, pick, allowed=None):
        mass = lse.float().softmax(1).sum(0)
        chosen.append([mass[:, a:b].sum(1).topk(pick.top).indices.tolist()
                       for a, b in (pick.blocks or ((0, o.shape[2]),))])
        return read_top(o, lse, pick, allowed)

    attention._read_top = recording
    indexes, rows, skipped = IndexCache(), [], 0
    n_layers = len(det.model.loop.layers)
    for ex in examples:
        start, end = fields[ex.id]["evidence"]
        context = det.prepare_context([ex.context])
        windows, offsets = det.windows(context), context.tokens.offsets
        evidence = {w.index for w in windows
                    if offsets[w.start][0] < end and offsets[w.end - 1][1] > start}
        bounds = scores.sentence_bounds(ex.response)
        chosen.clear()
        det.detect_batch([DetectInput(context, ex.question, ex.response,
                                      blocks=tuple(a for a, _ in bounds if a > 0))])
        if len(chosen) != n_layers:  # an answer longer than one query: not recorded
            skipped += 1
            continue
        index = indexes.get(context, 64)
        ranks = []
        for a, b in bounds:
            score = index.window_scores(index.block_scores(ex.response[a:b]), windows)
            order = np.argsort(-score, kind="stable").tolist()
            ranks.append(min(order.index(i) for i in evidence))
        layers = [[bool(set(c) & evidence) for c in blocks[1:]] for blocks in chosen]
        rows.append({"id": ex.id, "hallucinated": ex.hallucinated, "windows": len(windows),
                     "bm25_rank": ranks, "reads_evidence": layers,
                     "sentence_hallucinated": [any(a < z and b > y for y, z in ex.spans)
                                               for a, b in bounds]})
    with open(out, "w", encoding="utf-8") as f:
        json.dump(rows, f)
    print(f"{len(rows)} answers read, {skipped} left out (longer than one query)")
    summary(out)


def summary(path: str) -> None:
    rows = json.load(open(path, encoding="utf-8"))
    groups = {"every sentence": lambda r, j: True,
              "hallucinated sentences": lambda r, j: r["sentence_hallucinated"][j],
              "sentences of supported answers": lambda r, j: not r["hallucinated"]}
    for name, keep in groups.items():
        n, top1, top4, hits = 0, 0, 0, Counter()
        for r in rows:
            for j, rank in enumerate(r["bm25_rank"]):
                if not keep(r, j):
                    continue
                n, top1, top4 = n + 1, top1 + (rank == 0), top4 + (rank < 4)
                for layer, reads in enumerate(r["reads_evidence"]):
                    hits[layer] += j < len(reads) and reads[j]
        if n:
            print(f"{name}: {n}; BM25 ranks an evidence window first {top1 / n:.3f}, "
                  f"in its top 4 {top4 / n:.3f}; read at layer "
                  + ", ".join(f"{k}: {v / n:.3f}" for k, v in sorted(hits.items())))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("data")
    r.add_argument("out")
    r.add_argument("--model", default="guardrail/models/pcw")
    r.add_argument("--limit", type=int, default=10 ** 9)
    s = sub.add_parser("summary")
    s.add_argument("path")
    a = p.parse_args()
    if a.cmd == "run":
        run(a.data, a.out, a.model, a.limit)
    else:
        summary(a.path)


if __name__ == "__main__":
    main()
