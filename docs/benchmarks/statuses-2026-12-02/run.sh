# The measurements of docs/model-card.md, "A status said as another kind", from the
# repository root (data as in the model card: runs/toolctx, runs/ragtruth). Versions:
#   old    2cb0a50, the session's starting code (913b405's, with turns-dh/-di added):
#          git worktree add /tmp/old 2cb0a50
#   now    the checkout (the session's end)
# (the console script puts PYTHONPATH before the checkout, so PYTHONPATH=<worktree> runs it).
# Usage: bash run.sh [VERSION ...] (default: old now);  bash run.sh bases;  bash run.sh judge
#        bash run.sh blind VERSION  (the session's two blind pairs; their first runs, with
#        old and with the code of their time, are dhdi-old, dhdi-new, djdk-old, djdk-new)
OLD=${OLD:-/tmp/old}
B=docs/benchmarks/statuses-2026-12-02
P=docs/model-card/paraphrases
SETS="cb cc cd ce cf cg ch ci cj ck cl cm cn co cp cq cr cs ct cu cv cw cx cy cz da db dc dd de df dg"
pp() { case $1 in old) echo $OLD;; esac; }
if [ "$1" = bases ]; then
  # 1. No model: what each claim would rest on if flagged, old against now, over every
  #    hand-written set written before this session and the generated dev and holdout
  #    families; then the session's two pairs apart.
  for v in old now; do
    (cd /tmp && PYTHONPATH=$(pp $v) $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump \
      /tmp/bases-$v.json $(ls $OLDPWD/$P/turns*.jsonl | grep -v 'turns-d[hijk]') \
      $OLDPWD/runs/toolctx/dev.jsonl $OLDPWD/runs/toolctx/holdout.jsonl)
    for pair in "dh di" "dj dk"; do set -- $pair
      (cd /tmp && PYTHONPATH=$(pp $v) $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump \
        /tmp/bases-$v-$1.json $OLDPWD/$P/turns-$1.jsonl $OLDPWD/$P/turns-$2.jsonl)
    done
  done
  { .venv/bin/python scripts/claim_bases.py compare /tmp/bases-old.json /tmp/bases-now.json
    for p in dh dj; do echo "# the pair from turns-$p"
      .venv/bin/python scripts/claim_bases.py compare /tmp/bases-old-$p.json /tmp/bases-now-$p.json
    done; } > $B/bases-moved.txt
  exit
fi
if [ "$1" = judge ]; then
  # 2. In flight: generated tool turns and RAGTruth QA dev (prose); the session's start is
  #    general-2026-12-02/judge-now.json (the same judge, weights and readings of prose).
  .venv/bin/guardrail judge eval --layers 4 --data runs/toolctx/dev.jsonl \
    --data runs/toolctx/holdout.jsonl --data runs/ragtruth/derived_ragtruth_format@dev \
    --out $B/judge-now.json
  exit
fi
if [ "$1" = blind ]; then
  # 3. Streamed, the session's two pairs with VERSION (each measured first before anyone
  #    read it: dhdi-old with 2cb0a50, dhdi-new with 92ef314; djdk-old with 2cb0a50,
  #    djdk-new with b182240 and the "would" cue).
  v=${2:-now}
  for pair in "dh di" "dj dk"; do set -- $pair
    PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts --data $P/turns-$1.jsonl \
      --data $P/turns-$2.jsonl --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/$1$2-$v-end
  done
  exit
fi
for v in ${@:-old now}; do
  # 4. Streamed through the proxy, every in-flight check at exit 4: the thirty-two newest
  #    hand-written sets before this session (turns-cb..-dg).
  PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts $(for s in $SETS; do echo --data $P/turns-$s.jsonl; done) \
    --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/sets32-$v
done
