"""Kept / stopped of `guardrail judge eval` JSON, pooled: the generated holdout family and
the eight hand-written sets apart (python3 pool.py judge-*.json)."""
import json
import sys


def pool(d, keys):
    s = sum(d[k]["sentences"] - d[k]["unsupported"] for k in keys)
    u = sum(d[k]["unsupported"] for k in keys)
    kept = sum(d[k]["supported_kept"] * (d[k]["sentences"] - d[k]["unsupported"])
               for k in keys) / s
    stop = sum(d[k]["unsupported_stopped"] * d[k]["unsupported"] for k in keys) / u
    return f"{kept:.3f} / {stop:.3f}"


for path in sys.argv[1:]:
    d = json.load(open(path))["layers"]["4"]
    hand = [k for k in d if k.startswith("turns-") and "/" not in k]
    print(f"{path:28s} all {pool(d, ['toolctx'] + hand)}  generated holdout "
          f"{pool(d, ['toolctx'])}  hand-written {pool(d, hand)}")
