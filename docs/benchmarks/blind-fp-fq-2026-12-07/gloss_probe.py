"""Glosses in the rendered tool result, for the detector's input only: does the shipped
detector rank tool-turn sentences better when a value also reads as answers write it?

    .venv/bin/python docs/benchmarks/blind-fp-fq-2026-12-07/gloss_probe.py KINDS [FROM-TO]

KINDS: ``none`` (the rendering as shipped) or a comma list of bool (``true (yes)``), cents
(``price cents: 129900 ($1,299.00)``), time (``14:30 (2:30 PM)``), date (the weekday in
the written date), int (thousands separators) and minutes (``150 (2 h 30 min)``).
FROM-TO: the hand-written sets scored (default ``dx-ei``: 13 read sets, never trained
on).  The evidence features read the rendering as shipped; only the detector's input
changes, with the shipped weights (trained without glosses).  Rows cache:
runs/gloss/KINDS.json.  Appends one line to gloss_probe.jsonl here: the detector's own
sentence AUROC (a sentence's highest and mean token probability) and the shipped layer-4
tool head's kept / stopped / AUROC in flight (judge_trees.py's ``measured``).
"""
from __future__ import annotations
import datetime as dt, json, re, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, "scripts"); sys.path.insert(0, "docs/benchmarks/blind-fn-fo-2026-12-07")
import guardrail.model.detector as D
from guardrail.evidence import render as R
from guardrail.commands.judge import _rows
from guardrail.evidence.judge import FEATURES, SentenceJudge
from guardrail.model import Detector
from guardrail.train.scores import auroc
from judge_trees import sets, claims, measured

_INT = re.compile(r"^-?\d{4,}$")
_TIME = re.compile(r"^(\d{1,2}):(\d{2})(?::\d{2})?$")
_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

def twelve(h: int, m: int) -> str:
    return f"{(h % 12) or 12}:{m:02d} {'AM' if h < 12 else 'PM'}"

def gloss(line: str, kinds: set) -> str:
    if ": " not in line:
        return line
    key, value = line.rsplit(": ", 1)
    words = key.split(" > ")[-1].split()
    v = value.split(" (")[0]
    extra = []
    if "bool" in kinds and v in ("true", "false"):
        extra.append("yes" if v == "true" else "no")
    if "cents" in kinds and words and words[-1] in ("cents", "cent") and re.fullmatch(r"-?\d+", v):
        extra.append(f"${int(v) / 100:,.2f}")
    if "time" in kinds and (m := _TIME.match(v)) and int(m[1]) < 24:
        extra.append(twelve(int(m[1]), int(m[2])))
    if "date" in kinds and (m := _ISO.match(v)) and " (" in value:
        try:
            d = dt.date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            d = None
        if d is not None:
            line = line.replace(" (", f" ({WEEKDAYS[d.weekday()]}, ", 1)
            t = re.match(r"^\d{4}-\d{2}-\d{2}[T ](\d{2}):(\d{2})", v)
            if "time" in kinds and t:
                line = line[:-1] + f", {twelve(int(t[1]), int(t[2]))})"
    if "int" in kinds and not extra and _INT.match(v) and not (words and words[-1] in ("id", "year", "code", "zip")):
        extra.append(f"{int(v):,}")
    if "minutes" in kinds and words and words[-1] in ("min", "mins", "minutes") and re.fullmatch(r"\d+", v) and int(v) >= 60:
        h, mi = divmod(int(v), 60)
        extra.append(f"{h} h {mi} min" if mi else f"{h} hours")
    if not extra:
        return line
    return f"{line} ({'; '.join(extra)})"

KINDS = set(sys.argv[1].split(",")) if len(sys.argv) > 1 and sys.argv[1] != "none" else set()

def render_documents(documents):
    out = []
    for d in documents:
        r = R.render(d)
        if r.structured:
            out.append("\n".join(gloss(x.text, KINDS) if i not in r.around else x.text
                                 for i, x in enumerate(r.lines)))
        else:
            out.append(R.unfenced(d))
    return out

if KINDS:
    D.render_documents = render_documents
SPAN = sys.argv[2] if len(sys.argv) > 2 else "dx-ei"
lo, hi = SPAN.split("-")
det = Detector.from_pretrained("guardrail/models/default")
ship = SentenceJudge.from_json(det.meta["judge"]).head(4, True)
tag = "-".join(sorted(KINDS)) or "none"
rows = claims(_rows(det, sets(lo, hi), [4], None, "", Path(f"runs/gloss/{tag}.json")))
g = [r.gold for r in rows]
res = {"kinds": tag, "sets": SPAN, "sentences": len(rows), "unsupported": sum(g)}
for f in ("p_max", "p_mean"):
    res[f"auroc_{f}"] = round(float(auroc(g, [r.x[FEATURES.index(f)] for r in rows])), 4)
res["shipped head"] = measured(np.array([ship.prob(r.x) for r in rows]), ship.threshold, rows)
print(json.dumps(res))
with open(Path(__file__).with_name("gloss_probe.jsonl"), "a") as fh:
    fh.write(json.dumps(res) + "\n")
