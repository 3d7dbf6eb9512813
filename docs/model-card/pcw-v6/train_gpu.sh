# The v6 PCW model (shipped as guardrail/models/pcw) and its like-for-like cross-encoder,
# as run on an H100 on 2026-11-26.  X holds what `guardrail data fetch --dest data/external`
# and the toolctx commands of docs/model-card.md write (train: --family train --n 4000
# --seed 0; judge: --n 600 --seed 7; calib: --family calib --n 1500 --seed 3), and the
# RAGTruth QA subset as X/ragtruth.  The first detector run trained all 1,210 steps and then
# crashed in its calibration pass (fixed in commit 6b916e2: the varlen kernel took float32);
# the same command with --resume finished it from the final checkpoint.
set -e
G="python3 -m guardrail.cli"; RT=$X/ragtruth
DATA="--data ragtruth=$RT --data $X/train.jsonl --data $X/halueval-qa.jsonl \
  --data $X/halueval-dialogue.jsonl --data $X/vitaminc.jsonl --data $X/knowledge-conflicts.jsonl \
  --whole-response halueval-qa,halueval-dialogue,vitaminc,knowledge-conflicts"
SYN="--synthetic 1000 --synthetic-from ragtruth --passages $X/passages.jsonl \
  --synthetic-kinds number,entity,negation,insertion,swap,absent --synthetic-crop 0.7"
$G train detector --backbone guardrail/models/default --attention pcw --pcw-answer sentences \
  --render-structured $DATA --max-per-dataset 2000 $SYN --distractors 0.4 --epochs 2 --lr 5e-5 \
  --batch-tokens 8192 --seed 13 --out runs/pcw2 --no-progress
$G train exits --model runs/pcw2 --layers 2,4 $DATA --max-per-dataset 700 --synthetic 0 \
  --distractors 0.4 --epochs 1 --lr 1e-3 --batch-tokens 8192 --seed 13 --no-progress
# the cross-encoder trained on the same data (the #13 gate's baseline; no exits, no judge)
$G train detector --backbone guardrail/models/default --render-structured $DATA \
  --max-per-dataset 2000 $SYN --epochs 2 --lr 5e-5 --batch-tokens 16384 --seed 13 \
  --out runs/cross2 --no-progress
# back on the 2-core CPU machine: the judge (judge v3's recipe), then every measurement
X=data/external; RT=../shared/data/ragtruth_qa_test_subset; G=guardrail
$G judge fit --model runs/pcw2 --layers 2,4,6 --data $RT@calib --data runs/toolctx/judge.jsonl \
  --data runs/toolctx/calib.jsonl --data $X/halueval-qa.jsonl@calib --data $X/vitaminc.jsonl@calib \
  --limit 300 --whole-response halueval-qa,vitaminc --rows-cache runs/an/fit_pcw2.json
for M in pcw2 cross2; do
  $G eval --model runs/$M --data $RT --split dev --out $M-rt-full.json
  $G eval --model runs/$M --data runs/toolctx/dev.jsonl --out $M-tool-full.json
  $G eval --model runs/$M --data $X/halueval-qa.jsonl --split dev --limit 400 --out $M-hqa-full.json
  $G eval --model runs/$M --data $X/vitaminc.jsonl --split dev --limit 400 --out $M-vc-full.json
done
$G eval --model runs/pcw2 --data $RT --split dev --exit-layer 4 --out pcw2-rt-exit4.json
$G eval --model runs/pcw2 --data runs/longctx --by length,depth --out pcw2-longctx.json
# held out, as the proxy decides (v5j = a copy of guardrail/models/default)
for M in pcw2 v5j; do
  $G judge eval --model runs/$M --layers 2,4,6 --data runs/toolctx/dev.jsonl \
    --data runs/toolctx/holdout.jsonl --data $RT@dev --data $X/halueval-qa.jsonl@dev \
    --data $X/vitaminc.jsonl@dev --limit 400 --whole-response halueval-qa,vitaminc \
    --rows-cache runs/an/dev_$M.json --out $M-judge-heldout.json
done
