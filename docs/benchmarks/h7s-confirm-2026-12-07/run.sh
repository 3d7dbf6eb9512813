#!/usr/bin/env bash
# The measurements of docs/model-card.md, "v6-H7s, tested again" (seventy-first session), from
# the repository root: ../h5-lwf-2026-12-07/run.sh's commands, writing here. Models: h2
# (shipped), pcw, h7 = runs/h7/m (`DISTILL=0.8 bash docs/benchmarks/h5-lwf-2026-12-07/train.sh
# runs/h7/m`, retrained), h7s = v6-H2 and v6-H7 averaged (`run.sh soup h7`).
# Usage: bash run.sh judge-copy MODEL | blind MODEL SET... | wide MODEL | inflight MODEL | soup MODEL
#        | panel MODEL (the prose panel: `guardrail judge compare` against v6-H2, in flight)
set -euo pipefail
B=docs/benchmarks/h7s-confirm-2026-12-07
if [ "$1" = panel ]; then
  X=runs/h4/data
  .venv/bin/guardrail judge compare --model runs/$2/m --against guardrail/models/default \
    --layers 4 --data ../shared/data/faithbench \
    --data $X/halueval-summarization.jsonl --limit 300 \
    --data ../shared/data/summedits/summedits_news.json \
    --data ../shared/data/summedits/summedits_podcast.json \
    --whole-response halueval-summarization,summedits \
    --rows-cache runs/compare/panel-rows.json --out $B/panel-$2.json
  exit
fi
B=$B exec bash docs/benchmarks/h5-lwf-2026-12-07/run.sh "$@"
