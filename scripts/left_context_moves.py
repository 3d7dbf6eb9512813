"""How often a pcw check cannot read the answer so far that the check before it kept
(docs/context-states.md, "Left, and why").

    .venv/bin/python scripts/left_context_moves.py [STREAMS] [CONTEXT_TOKENS] [BUDGET STEP]

Replays the answers of `guardrail bench stream` (16 streams, 4096-token contexts by
default) sentence by sentence as the proxy cuts them, with the shipped
``scheduler.left_context_chars`` and the step a model that keeps the answer so far
gets, and counts the checks whose lookup key (the answer so far, as the pcw model
keeps it) is the key the stream's check before kept (reused), those whose left-context
start moved (the answer so far is read again), and those with nothing to look up
(the first). Also the answer tokens the checks run (a reused answer so far not counted)
and the characters of answer so far they read. BUDGET and STEP replace the defaults.
Runs no forward (seconds).
"""

import collections
import sys

from guardrail.bench import bench_documents, find_data_dir
from guardrail.bench.stream_workload import build_workloads
from guardrail.config import SchedulerConfig
from guardrail.evidence.claims import is_claim
from guardrail.model import DetectInput, Detector
from guardrail.model.prefixes import prefix_key
from guardrail.stream.segmenter import SentenceSegmenter
from guardrail.stream.textlog import TextLog

QUESTION = "What do the documents say?"  # the bench's question


def main() -> None:
    streams = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    tokens = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    det = Detector.from_pretrained("guardrail/models/pcw")
    cfg = SchedulerConfig()
    budget, step = cfg.left_context(keeps_answer=True)
    if len(sys.argv) > 4:
        budget, step = int(sys.argv[3]), int(sys.argv[4])
    docs, _ = bench_documents(find_data_dir("../shared/data"))
    counts: collections.Counter = collections.Counter()
    for w in build_workloads(det.tokenizer, docs, streams, tokens, 240, 0.1, 0):
        ctx = det.prepare_context(list(w.documents))
        seg = SentenceSegmenter()
        log = TextLog()
        log.append(w.answer)
        kept, base_before = None, None
        for s in seg.feed(w.answer) + seg.flush():
            if not (s.checkable and s.text.strip() and is_claim(s.text)):
                continue
            base, text = log.left_context(s.start, s.end, budget, step)
            context, _, q, r, pieces = det.inputs(DetectInput(ctx, QUESTION, text,
                                                              s.start - base))
            cuts = det._cuts(r, s.start - base)
            lookup = prefix_key(context.key, q.ids, r.ids[:cuts[0]]) \
                if cuts and len(pieces) == 1 else None
            counts["checks"] += 1
            counts["tokens run"] += len(r) - (cuts[0] if lookup and lookup == kept else 0)
            counts["left chars"] += s.start - base
            counts["first or split" if lookup is None else "reused" if lookup == kept
                   else "start moved" if base != base_before else "other"] += 1
            kept = prefix_key(context.key, q.ids, r.ids) if len(pieces) == 1 else None
            base_before = base
    print(f"{streams} streams x {tokens}-token contexts, left context {budget} chars in "
          f"steps of {step}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
