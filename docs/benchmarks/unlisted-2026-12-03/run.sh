# The measurements of docs/model-card.md, "An extra the tool result does not list; fields
# read as meant" (fifty-first session), from the repository root (data as in the model
# card: runs/toolctx, runs/ragtruth).
# Versions:
#   old    48fedfa, the fifty-first session's start:  git worktree add /tmp/old 48fedfa
#   now    the checkout (the session's end)
# (the console script puts PYTHONPATH before the checkout, so PYTHONPATH=<worktree> runs it).
# Usage: bash run.sh bases | judge | blind VERSION PAIR... | sets [VERSION]
OLD=${OLD:-/tmp/old}
B=docs/benchmarks/unlisted-2026-12-03
P=docs/model-card/paraphrases
SETS="cb cc cd ce cf cg ch ci cj ck cl cm cn co cp cq cr cs ct cu cv cw cx cy cz da db dc dd de df dg dh di dj dk
      dl dm dn do dp dq dr ds dt du dv dw"
NEW="(d[x-z]|e[a-c])"  # the session's own pairs, apart from the older sets
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
  #    resummed-2026-12-03/judge-ragtruth-end.json and judge-toolctx-end.json (48fedfa).
  .venv/bin/guardrail judge eval --layers 4 --data runs/toolctx/dev.jsonl \
    --data runs/toolctx/holdout.jsonl --data runs/ragtruth/derived_ragtruth_format@dev \
    --out $B/judge-now.json
  exit
fi
if [ "$1" = blind ]; then
  # 3. Streamed, pairs of sets with VERSION: bash run.sh blind old dx dy
  v=$2; shift 2
  while [ $# -ge 2 ]; do
    PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts --data $P/turns-$1.jsonl \
      --data $P/turns-$2.jsonl --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/$1$2-$v
    shift 2
  done
  exit
fi
if [ "$1" = sets ]; then
  # 4. Streamed through the proxy, every in-flight check at exit 4: the 48 sets
  #    turns-cb..-dw (the start's runs are resummed-2026-12-03/sets36-now and *-now, -end).
  v=${2:-now}
  PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts $(for s in $SETS; do echo --data $P/turns-$s.jsonl; done) \
    --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/sets48-$v
fi
