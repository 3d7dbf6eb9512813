# The measurements of docs/model-card.md, "A sentence's own arithmetic", from the
# repository root (data as in the model card: runs/toolctx, runs/ragtruth). Two versions:
#   old  3c7c757, the session's starting code:  git worktree add /tmp/old 3c7c757
#   now  the checkout
# (the console script puts PYTHONPATH before the checkout, so PYTHONPATH=/tmp/old runs it).
# Usage: bash run.sh [VERSION ...]   (default: old now);  bash run.sh bases;  bash run.sh prose
OLD=${OLD:-/tmp/old}
B=docs/benchmarks/selfcheck-2026-12-02
P=docs/model-card/paraphrases
SETS="cb cc cd ce cf cg ch ci cj ck cl cm cn co cp cq cr cs ct cu cv cw cx cy cz da db dc dd de"
pp() { [ $1 = old ] && echo $OLD; }
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
for v in ${@:-old now}; do
  # 3. Streamed through the proxy, every in-flight check at exit 4: the thirty newest
  #    hand-written sets before this session (turns-cb..-de).
  PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts $(for s in $SETS; do echo --data $P/turns-$s.jsonl; done) \
    --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/sets30-$v
  # 4. The blind pair written this session (turns-df/-dg), measured with old and now
  #    before anyone read it.
  PYTHONPATH=$(pp $v) .venv/bin/guardrail bench verdicts --data $P/turns-df.jsonl \
    --data $P/turns-dg.jsonl --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/dfdg-$v
  gzip -f $B/*-$v/sentences.jsonl
done
# 5. In flight, the judge's flags: generated tool turns and RAGTruth QA dev (prose); the
#    session's start is general-2026-12-02/judge-now.json (the same code for these).
#    PYTHONPATH= .venv/bin/guardrail judge eval --layers 4 --data runs/toolctx/dev.jsonl \
#      --data runs/toolctx/holdout.jsonl --data runs/ragtruth/derived_ragtruth_format@dev \
#      --out $B/judge-now.json
