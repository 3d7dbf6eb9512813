"""One line of an eval's JSON: example P/R/F1 and AUROC, per cell and evidence-only."""
import json
import sys

try:
    d = json.load(open(sys.argv[1]))
except Exception as e:  # a run that was cut short
    print(json.dumps({"run": sys.argv[2], "error": str(e)}))
    raise SystemExit


def brief(x):
    ex = x.get("example", {})
    return {"p": ex.get("precision"), "r": ex.get("recall"), "f1": ex.get("f1"),
            "auroc": x.get("auroc"), "thr": x.get("threshold")}


out = {"run": sys.argv[2], **brief(d)}
if "by_length_depth" in d:
    out["cells"] = {k: brief(v) for k, v in d["by_length_depth"].items()}
if "evidence_only" in d:
    out["evidence_only"] = brief(d["evidence_only"])
print(json.dumps(out))
