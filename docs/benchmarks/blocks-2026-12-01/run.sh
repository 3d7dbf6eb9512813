# The measurements of docs/model-card.md, "A tool result as agents send it", from the
# repository root. OLD: a worktree of 893bd3e (the session's starting code), e.g.
#   git worktree add /tmp/old 893bd3e
# (the console script puts PYTHONPATH before the checkout, so PYTHONPATH=$OLD runs it).
OLD=${OLD:-/tmp/old}
P=docs/model-card/paraphrases
SETS="cr cs ct cu cv cw cx cy"
mkdir -p runs/wrap
cp runs/toolctx/holdout.jsonl runs/wrap/holdout-raw.jsonl
for s in $SETS; do cp $P/turns-$s.jsonl runs/wrap/turns-$s-raw.jsonl; done
for how in fence label repr; do
  .venv/bin/python scripts/wrap_contexts.py runs/toolctx/holdout.jsonl runs/wrap/holdout-$how.jsonl --how $how
  for s in $SETS; do
    .venv/bin/python scripts/wrap_contexts.py $P/turns-$s.jsonl runs/wrap/turns-$s-$how.jsonl --how $how
  done
done
judge() {  # code (old|new), form (raw|fence|label|repr), output name
  local pp=""; [ "$1" = old ] && pp=$OLD
  PYTHONPATH=$pp .venv/bin/guardrail judge eval --layers 4 --limit 200 \
    --data runs/wrap/holdout-$2.jsonl $(for s in $SETS; do echo --data runs/wrap/turns-$s-$2.jsonl; done) \
    --out docs/benchmarks/blocks-2026-12-01/judge-$3.json
}
judge new raw raw-new
for how in fence label repr; do judge old $how $how-old; judge new $how $how-new; done
python3 docs/benchmarks/blocks-2026-12-01/pool.py docs/benchmarks/blocks-2026-12-01/judge-*.json
# streamed through the proxy, every in-flight check at exit 4: stream-*/verdicts.json
for how in raw fence repr; do for code in old new; do
  [ $how = raw ] && [ $code = old ] && continue
  pp=""; [ $code = old ] && pp=$OLD
  PYTHONPATH=$pp .venv/bin/guardrail bench verdicts $(for s in $SETS; do echo --data runs/wrap/turns-$s-$how.jsonl; done) \
    --config docs/benchmarks/by-basis/fixed-exit.yaml --out docs/benchmarks/blocks-2026-12-01/stream-$how-$code
done; done
# the blind pair, before anything of the session and at its end
for code in old new; do
  pp=""; [ $code = old ] && pp=$OLD
  PYTHONPATH=$pp .venv/bin/guardrail bench verdicts --data $P/turns-cz.jsonl --data $P/turns-da.jsonl \
    --config docs/benchmarks/by-basis/fixed-exit.yaml --out runs/blind43/czda-$([ $code = old ] && echo base || echo new)
done
# which documents the change reads differently (no model)
(cd /tmp && PYTHONPATH=$OLD $OLDPWD/.venv/bin/python $OLDPWD/scripts/render_diff.py dump /tmp/before.json \
  && PYTHONPATH=$OLDPWD $OLDPWD/.venv/bin/python $OLDPWD/scripts/render_diff.py dump /tmp/after.json)
.venv/bin/python scripts/render_diff.py compare /tmp/before.json /tmp/after.json
