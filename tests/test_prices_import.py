"""Prices that stay current: importing public price files (the SkyPilot catalog's vms.csv, Azure
Retail Prices API pages, the AWS EC2 offer file) into a prices file, pulling them over HTTP,
keeping every import in the run store, and fitting the trend of a price.

The SkyPilot files are real excerpts (tests/fixtures/prices/README.md names their commits); the
two API fixtures are minimal pages with the documented fields. No test reaches the network: the
pull tests use servers of their own on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import http.server
import io
import json
import math
import os
import re
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from cli import main
from cli.commands import prices as prices_command
from pricing import CatalogError, apply_prices, load_catalog, read_prices
from pricing.importers import FORMATS, aws_offer, azure, match, skypilot
from pricing.prices import PriceEntry, write_prices
from pricing.trend import fit, suggestion
from scenarios.store import RunStore

FIXTURES = Path(__file__).parent / "fixtures" / "prices"
#: The day the SkyPilot excerpts were taken: the date the importer reads from their files.
TAKEN = dt.date(2026, 12, 1)
SKYPILOT_URL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs"


def _dated(path: Path, day: dt.date) -> Path:
    stamp = dt.datetime.combine(day, dt.time(12), dt.UTC).timestamp()
    os.utime(path, (stamp, stamp))
    return path


@pytest.fixture
def sky(tmp_path: Path) -> dict[str, Path]:
    """Copies of the three SkyPilot excerpts, dated the day they were taken."""
    shutil.copytree(FIXTURES / "skypilot", tmp_path / "skypilot")
    return {
        p: _dated(tmp_path / "skypilot" / "v9" / p / "vms.csv", TAKEN)
        for p in ("aws", "lambda", "nebius")
    }


def _import(tmp_path: Path, fmt: str, *paths: Path, extra: tuple[str, ...] = ()) -> int:
    out, db = tmp_path / "out.csv", tmp_path / "history.sqlite3"
    return main(["prices", "import", "--from", fmt, *map(str, paths), "-o", str(out),
                 "--db", str(db), *extra])  # fmt: skip


def _catalog_rows(capsys, *prices: str) -> dict[str, dict[str, str]]:
    assert main(["catalog", "instances", "--format", "csv", *prices]) == 0
    return {r["id"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}


def _prices(path: Path) -> dict[tuple[str, str], PriceEntry]:
    return {(e.id, e.pricing): e for e in read_prices(path)}


def test_the_import_formats_of_the_help_are_the_importers():
    assert tuple(sorted(FORMATS)) == prices_command.IMPORT_FORMATS


# ---------------------------------------------------------------------------------------------
# SkyPilot: three providers, exactly their rows


def test_three_providers_change_exactly_their_rows_of_the_catalog(tmp_path, sky, capsys):
    assert _import(tmp_path, "skypilot", sky["aws"], sky["lambda"], sky["nebius"]) == 0
    report = capsys.readouterr().out
    before = _catalog_rows(capsys)
    after = _catalog_rows(capsys, "--prices", str(tmp_path / "out.csv"))
    changed = {
        i: {k: (before[i][k], after[i][k]) for k in before[i] if before[i][k] != after[i][k]}
        for i in before
        if before[i] != after[i]
    }
    # The new values, read off the excerpts by hand. AWS, default region us-east-1 (the catalog
    # row's): the lowest spot price of its zones, p3.2xlarge min(0.3644, 0.3709, 0.3764,
    # 0.3718) = 0.3644, p3.16xlarge min(3.8232, 3.6504, 3.3454, 3.1942) = 3.1942, p5.4xlarge
    # min(6.6034, 6.88, 5.4046) = 5.4046 (no spot price in the catalog before); on-demand
    # 3.06 / 24.48 / 6.88 equal the catalog's, so those cells do not change. Lambda quotes one
    # price in every region and the catalog's "US (multi-region)" is none of them: that price.
    # Nebius: only the B200's spot price (23.20 in us-central1) is new.
    assert changed == {
        "aws/p3.2xlarge": {"spot_usd_per_hour": ("0.92", "0.3644")},
        "aws/p3.16xlarge": {"spot_usd_per_hour": ("7.34", "3.1942")},
        "aws/p5.4xlarge": {"spot_usd_per_hour": ("", "5.4046")},
        "lambda/gpu_1x_a100": {"on_demand_usd_per_hour": ("1.29", "1.99")},
        "lambda/gpu_8x_a100": {"on_demand_usd_per_hour": ("10.32", "15.92")},
        "lambda/gpu_1x_h100_sxm5": {"on_demand_usd_per_hour": ("3.29", "4.29")},
        "nebius/gpu-b200-sxm_8gpu-160vcpu-1792gb": {"spot_usd_per_hour": ("", "23.2")},
    }
    # no row appears or goes: every other row is the catalog's, other providers' included
    assert after.keys() == before.keys()
    # the unmapped rows are named with their closest catalog ids, the CPU rows counted
    assert "no catalog instance 'aws/p5e.48xlarge'; closest: aws/p5en.48xlarge" in report
    assert "'lambda/gpu_1x_b200_sxm6'; closest: lambda/gpu_8x_b200_sxm6" in report
    assert "skipped 5 rows that price no GPU instance" in report


def test_every_row_names_the_public_url_and_the_file_date(tmp_path, sky):
    assert _import(tmp_path, "skypilot", sky["aws"], sky["lambda"]) == 0
    got = _prices(tmp_path / "out.csv")
    spot = got[("aws/p3.2xlarge", "spot")]
    assert spot.source == f"SkyPilot catalog {SKYPILOT_URL}/v9/aws/vms.csv"
    assert spot.as_of == "2026-12-01"
    assert spot.note == (
        "region us-east-1, the lowest of 4 quotes; dated by the file: the source has no date"
    )
    assert got[("lambda/gpu_8x_a100", "on_demand")].note.startswith(
        "the same price in all 3 regions quoted"
    )
    assert {e.source for e in got.values()} == {
        f"SkyPilot catalog {SKYPILOT_URL}/v9/{p}/vms.csv" for p in ("aws", "lambda")
    }


def test_a_scenario_shows_the_imported_price_with_its_source_and_date(tmp_path, sky, capsys):
    assert _import(tmp_path, "skypilot", sky["aws"]) == 0
    doc = {
        "version": 1,
        "name": "spot-v100",
        "simulation": {"samples": 200, "seed": 1},
        "buy": {"gpu": "rtx-2080-ti", "gpu_count": 1},
        "rent": {"instance": "aws/p3.2xlarge", "pricing": "spot"},
    }
    scenario = tmp_path / "spot.yaml"
    scenario.write_text(yaml.safe_dump(doc), encoding="utf-8")
    capsys.readouterr()
    out = str(tmp_path / "out.csv")
    assert main(["run", str(scenario), "--prices", out, "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    rent = next(a for a in result["assumptions"] if a["key"] == "rent.price_usd_per_hour")
    assert rent["value"] == 0.3644
    assert rent["source"] == (
        f"out.csv: SkyPilot catalog {SKYPILOT_URL}/v9/aws/vms.csv (as of 2026-12-01)"
    )


@pytest.mark.parametrize(
    ("region", "expected", "unpriced"),
    [
        # cheapest: spot min over every zone, usw2-az3 0.3548 < use1-az1 0.3644; on demand
        # 3.06 in us-east-1, us-east-2 and us-west-2, the tie going to the first name
        ("cheapest", {("aws/p3.2xlarge", "spot"): (0.3548, "us-west-2"),
                      ("aws/p3.2xlarge", "on_demand"): (3.06, "us-east-1"),
                      ("aws/p5.4xlarge", "spot"): (2.1102, "eu-west-2")}, None),
        # one region for every instance: eu-west-1, spot min(0.8769, 0.8559); the p5.4xlarge is
        # not quoted there and its regions' prices differ, so it is reported, not guessed
        ("EU-West-1", {("aws/p3.2xlarge", "spot"): (0.8559, "eu-west-1"),
                       ("aws/p3.2xlarge", "on_demand"): (3.305, "eu-west-1"),
                       ("aws/p3.16xlarge", "spot"): (15.0825, "eu-west-1")}, "aws/p5.4xlarge"),
    ],
)  # fmt: skip
def test_the_region_can_be_chosen(tmp_path, sky, capsys, region, expected, unpriced):
    assert _import(tmp_path, "skypilot", sky["aws"], extra=("--region", region)) == 0
    got = _prices(tmp_path / "out.csv")
    for key, (value, where) in expected.items():
        assert got[key].value == value
        assert got[key].note.startswith(f"region {where}")
    report = capsys.readouterr().out
    if unpriced:
        assert not any(i == unpriced for i, _ in got)
        assert f"no price in region {region!r} and the regions' prices differ" in report


# ---------------------------------------------------------------------------------------------
# bad sources: a clear message naming the file and the row, and nothing written


def _edited(path: Path, old: str, new: str, count: int = 1) -> Path:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, count), encoding="utf-8")
    return path


P32_FIRST = "3.06,0.364400,us-east-1,use1-az1"  # line 24 of the AWS excerpt


def _cut(path: Path, line: int, chars: int) -> None:
    """The file as if its download stopped ``chars`` characters into line ``line``."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[: line - 1]) + lines[line - 1][:chars], encoding="utf-8")


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        # line 18 starts "p3.2xlarge,V100,1.0,8.0,61.0,"{'Gpus'..."
        (lambda p: _cut(p, 18, 28),
         "row 'line 18': has 5 fields where the header has 15: a truncated or malformed file"),
        (lambda p: _cut(p, 18, 60),
         "row 'line 18': malformed CSV (unexpected end of data): a truncated file?"),
        (lambda p: _edited(p, "p3.2xlarge,V100,", "p3.2xlarge,V100X,"),
         "row 'line 10', column 'AcceleratorName': unknown accelerator name 'V100X'; closest: "
         "V100"),
        (lambda p: _edited(p, "p3.2xlarge,V100,", "p3.2xlarge,A100,"),
         "row 'line 10', column 'AcceleratorName': accelerator 'A100' does not fit GPU "
         "'v100-sxm2-16gb' of catalog instance 'aws/p3.2xlarge'"),
        (lambda p: _edited(p, P32_FIRST, "0,0.364400,us-east-1,use1-az1"),
         "row 'line 24', column 'Price': a price of 0 USD/h: a price must be above 0"),
        (lambda p: _edited(p, P32_FIRST, "3.06,-0.36,us-east-1,use1-az1"),
         "row 'line 24', column 'SpotPrice': a price of -0.36 USD/h: a price must be above 0"),
        (lambda p: _edited(p, P32_FIRST, "3.06,n/a,us-east-1,use1-az1"),
         "row 'line 24', column 'SpotPrice': 'n/a' is not a number"),
        (lambda p: p.write_text("InstanceType,Price\np3.2xlarge,3.06\n"),
         "missing column(s) AcceleratorName, AcceleratorCount, Region: not a SkyPilot vms.csv"),
        # written into the prices file's note, which --prices then refused
        (lambda p: _edited(p, P32_FIRST, "3.06,0.364400,us-east-\x1b[31m1,use1-az1"),
         "row 'line 24', column 'Region': text holds the control character U+001B; remove it"),
        # the second Price column silently won
        (lambda p: _edited(p, "Price,SpotPrice,", "Price,Price,"),
         "the header names the column 'Price' twice"),
    ],
)  # fmt: skip
def test_a_bad_source_names_its_file_and_row_and_writes_nothing(tmp_path, sky, capsys, edit, says):
    out, db = tmp_path / "out.csv", tmp_path / "history.sqlite3"
    out.write_text("kept,as it was\n")
    edit(sky["aws"])
    assert _import(tmp_path, "skypilot", sky["lambda"], sky["aws"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {sky['aws']}") and says in err
    assert out.read_text() == "kept,as it was\n"  # untouched
    assert not db.exists()  # and nothing kept in the history


def test_an_import_never_writes_over_a_file_it_reads(tmp_path, sky, capsys):
    # "-o vms.csv" replaced the public price file with the prices file made of it
    before = sky["aws"].read_bytes()
    args = ["prices", "import", "--from", "skypilot", str(sky["lambda"]), str(sky["aws"])]
    assert main([*args, "-o", str(sky["aws"]), "--db", str(tmp_path / "h.sqlite3")]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {sky['aws']}: is the input {sky['aws']}; give the output another name\n"
    assert sky["aws"].read_bytes() == before
    assert not (tmp_path / "h.sqlite3").exists()


def test_the_catalog_ranges_hold_before_anything_is_written(tmp_path, sky, capsys):
    # an on-demand price above 10,000 USD/h is not one the catalog can hold
    _edited(sky["nebius"], "44.00,us-central1", "44000,us-central1")
    assert _import(tmp_path, "skypilot", sky["nebius"]) == 2
    assert capsys.readouterr().err == (
        f"error: {sky['nebius']}, row 'line 13': must be <= 10,000 [USD/h], got 44,000\n"
    )
    assert not (tmp_path / "out.csv").exists()


def test_a_file_that_matches_no_catalog_instance_is_an_error(tmp_path, sky, capsys):
    assert _import(tmp_path, "skypilot", sky["aws"], extra=("--provider", "lambda")) == 2
    err = capsys.readouterr()
    assert "no price of a catalog instance in" in err.err and "nothing was written" in err.err
    assert "no catalog instance 'lambda/p3.2xlarge'" in err.out
    assert not (tmp_path / "out.csv").exists()


def test_a_skypilot_file_needs_a_provider(tmp_path, capsys):
    path = shutil.copy(FIXTURES / "skypilot" / "v9" / "aws" / "vms.csv", tmp_path / "vms.csv")
    assert _import(tmp_path, "skypilot", Path(path)) == 2
    assert "its folder names no provider of the catalog; give --provider" in capsys.readouterr().err
    assert _import(tmp_path, "skypilot", Path(path), extra=("--provider", "aws")) == 0
    # the URL then names the default schema version
    assert next(iter(_prices(tmp_path / "out.csv").values())).source == (
        f"SkyPilot catalog {SKYPILOT_URL}/v8/aws/vms.csv"
    )


def test_the_writer_leaves_the_old_file_when_it_fails(tmp_path, monkeypatch):
    out = tmp_path / "p.csv"
    out.write_text("old\n")
    entry = PriceEntry("instance", "aws/p3.2xlarge", "spot", 0.5, "2026-12-01", "s", "", "")

    def refuse(*args):
        raise OSError("disk full")

    monkeypatch.setattr("pricing.wholefile.os.replace", refuse)
    with pytest.raises(OSError):
        write_prices(out, [entry])
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.csv"]  # no temporary file left


def test_what_is_written_reads_back_as_the_same_prices(tmp_path):
    entries = [
        PriceEntry("instance", "aws/p3.2xlarge", "spot", 0.3644, "2026-12-01", "a, b", "", "n"),
        PriceEntry("gpu", "rtx-4090", "purchase", 1750.0, "2026-10-15", "eBay", "", ""),
    ]
    write_prices(tmp_path / "p.csv", entries)
    back = read_prices(tmp_path / "p.csv")
    assert [(e.kind, e.id, e.pricing, e.value, e.as_of, e.source, e.note) for e in back] == [
        (e.kind, e.id, e.pricing, e.value, e.as_of, e.source, e.note) for e in entries
    ]


# ---------------------------------------------------------------------------------------------
# the two price APIs


def test_azure_pages_give_linux_on_demand_spot_and_reserved_hourly_prices(tmp_path, capsys):
    pages = [_dated(shutil.copy(FIXTURES / "azure" / n, tmp_path / n), TAKEN)
             for n in ("page-1.json", "page-2.json")]  # fmt: skip
    assert _import(tmp_path, "azure", *map(Path, pages)) == 0
    got = {k: v.value for k, v in _prices(tmp_path / "out.csv").items()}
    # a reservation's retailPrice is its whole term: 17,520 / 8,760 h = 2.0 and
    # 33,288 / (3 x 8,760) h = 1.2667 [USD/h]; Windows, Low Priority, Dev/Test and the D4s
    # (no GPU) are skipped; westeurope (3.366) is not the catalog row's East US
    assert got == {
        ("azure/standard_nc6s_v3", "on_demand"): 3.06,
        ("azure/standard_nc6s_v3", "spot"): 0.612,
        ("azure/standard_nc6s_v3", "reserved_1y"): 2.0,
        ("azure/standard_nc6s_v3", "reserved_3y"): pytest.approx(33288 / 26280),
        ("azure/standard_nc24ads_a100_v4", "on_demand"): 3.673,
        ("azure/standard_nc24ads_a100_v4", "spot"): 0.7346,
    }
    out = capsys.readouterr().out
    assert "skipped 4 rows" in out
    assert (
        "page-2.json, row 'Items[2]': no catalog instance 'azure/standard_nc40ads_h100_v5'" in out
    )
    assert _import(tmp_path, "azure", Path(pages[0]), extra=("--region", "westeurope")) == 0
    assert _prices(tmp_path / "out.csv")[("azure/standard_nc6s_v3", "on_demand")].value == 3.366


def test_aws_offer_gives_on_demand_and_standard_no_upfront_reservations(tmp_path):
    path = FIXTURES / "aws-offer" / "index.json"
    assert _import(tmp_path, "aws-offer", path) == 0
    got = _prices(tmp_path / "out.csv")
    # Windows, the convertible and the all-upfront terms and the m5.large are left out
    assert {k: v.value for k, v in got.items()} == {
        ("aws/p3.2xlarge", "on_demand"): 3.06,
        ("aws/p3.2xlarge", "reserved_1y"): 1.95,
        ("aws/p3.2xlarge", "reserved_3y"): 1.26,
        ("aws/p5.48xlarge", "on_demand"): 55.04,
        ("aws/p5.48xlarge", "reserved_1y"): 36.13,
    }
    first = got[("aws/p3.2xlarge", "on_demand")]
    assert first.as_of == "2026-11-28"  # the file's publicationDate
    assert first.note == "region us-east-1"  # dated by the source: nothing to say
    assert first.source == f"AWS Price List, EC2 offer 20261128000000 {aws_offer.URL}"


EUR = ('"currencyCode": "USD"', '"currencyCode": "EUR"')


@pytest.mark.parametrize(
    ("fmt", "name", "edit", "says"),
    [
        ("azure", "page-1.json", lambda t: t[:900],
         "row 'line 30': invalid JSON at column 30: Expecting ',' delimiter"),
        ("azure", "page-1.json", lambda t: t.replace('"retailPrice": 3.06', '"retailPrice": 0', 1),
         "row 'Items[0]', column 'retailPrice': a price of 0 USD/h"),
        ("azure", "page-1.json", lambda t: t.replace('"Items"', '"items"'),
         "has no 'Items' list: not a page of the Retail Prices API"),
        ("azure", "page-1.json", lambda t: t.replace(EUR[0], EUR[1], 1),
         "row 'Items[0]', column 'currencyCode': a price in 'EUR'"),
        ("aws-offer", "index.json", lambda t: t.replace('"3.0600000000"', '"-3.06"'),
         "row 'terms.OnDemand.SKUP32USE1.SKUP32USE1.JRTCKXETXF.SKUP32USE1.JRTCKXETXF.6YS6EN2CT7', "
         "column 'pricePerUnit.USD': a price of -3.06 USD/h"),
        ("aws-offer", "index.json", lambda t: t[: len(t) // 2], "invalid JSON at column"),
        ("aws-offer", "index.json", lambda t: t.replace('"3yr"', '"5yr"'),
         "column 'termAttributes.LeaseContractLength': unknown LeaseContractLength '5yr'; "
         "expected 1yr, 3yr"),
        ("azure", "page-1.json", lambda t: t.replace('"3 Years"', '"5 Years"'),
         "row 'Items[6]', column 'reservationTerm': unknown reservationTerm '5 Years'; expected "
         "1 Year, 3 Years"),
        ("aws-offer", "index.json", lambda t: t.replace('"gpu": "8"', '"gpu": "4"'),
         "column 'gpu': 4 GPUs, but catalog instance 'aws/p5.48xlarge' has 8"),
        # hand-edited JSON of another type: TypeError tracebacks
        ("aws-offer", "index.json", lambda t: t.replace('"gpu": "8"', '"gpu": ["8"]'),
         "column 'gpu': ['8'] is not a GPU count"),
        ("aws-offer", "index.json", lambda t: t.replace('"3yr"', '["3yr"]'),
         "column 'termAttributes.LeaseContractLength': unknown LeaseContractLength ['3yr']; "
         "expected 1yr, 3yr"),
        ("azure", "page-1.json", lambda t: t.replace('"eastus"', '"east\\u0007us"', 1),
         "row 'Items[0]', column 'armRegionName': text holds the control character U+0007"),
        ("aws-offer", "index.json", lambda t: t.replace('"us-east-1"', '"us-\\u001b-1"', 1),
         "row 'products.SKUP32USE1', column 'regionCode': text holds the control character "
         "U+001B"),
    ],
)  # fmt: skip
def test_bad_api_files_name_the_file_and_the_place(tmp_path, capsys, fmt, name, edit, says):
    folder = "azure" if fmt == "azure" else "aws-offer"
    path = tmp_path / name
    path.write_text(edit((FIXTURES / folder / name).read_text()), encoding="utf-8")
    assert _import(tmp_path, fmt, path) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}") and says in err
    assert not (tmp_path / "out.csv").exists()


def test_the_parsers_read_text_only():
    text = (FIXTURES / "azure" / "page-2.json").read_text()
    batch = azure.parse(text, file="p2.json", file_date="2026-12-01")
    assert (batch.file, batch.as_of, batch.dated, len(batch.quotes)) == ("p2.json", "2026-12-01",
                                                                         False, 3)  # fmt: skip
    assert (
        batch.quotes[0].row == "Items[0]" and batch.quotes[0].id == "azure/standard_nc24ads_a100_v4"
    )
    with pytest.raises(CatalogError, match="has 3 fields where the header has 9"):
        skypilot.parse(
            "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,"
            "SpotPrice\np3.2xlarge,V100,1\n",
            file="x.csv", provider="aws", source_url="u", file_date="2026-12-01",
        )  # fmt: skip


def test_match_keeps_the_lowest_zone_and_checks_the_count():
    text = (FIXTURES / "skypilot" / "v9" / "aws" / "vms.csv").read_text()
    batch = skypilot.parse(
        text, file="a.csv", provider="aws", source_url="u", file_date="2026-12-01"
    )
    got = match(load_catalog(), [batch])
    spot = {(e.id, e.pricing): e.value for e in got.entries}
    assert spot[("aws/p5.4xlarge", "spot")] == 5.4046  # min(6.6034, 6.88, 5.4046), us-east-1
    wrong = _edited_text(text, "p3.2xlarge,V100,1.0,", "p3.2xlarge,V100,4.0,")
    bad = skypilot.parse(
        wrong, file="a.csv", provider="aws", source_url="u", file_date="2026-12-01"
    )
    with pytest.raises(
        CatalogError, match="line 10.*4 GPUs, but catalog instance 'aws/p3.2xlarge' has 1"
    ):
        match(load_catalog(), [bad])


def _edited_text(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


def test_the_imported_prices_lay_over_the_catalog():
    text = (FIXTURES / "skypilot" / "v9" / "lambda" / "vms.csv").read_text()
    batch = skypilot.parse(
        text, file="l.csv", provider="lambda", source_url="u", file_date="2026-12-01"
    )
    mine = apply_prices(load_catalog(), match(load_catalog(), [batch]).entries)
    assert mine.instance("lambda/gpu_8x_a100").on_demand_usd_per_hour == 15.92
    assert load_catalog().instance("lambda/gpu_8x_a100").on_demand_usd_per_hour == 10.32


# ---------------------------------------------------------------------------------------------
# pull: downloads from servers of the test's own on 127.0.0.1


class _Mirror(http.server.BaseHTTPRequestHandler):
    """Serves the fixtures as the public locations lay them out."""

    files: dict[str, Path] = {}

    def do_GET(self):  # noqa: N802 (http.server's name)
        path, _, query = self.path.partition("?")
        if path == "/api/retail/prices":
            page = "page-2.json" if "skip=100" in query else "page-1.json"
            doc = json.loads((FIXTURES / "azure" / page).read_text())
            if doc["NextPageLink"]:
                host = self.headers["Host"]
                doc["NextPageLink"] = f"http://{host}/api/retail/prices?$skip=100"
            body = json.dumps(doc).encode()
        elif path in self.files:
            body = self.files[path].read_bytes()
        else:
            self.send_error(404, "Not Found")
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def _serve(handler) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _pull(tmp_path: Path, *args: str) -> int:
    return main(["prices", "pull", *args, "-o", str(tmp_path / "out.csv"),
                 "--db", str(tmp_path / "history.sqlite3"), "--timeout", "5"])  # fmt: skip


def test_pull_downloads_the_public_files_and_imports_them(tmp_path, capsys, monkeypatch):
    sky = FIXTURES / "skypilot" / "v9"
    monkeypatch.setattr(_Mirror, "files", {
        "/catalogs/v8/aws/vms.csv": sky / "aws" / "vms.csv",
        "/catalogs/v8/lambda/vms.csv": sky / "lambda" / "vms.csv",
    })  # fmt: skip
    with _serve(_Mirror) as base:
        assert _pull(tmp_path, "aws", "lambda", "azure", "--base-url", base) == 0
    got = _prices(tmp_path / "out.csv")
    assert got[("aws/p3.2xlarge", "spot")].value == 0.3644
    assert got[("lambda/gpu_8x_a100", "on_demand")].value == 15.92
    assert got[("azure/standard_nc24ads_a100_v4", "spot")].value == 0.7346  # from page 2
    # the rows name the public locations, not the mirror, and are dated the day of the pull
    assert (
        got[("aws/p3.2xlarge", "spot")].source == f"SkyPilot catalog {SKYPILOT_URL}/v8/aws/vms.csv"
    )
    assert (
        got[("azure/standard_nc6s_v3", "on_demand")].source
        == f"Azure Retail Prices API {azure.URL}"
    )
    assert {e.as_of for e in got.values()} == {dt.datetime.now(dt.UTC).date().isoformat()}
    assert "wrote" in capsys.readouterr().out


def test_pull_offline_is_a_clear_error_and_writes_nothing(tmp_path, capsys):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert _pull(tmp_path, "aws", "--base-url", f"http://127.0.0.1:{port}/") == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: cannot download http://127.0.0.1:{port}/catalogs/v8/aws/vms.csv: "
    )
    assert "(offline?)" in err
    assert not (tmp_path / "out.csv").exists()
    assert not (tmp_path / "history.sqlite3").exists()


def test_pull_gives_up_after_the_timeout(tmp_path, capsys):
    with socket.socket() as listener:  # accepts the connection and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        code = main(["prices", "pull", "lambda", "-o", str(tmp_path / "out.csv"), "--db",
                     str(tmp_path / "h.sqlite3"), "--timeout", "0.3",
                     "--base-url", f"http://127.0.0.1:{port}/"])  # fmt: skip
    assert code == 2
    assert "no answer within 0.3 s (offline?)" in capsys.readouterr().err
    assert not (tmp_path / "out.csv").exists()


class _CutShort(http.server.BaseHTTPRequestHandler):
    """Promises a whole file and sends its first bytes only."""

    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", "100000")
        self.end_headers()
        self.wfile.write(b"InstanceType,AcceleratorName")
        self.close_connection = True

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("handler", [_CutShort, _Mirror])
def test_a_download_cut_short_or_missing_writes_nothing(tmp_path, capsys, monkeypatch, handler):
    out = tmp_path / "out.csv"
    out.write_text("kept\n")
    aws = FIXTURES / "skypilot" / "v9" / "aws" / "vms.csv"
    monkeypatch.setattr(_Mirror, "files", {"/catalogs/v8/aws/vms.csv": aws})
    with _serve(handler) as base:
        assert _pull(tmp_path, "aws", "nebius", "--base-url", base) == 2  # no nebius file: 404
    err = capsys.readouterr().err
    assert err.startswith("error: cannot download http://127.0.0.1:")
    assert ("HTTP 404" in err) == (handler is _Mirror)
    assert out.read_text() == "kept\n"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        # OverflowError tracebacks from the socket's timeout
        (["--timeout", "inf"], "--timeout must be a positive number of seconds, at most 3,600"),
        (["--timeout", "1e20"], "--timeout must be a positive number of seconds, at most 3,600"),
        # ValueError tracebacks from urllib, before any download
        (["--base-url", "[red]"], "--base-url '[red]': not a URL of a mirror (no scheme); e.g. "
         "https://mirror.example/skypilot-catalog"),
        (["--base-url", "http://[::1"], "--base-url 'http://[::1': not a URL of a mirror "
         "(Invalid IPv6 URL)"),
    ],
)  # fmt: skip
def test_pull_refuses_a_timeout_or_mirror_it_cannot_use(tmp_path, capsys, args, says):
    out, db = str(tmp_path / "out.csv"), str(tmp_path / "history.sqlite3")
    assert main(["prices", "pull", "aws", "-o", out, "--db", db, *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err and err.count("\n") == 1
    assert not (tmp_path / "out.csv").exists()


def test_pull_names_the_providers_it_knows(tmp_path, capsys):
    assert _pull(tmp_path, "coreweave") == 2
    assert "unknown provider 'coreweave'; valid: aws, azure, gcp, lambda" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# history and trend


def test_trend_of_a_hand_computed_case():
    # t = 0, 4, 8 years (1,461 days apart); ln p = ln 10, ln 8, ln 7. S_tt = 16 + 0 + 16 = 32,
    # b = (-4 ln 10 + 4 ln 7) / 32 = ln(0.7) / 8 = -0.0445844 [1/year]. The middle residual is
    # ln 8 - ln(560)/3 = -0.0298707, the outer two half of it with the other sign, so
    # s^2 = 1.5 x 0.0298707^2 / (3 - 2) = 0.00133839 and se(b) = sqrt(s^2 / 32) = 0.0064672.
    # Annual change exp(b) - 1 = -0.0436051, its standard error exp(b) se(b) = 0.0061852.
    days = [dt.date(2018, 1, 1), dt.date(2022, 1, 1), dt.date(2026, 1, 1)]
    trend = fit(days, [10.0, 8.0, 7.0])
    assert trend.rate == pytest.approx(math.log(0.7) / 8, rel=1e-12)
    assert trend.rate_se == pytest.approx(0.0064672, rel=1e-4)
    assert trend.annual_change == pytest.approx(-0.0436051, rel=1e-5)
    assert trend.annual_change_se == pytest.approx(0.0061852, rel=1e-4)
    assert (trend.dates, trend.span_years) == (3, 8.0)
    assert suggestion(trend) == (
        "rent.price_annual_change: {dist: normal, mean: -0.04361, sd: 0.00619, low: -0.99, "
        "high: 10}"
    )


def test_trend_edge_cases():
    day = dt.date(2026, 1, 1)
    assert fit([day], [3.0]) is None
    assert fit([day, day], [3.0, 2.0]) is None  # one date, twice
    # an exact exponential decline: no scatter, a standard error of 0; a date seen twice counts
    # once with its last price (10 x 0.9^4 = 6.561 at 4 years, 10 x 0.9^8 at 8)
    days = [dt.date(2018, 1, 1), dt.date(2022, 1, 1), dt.date(2022, 1, 1), dt.date(2026, 1, 1)]
    trend = fit(days, [10.0, 99.0, 6.561, 10 * 0.9**8])
    assert trend.annual_change == pytest.approx(-0.1, rel=1e-12)
    assert trend.annual_change_se == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="positive"):
        fit([day, day], [1.0, 0.0])


def test_history_prints_every_import_and_the_fitted_change(tmp_path, sky, capsys):
    # the Lambda excerpt imported on three dates four years apart, its A100 price 10, 8, 7
    for day, usd in ((dt.date(2018, 1, 1), "10"), (dt.date(2022, 1, 1), "8"),
                     (dt.date(2026, 1, 1), "7")):  # fmt: skip
        text = (FIXTURES / "skypilot" / "v9" / "lambda" / "vms.csv").read_text()
        sky["lambda"].write_text(
            text.replace(",1.99,europe-central-1,", f",{usd},europe-central-1,")
        )
        _dated(sky["lambda"], day)
        assert _import(tmp_path, "skypilot", sky["lambda"]) == 0
    capsys.readouterr()
    chart = tmp_path / "a100.png"
    db = str(tmp_path / "history.sqlite3")
    assert main(["prices", "history", "LAMBDA/gpu_1x_a100", "--db", db, "--chart", str(chart)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"2018-01-01 +10\.0000 +SkyPilot", out)  # 8 / 10 - 1 = -20 %, 7 / 8 - 1:
    assert re.search(r"2022-01-01 +8\.0000 +-20\.0% ", out) and re.search(r" -12\.5% ", out)
    assert "trend: -4.4% a year, standard error 0.6%, from 3 dates over 8.0 years" in out
    assert "price_annual_change: {dist: normal, mean: -0.04361, sd: 0.00619" in out
    assert chart.read_bytes()[:4] == b"\x89PNG"
    assert main(["prices", "history", "lambda/gpu_1x_a10", "--db", db]) == 2
    assert "did you mean 'lambda/gpu_1x_a100'?" in capsys.readouterr().err


def test_history_of_a_catalog_id_never_imported_suggests_no_other_id(tmp_path, capsys):
    # it said "did you mean 'aws/p3.2xlarge'?" of aws/p3.2xlarge itself
    db = str(tmp_path / "history.sqlite3")
    assert main(["prices", "history", "AWS/p3.2xlarge", "--db", db]) == 2
    assert capsys.readouterr().err == (
        f"error: no price of 'AWS/p3.2xlarge' in the price history of {db} (import prices with "
        "'costmodel prices import' or 'costmodel prices pull')\n"
    )
    assert main(["prices", "history", "aws/p3.2xlarg", "--db", db]) == 2
    err = capsys.readouterr().err
    assert "is no catalog instance id; did you mean 'aws/p3.2xlarge'?" in err


def test_the_price_history_is_kept_in_either_store(store_location):
    first = [PriceEntry("instance", "aws/p3.2xlarge", "spot", 0.92, "2025-06-01", "a", "", "")]
    second = [
        PriceEntry("instance", "aws/p3.2xlarge", "spot", 0.3644, "2026-12-01", "b", "", ""),
        PriceEntry("instance", "aws/p3.2xlarge", "on_demand", 3.06, "2026-12-01", "b", "", ""),
    ]
    with RunStore(store_location) as store:
        one, two = store.add_prices(second), store.add_prices(first)
        assert one != two
        spot = store.price_history("AWS/p3.2xlarge", "spot")
        assert [(o.as_of, o.usd, o.source, o.import_id) for o in spot] == [
            ("2025-06-01", 0.92, "a", two),
            ("2026-12-01", 0.3644, "b", one),
        ]
        assert len(store.price_history("aws/p3.2xlarge")) == 3
        assert store.price_history("aws/p3.8xlarge") == []
        with pytest.raises(ValueError, match="must be positive"):
            store.add_prices(
                [PriceEntry("instance", "x/y", "spot", 0.0, "2026-12-01", "s", "", "")]
            )
