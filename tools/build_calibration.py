"""Fit the serving-throughput estimate's calibration on the catalog's measured rows and publish it.

Usage::

    python tools/build_calibration.py [--check] [--terms]

Fits eta_B, eta_F, o_dec, o_pre (and eta_moe) of ``pricing.estimate`` with the terms of
``pricing.calibration.FORM`` on every measured serving row of the shipped catalog whose model
has an architecture, computes each row's in-sample and leave-one-out ratio, and writes
``pricing/data/serving_calibration.json`` dated with the catalog's ``as_of``. ``--check`` writes
nothing and fails when the committed file differs from a refit. ``--terms`` prints the
leave-one-out error of the reference form, of each term alone, of the published form without
each of its terms and of the published form: the comparison that decides which terms it keeps.
``tests/test_calibration.py`` refits.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pricing import load_catalog
from pricing.calibration import FILE, FORM, evaluate, rows_of, to_json
from pricing.estimate import TERMS

OUT = Path(__file__).resolve().parents[1] / "pricing" / "data" / FILE


def build() -> str:
    """The published calibration's text, refitted on the shipped catalog."""
    catalog = load_catalog()
    return to_json(evaluate(rows_of(catalog), FORM, catalog.as_of))


def compare_terms() -> list[str]:
    """One line per candidate form: its terms, fitted constants and leave-one-out error."""
    catalog = load_catalog()
    rows = rows_of(catalog)
    lines = []
    drop_one = (tuple(t for t in FORM if t != left) for left in FORM)
    for terms in ((), *((t,) for t in TERMS), *drop_one, FORM):
        result = evaluate(rows, terms, catalog.as_of)
        cal = result.calibration
        lines.append(
            f"{' + '.join(terms) or 'reference form':36} LOO median {result.loo_median_pct:5.1f} % "
            f"sigma {result.sigma:.3f} (eta_B {cal.eta_b:.3f}, eta_F {cal.eta_f:.3f}, "
            f"o_dec {cal.o_dec_s:.4f} s, o_pre {cal.o_pre_s:.4f} s, eta_moe {cal.eta_moe:.3f}, "
            f"o_tp {cal.o_tp_s * 1e3:.2f} ms)"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the file differs")
    parser.add_argument("--terms", action="store_true", help="compare the candidate terms")
    args = parser.parse_args(argv)
    if args.terms:
        print("\n".join(compare_terms()))
        return 0
    text = build()
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"out of date: {FILE} (run tools/build_calibration.py)", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
