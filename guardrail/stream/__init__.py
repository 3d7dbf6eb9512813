"""One answer, no I/O: SSE codec, typed chunks, sentence segmenter, the answer's ledger,
pure policy (verdict -> action) and the pipeline joining them."""
