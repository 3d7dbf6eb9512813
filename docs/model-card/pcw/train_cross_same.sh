X=data/external; RT=../shared/data/ragtruth_qa_test_subset; G=.venv/bin/guardrail
$G train detector --backbone guardrail/models/default --render-structured \
  --data ragtruth=$RT --data runs/toolctx/train.jsonl --data $X/halueval-qa.jsonl \
  --data $X/halueval-dialogue.jsonl --data $X/vitaminc.jsonl --data $X/knowledge-conflicts.jsonl \
  --max-per-dataset 400 --whole-response halueval-qa,halueval-dialogue,vitaminc,knowledge-conflicts \
  --synthetic 300 --synthetic-from ragtruth --passages $X/passages.jsonl \
  --synthetic-kinds number,entity,negation,insertion,swap,absent --synthetic-crop 0.7 \
  --epochs 0.6 --lr 5e-5 --seed 13 --out runs/cross-same --no-progress
M=runs/cross-same; n=cross-same
$G eval --model $M --data $RT --split dev --out runs/gate/$n-rt-full.json --no-progress | tail -3
$G eval --model $M --data runs/toolctx/dev.jsonl --out runs/gate/$n-tool-full.json --no-progress | tail -3
$G eval --model $M --data $X/halueval-qa.jsonl --split dev --limit 400 --out runs/gate/$n-hqa-full.json --no-progress | tail -3
$G eval --model $M --data $X/vitaminc.jsonl --split dev --limit 400 --out runs/gate/$n-vc-full.json --no-progress | tail -3
echo SAME-DONE
