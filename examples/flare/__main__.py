"""``python -m examples.flare``: the whole example (see run.py)."""

import sys

from examples.flare.run import main

sys.exit(main())
