# The measurements of docs/model-card.md, "A quantity said in two units, a date a stated
# span from another" (fifty-fifth session), from the repository root (data as in the
# model card: runs/toolctx).
# Versions:
#   old    3673953, the session's start:  git worktree add /tmp/old 3673953
#   first  aec40b7, its first two readings (a quantity in two units, a date a stated span
#          from a field's):  git worktree add /tmp/first aec40b7
#   now    the checkout (the session's readings)
# (the console script puts PYTHONPATH before the checkout, so PYTHONPATH=<worktree> runs it).
# Usage: bash run.sh bases | blind VERSION SET... | judge
OLD=${OLD:-/tmp/old}
FIRST=${FIRST:-/tmp/first}
B=docs/benchmarks/two-units-2026-12-04
P=docs/model-card/paraphrases
NEW="(e[p-z])"  # the session's own sets, apart from the older ones
pp() { case $1 in old) echo $OLD;; first) echo $FIRST;; esac; }
if [ "$1" = bases ]; then
  # 1. No model: what each claim would rest on if flagged, old against now, over every
  #    hand-written set written before this session and the generated dev and holdout
  #    families (guardrail data toolctx --family dev --n 400 --seed 1, --family holdout
  #    --n 400 --seed 11); then the session's own sets apart.
  for v in old now; do
    (cd /tmp && PYTHONPATH=$(pp $v) $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump \
      /tmp/bases-$v.json $(ls $OLDPWD/$P/turns*.jsonl | grep -v -E "turns-$NEW") \
      $OLDPWD/runs/toolctx/dev.jsonl $OLDPWD/runs/toolctx/holdout.jsonl)
    (cd /tmp && PYTHONPATH=$(pp $v) $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump \
      /tmp/bases-$v-new.json $(ls $OLDPWD/$P/turns*.jsonl | grep -E "turns-$NEW"))
  done
  { .venv/bin/python scripts/claim_bases.py compare /tmp/bases-old.json /tmp/bases-now.json
    echo "# the session's own sets"
    .venv/bin/python scripts/claim_bases.py compare /tmp/bases-old-new.json /tmp/bases-now-new.json
  } > $B/bases-moved.txt
  exit
fi
if [ "$1" = judge ]; then
  # 3. In flight: generated tool turns and RAGTruth QA dev (prose); the session's start is
  #    both-ways-2026-12-03/judge-now.json (da55048; 3673953 moved no claim's basis
  #    after it).
  .venv/bin/guardrail judge eval --layers 4 --data runs/toolctx/dev.jsonl \
    --data runs/toolctx/holdout.jsonl --data runs/ragtruth/derived_ragtruth_format@dev \
    --out $B/judge-now.json
  exit
fi
if [ "$1" = blind ]; then
  # 2. Streamed, each set with VERSION, every in-flight check at exit 4 (the shipped
  #    policy): bash run.sh blind old ep eq
  v=$2; shift 2
  for s in "$@"; do
    PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts --data $P/turns-$s.jsonl \
      --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/$s-$v
  done
  exit
fi
