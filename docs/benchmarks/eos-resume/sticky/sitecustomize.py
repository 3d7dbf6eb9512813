"""For one benchmark only: with GR_STICKY=1 set, a PCW model's checks stay at the exit
their answer so far was kept at (the rule before deepening), in every process started
with this directory on PYTHONPATH (the bench's proxy included).  Not part of guardrail.

    GR_STICKY=1 PYTHONPATH=docs/benchmarks/eos-resume/sticky guardrail bench stream ...
"""
import os

if os.environ.get("GR_STICKY"):
    import guardrail.model.pcw as pcw

    pcw.PcwDetector.deepens_answer = property(lambda self: False)
