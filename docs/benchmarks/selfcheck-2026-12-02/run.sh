# The measurements of docs/model-card.md, "A sentence's own arithmetic", from the
# repository root (data as in the model card: runs/toolctx, runs/ragtruth). Versions:
#   old    3c7c757, the session's starting code:  git worktree add /tmp/old 3c7c757
#   check  the arithmetic check alone: d1b9093 for the 30 sets (sets30-check), 3200018
#          for the blind pair (dfdg-check): git worktree add /tmp/check <commit>
#   now    the checkout (with the field fixes: the session's end)
# (the console script puts PYTHONPATH before the checkout, so PYTHONPATH=<worktree> runs it).
# Usage: bash run.sh [VERSION ...] (default: old now);  bash run.sh bases;  bash run.sh prose
#        bash run.sh inflight [VERSION ...];  bash run.sh judge
OLD=${OLD:-/tmp/old}; CHECK=${CHECK:-/tmp/check}
B=docs/benchmarks/selfcheck-2026-12-02
P=docs/model-card/paraphrases
SETS="cb cc cd ce cf cg ch ci cj ck cl cm cn co cp cq cr cs ct cu cv cw cx cy cz da db dc dd de"
pp() { case $1 in old) echo $OLD;; check) echo $CHECK;; esac; }
if [ "$1" = bases ]; then
  # 1. No model: what each claim of every hand-written set written before this session
  #    and of the three generated families would rest on if flagged, old against now.
  for v in old now; do
    (cd /tmp && PYTHONPATH=$(pp $v) $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump \
      /tmp/bases-$v.json $(ls $OLDPWD/$P/turns*.jsonl | grep -v 'turns-d[fg]') \
      $OLDPWD/runs/toolctx/dev.jsonl $OLDPWD/runs/toolctx/holdout.jsonl $OLDPWD/runs/toolctx/calib.jsonl)
  done
  .venv/bin/python scripts/claim_bases.py compare /tmp/bases-old.json /tmp/bases-now.json > $B/bases-moved.txt
  exit
fi
if [ "$1" = prose ]; then
  # 2. No model: where the readings fire on prose (every sentence of two values or more of
  #    the RAGTruth subset, HaluEval, VitaminC, the passages, SummEdits, FaithBench), every
  #    value taken as one the grounding lacks (an upper bound: the proxy asks that one be).
  .venv/bin/python scripts/selfcheck_scan.py runs/ragtruth/ragtruth_test.json \
    data/external/halueval-qa.jsonl data/external/halueval-summarization.jsonl \
    data/external/vitaminc.jsonl data/external/passages.jsonl ../shared/data/summedits/*.json \
    ../shared/data/halueval_general/general_data.json ../shared/data/faithbench/data_for_release/* \
    > $B/prose-fired.txt
  exit
fi
if [ "$1" = inflight ]; then
  # 4. In flight, no batching: the judge's flags at exit 4 on the 32 newest hand-written
  #    sets (turns-cb..-dg), one check per sentence as the final report reads them.
  shift
  for v in ${@:-old now}; do
    PYTHONPATH=$(pp $v) .venv/bin/guardrail judge eval --layers 4 \
      $(for s in $SETS df dg; do echo --data $P/turns-$s.jsonl; done) --out $B/inflight32-$v.json
  done
  exit
fi
if [ "$1" = judge ]; then
  # 5. In flight: generated tool turns and RAGTruth QA dev (prose); the session's start is
  #    general-2026-12-02/judge-now.json (the same code for these).
  .venv/bin/guardrail judge eval --layers 4 --data runs/toolctx/dev.jsonl \
    --data runs/toolctx/holdout.jsonl --data runs/ragtruth/derived_ragtruth_format@dev \
    --out $B/judge-now.json
  exit
fi
for v in ${@:-old now}; do
  # 3. Streamed through the proxy, every in-flight check at exit 4: the thirty newest
  #    hand-written sets before this session (turns-cb..-de), and the blind pair written
  #    this session (turns-df/-dg), measured with old and check before anyone read it.
  PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts $(for s in $SETS; do echo --data $P/turns-$s.jsonl; done) \
    --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/sets30-$v
  PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts --data $P/turns-df.jsonl \
    --data $P/turns-dg.jsonl --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/dfdg-$v
  gzip -f $B/*-$v/sentences.jsonl
done
