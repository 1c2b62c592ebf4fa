"""Score the training-throughput estimation rule on the catalog's measured figures and publish it.

Usage::

    python tools/build_training_error.py [--check]

Hides each measured relative training throughput of the shipped catalog in turn, predicts it
by the rule of ``pricing.throughput`` from what is left (``pricing.training_error``), and writes
each figure's ratio, the median error and sigma to ``pricing/data/training_error.json``.
``--check`` writes nothing and fails when the committed file differs from a refit;
``tests/test_throughput_error.py`` refits.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pricing import load_catalog
from pricing.training_error import FILE, leave_one_out, to_json

OUT = Path(__file__).resolve().parents[1] / "pricing" / "data" / FILE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the file differs")
    args = parser.parse_args(argv)
    result = leave_one_out(load_catalog())
    text = to_json(result)
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"out of date: {FILE} (run tools/build_training_error.py)", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(
        f"wrote {OUT}: {len(result.loo)} figures, median error {result.loo_median_pct:.1f} %, "
        f"sigma {result.sigma:.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
