# The measurements of docs/model-card.md, "A yes/no said both ways, amounts named and added
# up, what was done and what can be, values said as labels" (fifty-third session), from
# the repository root (data as in the model card: runs/toolctx, runs/ragtruth).
# Versions:
#   old    589a061, the fifty-third session's start:  git worktree add /tmp/old 589a061
#   now    the checkout (the session's readings)
# (the console script puts PYTHONPATH before the checkout, so PYTHONPATH=<worktree> runs it).
# Usage: bash run.sh bases | judge | blind VERSION PAIR...
OLD=${OLD:-/tmp/old}
B=docs/benchmarks/both-ways-2026-12-03
P=docs/model-card/paraphrases
NEW="(e[j-z])"  # the session's own pairs, apart from the older sets
pp() { case $1 in old) echo $OLD;; esac; }
if [ "$1" = bases ]; then
  # 1. No model: what each claim would rest on if flagged, old against now, over every
  #    hand-written set written before this session and the generated dev and holdout
  #    families; then the session's pairs apart.
  for v in old now; do
    (cd /tmp && PYTHONPATH=$(pp $v) $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump \
      /tmp/bases-$v.json $(ls $OLDPWD/$P/turns*.jsonl | grep -v -E "turns-$NEW") \
      $OLDPWD/runs/toolctx/dev.jsonl $OLDPWD/runs/toolctx/holdout.jsonl)
    (cd /tmp && PYTHONPATH=$(pp $v) $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump \
      /tmp/bases-$v-new.json $(ls $OLDPWD/$P/turns*.jsonl | grep -E "turns-$NEW"))
  done
  { .venv/bin/python scripts/claim_bases.py compare /tmp/bases-old.json /tmp/bases-now.json
    echo "# the session's pairs"
    .venv/bin/python scripts/claim_bases.py compare /tmp/bases-old-new.json /tmp/bases-now-new.json
  } > $B/bases-moved.txt
  exit
fi
if [ "$1" = judge ]; then
  # 2. In flight: generated tool turns and RAGTruth QA dev (prose); the session's start is
  #    hedged-2026-12-03/judge-now.json (the code of 589a061 for these data).
  .venv/bin/guardrail judge eval --layers 4 --data runs/toolctx/dev.jsonl \
    --data runs/toolctx/holdout.jsonl --data runs/ragtruth/derived_ragtruth_format@dev \
    --out $B/judge-now.json
  exit
fi
if [ "$1" = blind ]; then
  # 3. Streamed, pairs of sets with VERSION: bash run.sh blind old ej ek el em en eo
  v=$2; shift 2
  while [ $# -ge 2 ]; do
    PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts --data $P/turns-$1.jsonl \
      --data $P/turns-$2.jsonl --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/$1$2-$v
    shift 2
  done
  exit
fi
