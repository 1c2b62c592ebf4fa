"""Compare the JSON result of every shipped example between this checkout and another one.

    python tools/diff_examples.py OTHER_CHECKOUT [--samples 4000] [--ignore origin,side]
        [--rtol 1e-12]

Each example (scenario or plan) is evaluated at its own seed with at most ``--samples`` draws,
once with this checkout's code and once with the other's (run from that checkout's folder with
the same Python), and the two JSON documents are compared: numbers exactly (or, with
``--rtol``, within that relative difference: a sum taken in another order moves the last
digits), every other value and every key added or removed listed by its path. Keys named in
``--ignore`` are passed over (for instance keys a change adds on purpose). Exit status 1 when
anything differs. This is how a refactor shows that it moved no number.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Run in a checkout's folder: write each example's result JSON into the folder argv[1].
_DUMP = """
import json, pathlib, sys
sys.path.insert(0, ".")
import scenarios
from costmodel.result import Result
if hasattr(Result, "to_dict"):
    to_dict = lambda r: r.to_dict()
else:
    from present import to_dict
out, cap = pathlib.Path(sys.argv[1]), int(sys.argv[2])
for path in sorted(pathlib.Path("scenarios/examples").glob("*.yaml")):
    for doc in scenarios.load_files(path):
        result = scenarios.evaluate(doc, samples=min(doc.samples, cap))
        (out / (doc.name.replace("/", "_") + ".json")).write_text(json.dumps(to_dict(result)))
"""


def _dump(checkout: Path, out: Path, samples: int) -> None:
    out.mkdir(parents=True)
    subprocess.run([sys.executable, "-c", _DUMP, str(out), str(samples)], cwd=checkout, check=True)


def _close(a: object, b: object, rtol: float) -> bool:
    """Whether numbers ``a`` and ``b`` are within ``rtol`` of each other (never for others)."""
    numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in (a, b))
    return numbers and abs(a - b) <= rtol * max(abs(a), abs(b))


def _walk(a: object, b: object, path: str, ignore: set[str], out: list[str], rtol: float) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted((set(a) | set(b)) - ignore):
            if key not in a or key not in b:
                out.append(f"{path}.{key}: {'added' if key not in a else 'removed'}")
            else:
                _walk(a[key], b[key], f"{path}.{key}", ignore, out, rtol)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _walk(x, y, f"{path}[{i}]", ignore, out, rtol)
    elif a != b and not _close(a, b, rtol):
        out.append(f"{path}: {str(a)[:60]!r} -> {str(b)[:60]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("other", type=Path, help="the checkout to compare against")
    parser.add_argument("--samples", type=int, default=4000, help="most draws per example")
    parser.add_argument("--ignore", default="", help="comma-separated keys to pass over")
    parser.add_argument(
        "--rtol", type=float, default=0.0, help="largest relative difference of equal numbers"
    )
    args = parser.parse_args()
    ignore = {k for k in args.ignore.split(",") if k}
    with tempfile.TemporaryDirectory() as tmp:
        theirs, ours = Path(tmp) / "other", Path(tmp) / "this"
        _dump(args.other.resolve(), theirs, args.samples)
        _dump(ROOT, ours, args.samples)
        moved = 0
        for path in sorted(theirs.glob("*.json")):
            mine = ours / path.name
            if not mine.exists():
                print(f"{path.stem}: not in this checkout")
                moved += 1
                continue
            out: list[str] = []
            theirs_json, mine_json = json.loads(path.read_text()), json.loads(mine.read_text())
            _walk(theirs_json, mine_json, "", ignore, out, args.rtol)
            print(f"{path.stem}: {'identical' if not out else f'{len(out)} differences'}")
            print("".join(f"    {line}\n" for line in out[:20]), end="")
            moved += bool(out)
    return 1 if moved else 0


if __name__ == "__main__":
    sys.exit(main())
