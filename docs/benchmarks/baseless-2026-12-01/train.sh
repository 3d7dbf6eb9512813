#!/bin/bash
# A: v5 continued on the v6-C selection with v5's synthetic kinds; B: the same, half the
# synthetic hallucinations of the new `baseless` kind.  Same seed, same everything else.
set -e
cd "$(git rev-parse --show-toplevel)"
G=.venv/bin/guardrail; X=data/external; RT=runs/ragtruth/derived_ragtruth_format
OLD=number,entity,negation,insertion,swap,absent
NEW=$OLD,baseless,baseless,baseless,baseless,baseless,baseless
for run in "A $OLD" "B $NEW"; do
  set -- $run
  [ -f runs/exp/$1/exits.safetensors ] && continue
  $G train detector --backbone guardrail/models/default --render-structured \
    --data ragtruth=$RT --data runs/toolctx/train.jsonl --data $X/halueval-dialogue.jsonl \
    --data $X/vitaminc.jsonl --max-per-dataset 1000 --whole-response halueval-dialogue,vitaminc \
    --synthetic 2500 --synthetic-from ragtruth --passages $X/passages.jsonl \
    --synthetic-kinds $2 --synthetic-crop 0.7 --epochs 1 --lr 3e-5 --seed 13 \
    --no-progress --out runs/exp/$1
  $G train exits --model runs/exp/$1 --layers 2,4 --data ragtruth=$RT \
    --data runs/toolctx/train.jsonl --data $X/halueval-dialogue.jsonl --data $X/vitaminc.jsonl \
    --max-per-dataset 700 --whole-response halueval-dialogue,vitaminc \
    --synthetic 0 --epochs 1 --lr 1e-3 --seed 13
  echo "DONE $1 $(date)"
done
