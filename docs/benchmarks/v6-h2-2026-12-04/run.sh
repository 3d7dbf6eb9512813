# The measurements of docs/model-card.md, "v6-H2: trained with 90 hand-written sets on an
# H200" (fifty-sixth session), from the repository root (data as in the model card:
# runs/toolctx, runs/ragtruth -> ../shared/data/ragtruth_qa_test_subset).
# Models: v5 = guardrail/models/default at the session's start; h2 = runs/h2, the device
# run's weights (device_run.sh here) with v5's judge copied into its guardrail.json.
# v5's rows were scored under the name `default` (the shipped model then): once v6-H2 is
# the default, run `hand v5` and `rows v5` with the session's first commit on PYTHONPATH
# (git worktree add /tmp/v5 1b87e4b; PYTHONPATH=/tmp/v5), and the others likewise with
# V5=/tmp/v5/guardrail/models/default.
#   h3 = runs/h3, the second device run (device_run_h3.sh): the sets of A and B trained on.
# Usage: bash run.sh hand [v5|h2] | rows MODEL | blind MODEL SET... | wide MODEL | judge MODEL
#        | bases | bound | eval MODEL
B=docs/benchmarks/v6-h2-2026-12-04
P=docs/model-card/paraphrases
m() { case $1 in v5) echo ${V5:-guardrail/models/default};; *) echo runs/$1;; esac; }
if [ "$1" = hand ]; then
  # 1. In flight (layer 4) from the device run's rows (runs/gpu-c/MODEL.json, the detector's
  #    probabilities in bfloat16 on the H200): the sets held out from training and fitting
  #    (C), generated turns and RAGTruth dev, under the shipped judge and three refits.
  if [ "$2" = v5 ]; then .venv/bin/python scripts/hand_judge.py --pairs > $B/hand-v5.txt
  else .venv/bin/python scripts/hand_judge.py --pairs --model runs/$2 --cache runs/gpu-c/$2.json \
    > $B/hand-$2.txt; fi
  exit
fi
if [ "$1" = rows ]; then
  # 1b. In flight (layer 4, the shipped judge) from the device runs' rows alone: the sets
  #     of C, RAGTruth dev and the generated dev and holdout families (judge-gpu-rows-*).
  C=$(.venv/bin/python -c "import sys; sys.path.insert(0, 'scripts'); from hand_judge import parts
print(' '.join('--data ' + s for s in parts()['C']))")
  M=$(m $2); [ $2 = v5 ] && M=default
  .venv/bin/guardrail judge eval --model $M --layers 4 $C \
    --data ../shared/data/ragtruth_qa_test_subset@dev --data runs/toolctx/dev.jsonl \
    --data runs/toolctx/holdout.jsonl --rows-cache runs/gpu-c/$2.json --out $B/judge-gpu-rows-$2.json
  exit
fi
if [ "$1" = judge ]; then
  # 2. In flight as the model card's gate rows are measured (RAGTruth dev and the generated
  #    families, layers 2, 4 and 6), the detector run on this CPU.
  .venv/bin/guardrail judge eval --model $(m $2) --layers 2,4,6 --data runs/toolctx/dev.jsonl \
    --data runs/toolctx/holdout.jsonl --data runs/ragtruth@dev --out $B/judge-$2.json
  exit
fi
if [ "$1" = wide ]; then
  # 3. Streamed through the real proxy with the shipped defaults: RAGTruth dev and the
  #    holdout family, 150 answers each.
  .venv/bin/guardrail bench verdicts --model $(m $2) --data runs/ragtruth@dev \
    --data runs/toolctx/holdout.jsonl --limit 150 --out $B/wide-$2
  exit
fi
if [ "$1" = blind ]; then
  # 4. Streamed, each set, every in-flight check at exit 4 (the shipped policy).
  v=$2; shift 2
  for s in "$@"; do
    .venv/bin/guardrail bench verdicts --model $(m $v) --data $P/turns-$s.jsonl \
      --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/$s-$v
  done
  exit
fi
if [ "$1" = bases ]; then
  # 5. No model: what each claim would rest on if flagged, 6f6d27f (OLD, a worktree) against
  #    the checkout (a bound kept by the field, "at least 7 meters"), over every
  #    hand-written set and the generated dev and holdout families.
  OLD=${OLD:-/tmp/old}; S="$(ls $PWD/$P/turns*.jsonl) $PWD/runs/toolctx/dev.jsonl $PWD/runs/toolctx/holdout.jsonl"
  (cd /tmp && PYTHONPATH=$OLD $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump /tmp/bases-old.json $S)
  (cd /tmp && $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump /tmp/bases-now.json $S)
  .venv/bin/python scripts/claim_bases.py compare /tmp/bases-old.json /tmp/bases-now.json > $B/bases-moved.txt
  exit
fi
if [ "$1" = bound ]; then
  # 6. The pair turns-et/-eu streamed again with the default (v6-H2) and the bound reading.
  for s in et eu; do
    .venv/bin/guardrail bench verdicts --data $P/turns-$s.jsonl \
      --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/$s-bound
  done
  exit
fi
if [ "$1" = eval ]; then
  # 7. (fifty-seventh session) `guardrail eval` on RAGTruth dev at full depth: the token
  #    rule and the full-depth judge, as a user measuring a RAGTruth-style set sees them.
  #    h2 is the default since c0fdb61; v5 from its worktree (V5=/tmp/v5/guardrail/models/default).
  M=$(m $2); [ $2 = h2 ] && M=guardrail/models/default
  .venv/bin/guardrail eval --model $M --data runs/ragtruth --split dev --no-progress \
    --out $B/eval-$2.json
  exit
fi
