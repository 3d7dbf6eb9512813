"""Verification behind one seam (``engine.seam``): the cross-stream scheduler, its work
queue, the local baseline and prepared-context caching.  Importing this package does
not import torch; ``engine.build`` loads the model when an engine is built."""
