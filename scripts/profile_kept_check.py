"""Where one kept check's time goes (docs/context-states.md, "Profiled again").

    .venv/bin/python scripts/profile_kept_check.py [CONTEXT_TOKENS]

The shipped PCW model (answer blocks) on a cached context of the benchmark documents
(`guardrail bench context`'s): the check before keeps the answer so far, then one
sentence's check at exit 4 is timed 30 times and profiled with cProfile (the top
functions by own time: the fused attention kernel and the linear layers).
"""

import cProfile
import pstats
import sys
import time

import torch

from guardrail.bench import bench_documents, find_data_dir
from guardrail.bench.context import QUESTION, SENTENCES, _context
from guardrail.model import DetectInput, PcwDetector

torch.set_num_threads(2)
size = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
pcw = PcwDetector.from_pretrained("pcw", device="cpu")
docs, _ = bench_documents(find_data_dir("../shared/data"))
ctx = _context(pcw, docs, size)
pcw.states.get(ctx.key, lambda: pcw.encode_context(ctx))
response = " ".join(SENTENCES[i % len(SENTENCES)] for i in range(4))
start = len(response) - len(SENTENCES[3 % len(SENTENCES)])
prior = response[:start].rstrip()
pcw.detect_batch([DetectInput(ctx, QUESTION, prior, prior.rfind(". ") + 2)])  # keeps it
seqs = list(pcw.prepare(DetectInput(ctx, QUESTION, response, start)).sequences)
assert seqs[0].prefix is not None, "the answer so far was not kept"
for _ in range(5):
    pcw.forward(seqs, 4)
t0 = time.perf_counter()
for _ in range(30):
    pcw.forward(seqs, 4)
print(f"{size} tokens, {len(seqs[0])} query tokens: "
      f"{(time.perf_counter() - t0) / 30 * 1000:.1f} ms per kept check at exit 4")
prof = cProfile.Profile()
prof.enable()
for _ in range(30):
    pcw.forward(seqs, 4)
prof.disable()
pstats.Stats(prof).sort_stats("tottime").print_stats(6)
