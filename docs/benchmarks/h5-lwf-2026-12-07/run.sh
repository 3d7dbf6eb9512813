#!/usr/bin/env bash
# The measurements of docs/model-card.md, "v6-H5 and v6-H6" (sixty-eighth and sixty-ninth sessions), from the
# repository root, as ../h4-cpu-2026-12-07/run.sh measured v6-H4 (v6-H2's rows are there,
# same code). Models: h2 = guardrail/models/default (v6-H2, shipped); h5 = runs/h5/m
# (train.sh here) with the shipped judge copied into its guardrail.json (`judge-copy h5`);
# h6 = runs/h6/m, the same after the token-by-token loss (model card, "v6-H5 and v6-H6").
# Data: runs/toolctx/holdout.jsonl (`guardrail data toolctx --family holdout --n 400 --seed
# 11 --out runs/toolctx/holdout.jsonl`), RAGTruth QA's dev split from ../shared/data.
# Usage: bash run.sh judge-copy MODEL | blind MODEL SET... | wide MODEL | inflight MODEL
#        | soup MODEL (v6-H2 and runs/MODEL/m averaged into runs/MODELs/m)
# B names the folder the outputs go to (../h7-distill-2026-12-07/run.sh sets it).
B=${B:-docs/benchmarks/h5-lwf-2026-12-07}
P=docs/model-card/paraphrases
RT=../shared/data/ragtruth_qa_test_subset
m() { case $1 in h2) echo guardrail/models/default;; pcw) echo guardrail/models/pcw;; *) echo runs/$1/m;; esac; }
set -euo pipefail
case $1 in
judge-copy)
  .venv/bin/python - "$2" <<'PY'
import json, sys
src = json.load(open("guardrail/models/default/guardrail.json"))
path = f"runs/{sys.argv[1]}/m/guardrail.json"
cfg = json.load(open(path))
cfg["judge"] = src["judge"]
cfg["version"] = f"v6-{sys.argv[1].upper()}"  # context states are cached per model version
json.dump(cfg, open(path, "w"), indent=1)
PY
  ;;
blind)  # streamed, each held-out set, every in-flight check at exit 4
  v=$2; shift 2
  for s in "$@"; do
    .venv/bin/guardrail bench verdicts --model "$(m $v)" --data $P/turns-$s.jsonl \
      --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/$s-$v
  done
  ;;
wide)  # streamed with the shipped defaults: RAGTruth dev and the holdout family, 150 each
  .venv/bin/guardrail bench verdicts --model "$(m $2)" --data $RT@dev \
    --data runs/toolctx/holdout.jsonl --limit 150 --out $B/wide-$2
  ;;
inflight)  # in flight (layer 4, the shipped judge): RAGTruth dev's example F1
  .venv/bin/guardrail judge eval --model "$(m $2)" --layers 4 --data $RT@dev \
    --out $B/inflight-$2.json
  ;;
soup)  # v6-H2's and the candidate's weights averaged key by key (WiSE-FT, alpha 0.5), the
       # exits too, read with v6-H2's guardrail.json (its thresholds and judge); until
       # the seventieth session an inline script here, which wrote the same weights
  .venv/bin/guardrail train average guardrail/models/default runs/$2/m --out runs/$2s/m
  ;;
esac
