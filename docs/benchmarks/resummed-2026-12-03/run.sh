# The measurements of docs/model-card.md, "Totals of the amounts said before, shares per
# person, currency codes; wrong stops mended", from the repository root (data as in the
# model card: runs/toolctx, runs/ragtruth).
# Versions:
#   old    59fc5c5, the fiftieth session's start:  git worktree add /tmp/old 59fc5c5
#   now    the checkout (the session's end; dtdu-now ran with e2854fa, and dtdu-end, the same
#          command with --out $B/dtdu-end, with the end)
# (the console script puts PYTHONPATH before the checkout, so PYTHONPATH=<worktree> runs it).
# Usage: bash run.sh bases | judge | blind VERSION PAIR... | sets [VERSION]
OLD=${OLD:-/tmp/old}
B=docs/benchmarks/resummed-2026-12-03
P=docs/model-card/paraphrases
SETS="cb cc cd ce cf cg ch ci cj ck cl cm cn co cp cq cr cs ct cu cv cw cx cy cz da db dc dd de df dg dh di dj dk"
NEW="d[t-z]"  # the session's own blind pairs, apart from the older sets
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
  #    before-2026-12-02/judge-e4bd678.json (the evidence code of 59fc5c5).
  .venv/bin/guardrail judge eval --layers 4 --data runs/toolctx/dev.jsonl \
    --data runs/toolctx/holdout.jsonl --data runs/ragtruth/derived_ragtruth_format@dev \
    --out $B/judge-now.json  # with 5e46c74; the end's RAGTruth run:
  .venv/bin/guardrail judge eval --layers 4 --data runs/ragtruth/derived_ragtruth_format@dev \
    --out $B/judge-ragtruth-end.json
  .venv/bin/guardrail judge eval --layers 4 --data runs/toolctx/dev.jsonl \
    --data runs/toolctx/holdout.jsonl --out $B/judge-toolctx-end.json
  exit
fi
if [ "$1" = blind ]; then
  # 3. Streamed, pairs of sets with VERSION: bash run.sh blind old dt du
  v=$2; shift 2
  while [ $# -ge 2 ]; do
    PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts --data $P/turns-$1.jsonl \
      --data $P/turns-$2.jsonl --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/$1$2-$v
    shift 2
  done
  exit
fi
if [ "$1" = sets ]; then
  # 4. Streamed through the proxy, every in-flight check at exit 4: the thirty-six sets
  #    turns-cb..-dk (the start's run is before-2026-12-02/sets36-e4bd678, whose evidence
  #    code is 59fc5c5's) and the forty-eighth and forty-ninth sessions' pairs dl..ds
  #    (before-2026-12-02/*-now).
  v=${2:-now}
  PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts $(for s in $SETS; do echo --data $P/turns-$s.jsonl; done) \
    --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/sets36-$v
  bash $B/run.sh blind $v dl dm dn do dp dq dr ds
fi
