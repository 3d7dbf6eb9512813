#!/bin/bash
# A with a judge of its own, fitted by judge v3's recipe, then measured as eval.sh does.
set -e
cd "$(git rev-parse --show-toplevel)"
G=.venv/bin/guardrail; X=data/external; RT=runs/ragtruth/derived_ragtruth_format
$G judge fit --model runs/exp/Aj --layers 2,4,6 --data $RT@calib \
  --data runs/toolctx/judge.jsonl --data $X/halueval-qa.jsonl@calib \
  --data $X/vitaminc.jsonl@calib --limit 300 --whole-response halueval-qa,vitaminc \
  --out runs/exp/out/Aj-fit.json > /dev/null
$G judge eval --model runs/exp/Aj --layers 4,6 --data runs/toolctx/dev.jsonl \
  --data runs/toolctx/holdout.jsonl --data $RT@dev --data $X/halueval-qa.jsonl@dev \
  --data $X/vitaminc.jsonl@dev --limit 400 --whole-response halueval-qa,vitaminc \
  --rows-cache runs/exp/out/Aj-rows.json --out runs/exp/out/Aj-judge.json > /dev/null
echo "REFIT DONE $(date)"
