"""tools/refresh_catalog.py on a copy of pricing/data with the real SkyPilot excerpts."""

from __future__ import annotations

import csv
import datetime as dt
import importlib.util
import io
import os
import shutil
import sys
from pathlib import Path

import pytest

from pricing import read_catalog

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "pricing" / "data"
FIXTURES = Path(__file__).parent / "fixtures" / "prices"
TAKEN = dt.date(2026, 12, 1)  # the day the excerpts were taken: the importer's date for them
_spec = importlib.util.spec_from_file_location(
    "refresh_catalog", REPO / "tools" / "refresh_catalog.py"
)
refresh_catalog = importlib.util.module_from_spec(_spec)
sys.modules["refresh_catalog"] = refresh_catalog  # its dataclasses look their module up
_spec.loader.exec_module(refresh_catalog)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return Path(shutil.copytree(DATA, tmp_path / "data"))


@pytest.fixture
def sky(tmp_path: Path) -> list[str]:
    shutil.copytree(FIXTURES / "skypilot", tmp_path / "skypilot")
    stamp = dt.datetime.combine(TAKEN, dt.time(12), dt.UTC).timestamp()
    paths = [tmp_path / "skypilot" / "v9" / p / "vms.csv" for p in ("aws", "lambda", "nebius")]
    for path in paths:
        os.utime(path, (stamp, stamp))
    return [str(p) for p in paths]


def _run(data: Path, paths: list[str], *extra: str) -> int:
    argv = ["--from", "skypilot", *paths, "--data", str(data), "--version", "2026.12.14"]
    return refresh_catalog.main([*argv, *extra])


def _rows(path: Path) -> dict[str, dict[str, str]]:
    return {r["id"]: r for r in csv.DictReader(io.StringIO(path.read_text(encoding="utf-8")))}


def _snapshot(data: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(data.iterdir())}


SKY = "SkyPilot catalog https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master"
# The prices that move, read off the excerpts by hand (as in tests/test_prices_import.py): AWS
# spot in us-east-1 is the lowest of its zones, p3.2xlarge min(0.3644, 0.3709, 0.3764, 0.3718)
# = 0.3644, p3.16xlarge min(3.8232, 3.6504, 3.3454, 3.1942) = 3.1942, p5.4xlarge min(6.6034,
# 6.88, 5.4046) = 5.4046 (no spot price before); Lambda's one price of every region; Nebius's
# B200 spot 23.20. Relative changes: 0.3644/0.92 - 1 = -0.6039 -> -60.4%; 3.1942/7.34 - 1 =
# -0.5648 -> -56.5%; 1.99/1.29 - 1 = 0.5426 -> +54.3%; 15.92/10.32 - 1 = 0.5426 -> +54.3%;
# 4.29/3.29 - 1 = 0.3040 -> +30.4%.
MOVED = {
    ("aws/p3.2xlarge", "spot"): ("0.92", "0.3644", "-60.4%", "aws"),
    ("aws/p3.16xlarge", "spot"): ("7.34", "3.1942", "-56.5%", "aws"),
    ("aws/p5.4xlarge", "spot"): ("", "5.4046", "new price", "aws"),
    ("lambda/gpu_1x_a100", "on_demand"): ("1.29", "1.99", "+54.3%", "lambda"),
    ("lambda/gpu_8x_a100", "on_demand"): ("10.32", "15.92", "+54.3%", "lambda"),
    ("lambda/gpu_1x_h100_sxm5", "on_demand"): ("3.29", "4.29", "+30.4%", "lambda"),
    ("nebius/gpu-b200-sxm_8gpu-160vcpu-1792gb", "spot"): ("", "23.2", "new price", "nebius"),
}
# On-demand (and Nebius spot) prices the files confirm: their rows get the new date and source.
CONFIRMED = {
    "aws/p3.2xlarge", "aws/p3.16xlarge", "aws/p5.4xlarge", "lambda/gpu_1x_h100_pcie",
    "lambda/gpu_8x_h100_sxm5", "nebius/gpu-h100-sxm_1gpu-16vcpu-200gb",
    "nebius/gpu-h100-sxm_8gpu-128vcpu-1600gb", "nebius/gpu-h200-sxm_8gpu-128vcpu-1600gb",
    "nebius/gpu-b200-sxm_8gpu-160vcpu-1792gb",
}  # fmt: skip


def test_exactly_the_matched_rows_change_and_only_their_price_date_and_source(data, sky):
    before, lines_before = _rows(DATA / "instances.csv"), (DATA / "instances.csv").read_text()
    assert _run(data, sky) == 0
    after, lines_after = _rows(data / "instances.csv"), (data / "instances.csv").read_text()
    changed = {i for i in before if before[i] != after[i]}
    assert changed == {i for i, _ in MOVED} | CONFIRMED
    for (item, pricing), (old, new, _, _) in MOVED.items():
        column = f"{pricing}_usd_per_hour"
        assert (before[item][column], after[item][column]) == (old, new)
    for item in changed:
        diff = {k for k in before[item] if before[item][k] != after[item][k]}
        assert diff <= {"as_of", "source", "on_demand_usd_per_hour", "spot_usd_per_hour"}
        assert after[item]["as_of"] == "2026-12-01"  # every changed row had its on-demand
        assert SKY in after[item]["source"]
    # a confirmed price keeps its cell text (Nebius H200 "28", not "28.0")
    for item in CONFIRMED - {i for i, p in MOVED if p == "on_demand"}:
        assert after[item]["on_demand_usd_per_hour"] == before[item]["on_demand_usd_per_hour"]
    # every other line byte for byte
    unchanged = [a for a, b in zip(lines_before.splitlines(), lines_after.splitlines(), strict=True)
                 if a == b]  # fmt: skip
    assert len(unchanged) == len(lines_before.splitlines()) - len(changed)
    # the spot of p3.2xlarge is new, its reservations are not: the old citation is kept after
    assert after["aws/p3.2xlarge"]["source"].startswith(f"on_demand, spot (2026-12-01): {SKY}")
    assert after["aws/p3.2xlarge"]["source"].endswith(before["aws/p3.2xlarge"]["source"])
    # every price of p5.4xlarge came from the file: its source is the file's alone
    assert after["aws/p5.4xlarge"]["source"] == f"{SKY}/catalogs/v9/aws/vms.csv"


def test_the_changelog_lists_each_moved_price_and_the_unmapped_rows(data, sky):
    assert _run(data, sky) == 0
    changes = (data / "CHANGES.md").read_text(encoding="utf-8")
    old = (DATA / "CHANGES.md").read_text(encoding="utf-8")
    head, first = old.split("\n## ", 1)
    assert changes.startswith(head + "\n## 2026.12.14 — prices refreshed")
    assert changes.endswith("## " + first)  # the earlier entries follow, unchanged
    section = changes[len(head) : -len(first)]
    for (item, pricing), (before, after, change, folder) in MOVED.items():
        shown = before or "(none)"
        row = (f"| {item} | {pricing} | {shown} -> {after} | {change} | "
               f"{SKY}/catalogs/v9/{folder}/vms.csv | 2026-12-01 |")  # fmt: skip
        assert row in section
    assert "**Prices that moved** (7)" in section
    assert "**Confirmed unchanged** (12;" in section  # 9 rows' on-demand + 3 Nebius spot
    assert "no catalog instance 'aws/p5e.48xlarge'; closest: aws/p5en.48xlarge" in section
    assert "no catalog instance 'lambda/gpu_1x_b200_sxm6'" in section
    assert "5 rows of the files price no GPU instance" in section


def test_the_new_version_loads_with_the_new_prices(data, sky):
    assert _run(data, sky) == 0
    catalog = read_catalog(data)
    assert (catalog.version, catalog.as_of) == ("2026.12.14", "2026-12-14")
    assert catalog.instances["aws/p3.2xlarge"].spot_usd_per_hour == 0.3644
    assert catalog.instances["lambda/gpu_8x_a100"].on_demand_usd_per_hour == 15.92
    meta_before = (DATA / "catalog.json").read_text().splitlines()
    meta_after = (data / "catalog.json").read_text().splitlines()
    assert [i for i, (a, b) in enumerate(zip(meta_before, meta_after, strict=True)) if a != b] == [
        1,
        2,
    ]


def test_a_second_refresh_replaces_its_own_source_prefix(data, sky):
    assert _run(data, sky) == 0
    first = _rows(data / "instances.csv")["aws/p3.2xlarge"]["source"]
    assert refresh_catalog.main(["--from", "skypilot", sky[0], "--data", str(data),
                                 "--version", "2026.12.15"]) == 0  # fmt: skip
    assert _rows(data / "instances.csv")["aws/p3.2xlarge"]["source"] == first
    assert "## 2026.12.15" in (data / "CHANGES.md").read_text(encoding="utf-8")


def test_check_prints_the_changes_and_writes_nothing(data, sky, capsys):
    before = _snapshot(data)
    assert _run(data, sky, "--check") == 0
    out = capsys.readouterr().out
    assert "| aws/p3.2xlarge | spot | 0.92 -> 0.3644 | -60.4% |" in out
    assert "nothing was written" in out
    assert _snapshot(data) == before


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda t: t.replace("3.06,", "-3.06,", 1), "must be above 0"),
        (lambda t: t.rsplit(",", 3)[0], "truncated or malformed file"),
        (lambda t: t.replace("Price", "Cost", 1), "missing column(s)"),
    ],
)
def test_a_bad_file_leaves_the_catalog_untouched(data, sky, capsys, edit, says):
    before = _snapshot(data)
    path = Path(sky[0])
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    assert _run(data, sky) == 2
    err = capsys.readouterr().err
    assert says in err and "nothing was written" in err and path.name in err
    assert _snapshot(data) == before


def test_a_version_not_after_the_current_one_is_refused(data, sky, capsys):
    before = _snapshot(data)
    assert refresh_catalog.main(["--from", "skypilot", *sky, "--data", str(data),
                                 "--version", "2026.12.05"]) == 2  # fmt: skip
    assert "is not after the catalog's version 2026.12.05" in capsys.readouterr().err
    assert _snapshot(data) == before
