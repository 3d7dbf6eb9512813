# The measurements of docs/model-card.md, "A general claim beside a tool result, a count
# of more than the result lists, a group's exception", from the repository root (data as
# in the model card: runs/toolctx, runs/ragtruth). Three versions of the code:
#   old    9bd5383, the session's starting code:  git worktree add /tmp/old 9bd5383
#   rules  25e3539, with the count and general-claim rules:  git worktree add /tmp/rules 25e3539
#   now    the checkout (the session's end)
# (the console script puts PYTHONPATH before the checkout, so PYTHONPATH=<worktree> runs it).
# Usage: bash run.sh [VERSION ...]   (default: old rules now), then: bash run.sh compare
#        bash run.sh bases VERSION ...   (step 1 alone);  bash run.sh render
OLD=${OLD:-/tmp/old}; RULES=${RULES:-/tmp/rules}
B=docs/benchmarks/general-2026-12-02
P=docs/model-card/paraphrases
SETS="cb cc cd ce cf cg ch ci cj ck cl cm cn co cp cq cr cs ct cu cv cw cx cy cz da"
mkdir -p runs/general
pp() { case $1 in old) echo $OLD;; rules) echo $RULES;; esac; }
bases() {
  local v=$1
  # 1. No model: what each claim would rest on if flagged, every hand-written set and
  #    the three generated families.
  (cd /tmp && PYTHONPATH=$(pp $v) $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump \
    $OLDPWD/runs/general/bases-$v.json $OLDPWD/$P/turns*.jsonl \
    $OLDPWD/runs/toolctx/dev.jsonl $OLDPWD/runs/toolctx/holdout.jsonl $OLDPWD/runs/toolctx/calib.jsonl)
  .venv/bin/python scripts/claim_bases.py counts runs/general/bases-$v.json --every > $B/bases-$v.txt
}
measure() {
  local v=$1
  bases $v
  # 2. Streamed through the proxy, every in-flight check at exit 4: the 26 newest
  #    hand-written sets, and the blind pair turns-db/-dc (first measured with old and
  #    rules before anyone read it: blind-first-*).
  PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts $(for s in $SETS; do echo --data $P/turns-$s.jsonl; done) \
    --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/sets26-$v
  PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts --data $P/turns-db.jsonl --data $P/turns-dc.jsonl \
    --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/dbdc-$v
  # the blind pair written after all of the session's changes (turns-dd/-de): measured
  # first with old and now before anyone read it (blind45-*), then here again
  [ $v = rules ] || PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts --data $P/turns-dd.jsonl \
    --data $P/turns-de.jsonl --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/ddde-$v
  # 3. In flight, the judge's flags: generated tool turns and RAGTruth QA dev (prose).
  [ $v = rules ] || PYTHONPATH=$(pp $v) .venv/bin/guardrail judge eval --layers 4 --data runs/toolctx/dev.jsonl \
    --data runs/toolctx/holdout.jsonl --data runs/ragtruth/derived_ragtruth_format@dev --out $B/judge-$v.json
  gzip -f $B/*-$v/sentences.jsonl
}
if [ "$1" = render ]; then  # which documents the CSV change reads differently (no model)
  (cd /tmp && PYTHONPATH=$RULES $OLDPWD/.venv/bin/python $OLDPWD/scripts/render_diff.py dump /tmp/before.json \
    && PYTHONPATH=$OLDPWD $OLDPWD/.venv/bin/python $OLDPWD/scripts/render_diff.py dump /tmp/after.json)
  .venv/bin/python scripts/render_diff.py compare /tmp/before.json /tmp/after.json > $B/render-diff.txt
  exit
fi
if [ "$1" = bases ]; then shift; for v in "$@"; do bases $v; done; exit; fi
if [ "$1" = compare ]; then
  for pair in "old rules" "rules now"; do set -- $pair
    .venv/bin/python scripts/claim_bases.py compare runs/general/bases-$1.json runs/general/bases-$2.json \
      > $B/bases-moved-$1-$2.txt
  done
  exit
fi
for v in ${@:-old rules now}; do measure $v; done
