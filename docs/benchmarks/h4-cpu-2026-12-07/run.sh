#!/usr/bin/env bash
# The measurements of docs/model-card.md, "v6-H4: trained on CPU with the sets written
# since v6-H2" (sixty-seventh session), from the repository root. Models: h2 =
# guardrail/models/default (v6-H2, shipped); h4 = runs/h4/m (train.sh here) with the
# shipped judge copied into its guardrail.json (`bash run.sh judge-copy`).
# Data: runs/toolctx/holdout.jsonl (`guardrail data toolctx --family holdout --n 400 --seed
# 11 --out runs/toolctx/holdout.jsonl`), RAGTruth QA's dev split from ../shared/data.
# Usage: bash run.sh judge-copy | blind MODEL SET... | wide MODEL | inflight MODEL | soup
B=docs/benchmarks/h4-cpu-2026-12-07
P=docs/model-card/paraphrases
RT=../shared/data/ragtruth_qa_test_subset
m() { case $1 in h2) echo guardrail/models/default;; *) echo runs/$1/m;; esac; }
set -euo pipefail
case $1 in
judge-copy)
  # The candidate decides with the shipped sentence judge, as v6-H2 did with v5's.
  .venv/bin/python - <<'PY'
import json
src = json.load(open("guardrail/models/default/guardrail.json"))
path = "runs/h4/m/guardrail.json"
cfg = json.load(open(path))
cfg["judge"] = src["judge"]
cfg["version"] = "v6-H4"  # context states are cached per model version
json.dump(cfg, open(path, "w"), indent=1)
PY
  ;;
blind)
  # 1. Streamed, each held-out set, every in-flight check at exit 4 (the shipped policy).
  v=$2; shift 2
  for s in "$@"; do
    .venv/bin/guardrail bench verdicts --model "$(m $v)" --data $P/turns-$s.jsonl \
      --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/$s-$v
  done
  ;;
wide)
  # 2. Streamed with the shipped defaults: RAGTruth dev and the holdout family, 150 each.
  .venv/bin/guardrail bench verdicts --model "$(m $2)" --data $RT@dev \
    --data runs/toolctx/holdout.jsonl --limit 150 --out $B/wide-$2
  ;;
inflight)
  # 3. In flight (layer 4, the shipped judge): RAGTruth dev's example F1.
  .venv/bin/guardrail judge eval --model "$(m $2)" --layers 4 --data $RT@dev \
    --out $B/inflight-$2.json
  ;;
soup)
  # 4. The weights of v6-H2 and v6-H4 averaged, key by key (WiSE-FT's interpolation, alpha
  #    0.5), the exits too, read with v6-H2's guardrail.json (its thresholds and judge):
  #    runs/h4s/m. Then `blind h4s ...`, `wide h4s`, `inflight h4s`.
  exec bash docs/benchmarks/h5-lwf-2026-12-07/run.sh soup h4
  ;;
esac
