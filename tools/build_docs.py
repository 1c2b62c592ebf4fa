"""Rewrite the generated key reference in docs/scenario-format.md from the scenario schema.

    python tools/build_docs.py           # rewrite the section in place
    python tools/build_docs.py --check   # exit 1 when the file is out of date

The section lies between the two markers of :mod:`scenarios.keyref`; the rest of the file is
written by hand.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scenarios.keyref import BEGIN, END, key_reference

DOC = Path(__file__).resolve().parents[1] / "docs" / "scenario-format.md"


def rebuilt(text: str) -> str:
    """``text`` with its key-reference section replaced by the current one."""
    head, sep, rest = text.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not (sep and sep2):
        raise SystemExit(f"{DOC}: the key reference markers are missing")
    return head + key_reference() + tail


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 if stale")
    args = parser.parse_args()
    text = DOC.read_text(encoding="utf-8")
    new = rebuilt(text)
    if args.check:
        if new != text:
            print(f"{DOC} is out of date: run python tools/build_docs.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
