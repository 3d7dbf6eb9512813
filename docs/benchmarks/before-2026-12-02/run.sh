# The measurements of docs/model-card.md, "Totals over the records the sentence before
# names", from the repository root (data as in the model card: runs/toolctx, runs/ragtruth).
# Versions:
#   old    afdc321, the forty-eighth session's starting code:  git worktree add /tmp/old afdc321
#   now    the checkout (the forty-ninth session's end; its evidence code is e4bd678's)
# (the console script puts PYTHONPATH before the checkout, so PYTHONPATH=<worktree> runs it).
# Usage: bash run.sh [VERSION ...] (default: old now);  bash run.sh bases;  bash run.sh judge
#        bash run.sh blind VERSION  (the sessions' blind pairs; their first runs, with the
#        code of their time, are named in README.md)
OLD=${OLD:-/tmp/old}
B=docs/benchmarks/before-2026-12-02
P=docs/model-card/paraphrases
SETS="cb cc cd ce cf cg ch ci cj ck cl cm cn co cp cq cr cs ct cu cv cw cx cy cz da db dc dd de df dg dh di dj dk"
NEW="d[l-z]"  # the session's own pairs, apart from the older sets
pp() { case $1 in old) echo $OLD;; esac; }
if [ "$1" = bases ]; then
  # 1. No model: what each claim would rest on if flagged, old against now, over every
  #    hand-written set written before this session and the generated dev and holdout
  #    families; then the session's pairs apart.
  for v in old now; do
    (cd /tmp && PYTHONPATH=$(pp $v) $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump \
      /tmp/bases-$v.json $(ls $OLDPWD/$P/turns*.jsonl | grep -v "turns-$NEW") \
      $OLDPWD/runs/toolctx/dev.jsonl $OLDPWD/runs/toolctx/holdout.jsonl)
    (cd /tmp && PYTHONPATH=$(pp $v) $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump \
      /tmp/bases-$v-new.json $(ls $OLDPWD/$P/turns*.jsonl | grep "turns-$NEW"))
  done
  { .venv/bin/python scripts/claim_bases.py compare /tmp/bases-old.json /tmp/bases-now.json
    echo "# the session's pairs"
    .venv/bin/python scripts/claim_bases.py compare /tmp/bases-old-new.json /tmp/bases-now-new.json
  } > $B/bases-moved.txt
  exit
fi
if [ "$1" = judge ]; then
  # 2. In flight: generated tool turns and RAGTruth QA dev (prose); the session's start is
  #    statuses-2026-12-02/judge-now.json.
  .venv/bin/guardrail judge eval --layers 4 --data runs/toolctx/dev.jsonl \
    --data runs/toolctx/holdout.jsonl --data runs/ragtruth/derived_ragtruth_format@dev \
    --out $B/judge-e4bd678.json
  exit
fi
if [ "$1" = blind ]; then
  # 3. Streamed, the session's pairs with VERSION.
  v=${2:-now}
  for pair in "dl dm" "dn do" "dp dq" "dr ds"; do set -- $pair
    PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts --data $P/turns-$1.jsonl \
      --data $P/turns-$2.jsonl --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/$1$2-$v
  done
  exit
fi
for v in ${@:-old now}; do
  # 4. Streamed through the proxy, every in-flight check at exit 4: the thirty-six newest
  #    hand-written sets before this session (turns-cb..-dk).
  PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts $(for s in $SETS; do echo --data $P/turns-$s.jsonl; done) \
    --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/sets36-$v
done  # the end's run is sets36-e4bd678
