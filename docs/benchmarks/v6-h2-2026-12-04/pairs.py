"""Kept / stopped / stop F1 over the sets named, from `bench verdicts`' sentences.jsonl:
    python pairs.py DIR...   (each DIR a `bench verdicts --out`)"""
import json
import sys

rows = [json.loads(line) for d in sys.argv[1:] for line in open(f"{d}/sentences.jsonl")]
sup = [r for r in rows if not r["gold"]]
uns = [r for r in rows if r["gold"]]
tp = sum(r["stopped"] for r in uns)
fp = sum(r["stopped"] for r in sup)
p = tp / (tp + fp) if tp + fp else 0.0
rc = tp / len(uns) if uns else 0.0
print(f"{' '.join(sys.argv[1:])}: sentences {len(rows)}, unsupported {len(uns)}; kept "
      f"{1 - fp / len(sup):.3f}, stopped {rc:.3f} ({tp}/{len(uns)}), stop F1 "
      f"{2 * p * rc / (p + rc) if p + rc else 0.0:.3f}")
