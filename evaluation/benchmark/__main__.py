"""``python -m evaluation.benchmark``: see ``evaluation.benchmark.cli``."""

import sys

from evaluation.benchmark.cli import main

if __name__ == "__main__":
    sys.exit(main())
