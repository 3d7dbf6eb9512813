"""Kept / stopped / stop F1 of two `bench verdicts` runs over the same sentences, and the
sentences whose verdict moved:  python compare.py BEFORE_DIR[,DIR...] AFTER_DIR[,DIR...]
(each DIR holds sentences.jsonl or sentences.jsonl.gz; several are joined)."""

import gzip
import json
import sys
from pathlib import Path


def load(dirs: str) -> dict:
    out = {}
    for d in dirs.split(","):
        p = Path(d) / "sentences.jsonl"
        lines = open(p) if p.exists() else gzip.open(f"{p}.gz", "rt")
        out.update({(r["example"], r["original"]): r for r in map(json.loads, lines)})
    return out


def scores(rows: list) -> str:
    sup = [r for r in rows if not r["gold"]]
    uns = [r for r in rows if r["gold"]]
    tp, fp = sum(r["stopped"] for r in uns), sum(r["stopped"] for r in sup)
    kept, stopped = 1 - fp / len(sup), tp / len(uns)
    precision = tp / (tp + fp) if tp + fp else 0.0
    f1 = 2 * precision * stopped / (precision + stopped) if precision + stopped else 0.0
    return f"{len(rows)} sentences, {len(uns)} unsupported: {kept:.3f} / {stopped:.3f} / {f1:.3f}"


if __name__ == "__main__":
    before, after = load(sys.argv[1]), load(sys.argv[2])
    keys = [k for k in after if k in before]
    print("before", scores([before[k] for k in keys]))
    print("after ", scores([after[k] for k in keys]))
    for k in keys:
        a, b = before[k], after[k]
        if a["stopped"] != b["stopped"]:
            why = (b.get("explanation") or a.get("explanation") or {}).get("basis")
            label = "unsupported" if b["gold"] else "supported"
            print(f"{k[0]:14s} {label:11s} {a['stopped']!s:5s} -> {b['stopped']!s:5s} {why} "
                  f"{k[1].strip()[:80]}")
