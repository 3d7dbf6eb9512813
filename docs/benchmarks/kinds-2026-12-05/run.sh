# What a flag is called (docs/model-card.md, "What a flag is called", fifty-eighth session),
# from the repository root with the data of the model card (runs/ragtruth ->
# ../shared/data/ragtruth_qa_test_subset; runs/toolctx as its commands write it).
#   bash run.sh rule [old]   every labelled unsupported sentence, no model: kinds-new.txt, or
#                            with OLD=/tmp/old (a worktree of fa7f79b with
#                            guardrail/train/kinds.py copied in) kinds-old.txt
#   bash run.sh eval         `guardrail eval` on RAGTruth dev: the judge's "kind ok" (eval.txt)
#   bash run.sh bases        no model: what each claim would rest on, BASE=/tmp/head (a
#                            worktree of a57e0c7) against the checkout (a record named by its
#                            whole label wins a tie), every hand-written set and the generated
#                            dev, holdout and training families: bases-moved.txt
B=docs/benchmarks/kinds-2026-12-05
if [ "$1" = rule ]; then
  if [ "$2" = old ]; then PYTHONPATH=${OLD:-/tmp/old} .venv/bin/python scripts/explain_kinds.py \
      --out /tmp/kinds-old.json > $B/kinds-old.txt
  else .venv/bin/python scripts/explain_kinds.py --out /tmp/kinds-new.json > $B/kinds-new.txt; fi
  exit
fi
if [ "$1" = eval ]; then
  .venv/bin/guardrail eval --data runs/ragtruth --split dev --no-progress --out $B/eval.json > $B/eval.txt
  exit
fi
if [ "$1" = bases ]; then
  OLD=${BASE:-/tmp/head}; P=docs/model-card/paraphrases
  S="$(ls $PWD/$P/turns*.jsonl) $PWD/runs/toolctx/dev.jsonl $PWD/runs/toolctx/holdout.jsonl $PWD/runs/toolctx/judge.jsonl"
  (cd /tmp && PYTHONPATH=$OLD $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump /tmp/bases-old.json $S)
  (cd /tmp && $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump /tmp/bases-now.json $S)
  .venv/bin/python scripts/claim_bases.py compare /tmp/bases-old.json /tmp/bases-now.json > $B/bases-moved.txt
  exit
fi
