set -e
cd "$(git rev-parse --show-toplevel)"
X=data/external; RT=../shared/data/ragtruth_qa_test_subset; G=.venv/bin/guardrail
$G train detector --backbone guardrail/models/default --attention pcw --pcw-answer sentences --render-structured \
  --data ragtruth=$RT --data runs/toolctx/train.jsonl --data $X/halueval-qa.jsonl \
  --data $X/halueval-dialogue.jsonl --data $X/vitaminc.jsonl --data $X/knowledge-conflicts.jsonl \
  --max-per-dataset 400 --whole-response halueval-qa,halueval-dialogue,vitaminc,knowledge-conflicts \
  --synthetic 300 --synthetic-from ragtruth --passages $X/passages.jsonl \
  --synthetic-kinds number,entity,negation,insertion,swap,absent --synthetic-crop 0.7 \
  --distractors 0.4 --epochs 0.6 --lr 5e-5 --seed 13 --out runs/pcwb --no-progress
echo DETECTOR-DONE
$G train exits --model runs/pcwb --layers 2,4 --data ragtruth=$RT \
  --data runs/toolctx/train.jsonl --data $X/halueval-qa.jsonl --data $X/halueval-dialogue.jsonl \
  --data $X/vitaminc.jsonl --data $X/knowledge-conflicts.jsonl --max-per-dataset 250 \
  --whole-response halueval-qa,halueval-dialogue,vitaminc,knowledge-conflicts \
  --synthetic 0 --distractors 0.4 --epochs 1 --lr 1e-3 --seed 13 --no-progress
echo EXITS-DONE
