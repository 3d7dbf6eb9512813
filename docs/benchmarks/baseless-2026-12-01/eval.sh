#!/bin/bash
# eval.sh NAME MODEL: the token rule on RAGTruth dev (exit 4, full depth) and the shipped
# judge's decisions on the held-out sets, side by side for every model.
set -e
cd "$(git rev-parse --show-toplevel)"
G=.venv/bin/guardrail; X=data/external; RT=runs/ragtruth/derived_ragtruth_format
N=$1; M=$2; OUT=runs/exp/out; mkdir -p $OUT
if [ "$M" != guardrail/models/default ]; then  # the shipped judge, unchanged
  .venv/bin/python -c "
import json; d = json.load(open('guardrail/models/default/guardrail.json'))
p = '$M/guardrail.json'; m = json.load(open(p)); m['judge'] = d['judge']
json.dump(m, open(p, 'w'), indent=1)"
fi
$G eval --model $M --data $RT --split dev --exit-layer 4 --out $OUT/$N-rt-e4.json > /dev/null
$G eval --model $M --data $RT --split dev --out $OUT/$N-rt-full.json > /dev/null
$G eval --model $M --data ../shared/data/faithbench --split dev --exit-layer 4 \
  --out $OUT/$N-fb-e4.json > /dev/null
$G judge eval --model $M --layers 4,6 --data runs/toolctx/dev.jsonl \
  --data runs/toolctx/holdout.jsonl --data $RT@dev --data $X/halueval-qa.jsonl@dev \
  --data $X/vitaminc.jsonl@dev --limit 400 --whole-response halueval-qa,vitaminc \
  --rows-cache $OUT/$N-rows.json --out $OUT/$N-judge.json > /dev/null
echo "EVAL DONE $N $(date)"
