"""FLARE-style active retrieval with guardrail: a flagged sentence becomes a search of a
local corpus, and is rewritten from what the search found (see README.md)."""
