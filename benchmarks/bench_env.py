"""Step and reset costs of fdenv, measured against CartPole-v1 in the same process.

    python benchmarks/bench_env.py [--room office] [--steps N] [--quick]

Kept so `make bench` and old notes keep working; the measurements live in ``fdenv.cli.bench``
(installed as ``fdenv-bench``), where the options and printed lines are described.
"""

import sys

from fdenv.cli.bench import main

if __name__ == "__main__":
    sys.exit(main())
