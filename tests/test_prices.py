"""The user's own prices: reading a prices file, laying it over the catalog, which value wins,
where each value says it came from, stale prices, unknown ids, and the three doors (Python, the
command line with --prices, HTTP with COSTMODEL_PRICES)."""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import io
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pricing.prices
import scenarios
from api import create_app
from cli import main
from pricing import CatalogError, apply_prices, load_catalog, read_prices
from pricing.prices import PriceEntry, months_after
from scenarios.advice import stale_price
from scenarios.executor import Job, _execute

ROOT = Path(__file__).resolve().parents[1]
TODAY = dt.date.today()

#: A lab scenario: 1x RTX 2080 Ti against a 1-year reservation of aws/p3.8xlarge, every price
#: left to the catalog.
LAB = {
    "version": 1,
    "name": "lab",
    "simulation": {"samples": 200, "seed": 1},
    "buy": {"gpu": "rtx-2080-ti", "gpu_count": 1},
    "rent": {"instance": "aws/p3.8xlarge", "pricing": "reserved_1y"},
}


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _prices_csv(tmp_path: Path, as_of: str | None = None, name: str = "prices.csv") -> Path:
    day = as_of or TODAY.isoformat()
    return _write(
        tmp_path / name,
        "instance,pricing,usd_per_hour,gpu,usd,as_of,source\n"
        f"aws/p3.8xlarge,reserved_1y,6.00,,,{day},AWS EDP quote Q3\n"
        f",,,rtx-2080-ti,850,{day},eBay median of 40 sales\n",
    )


def _assumption(resolved, key: str):
    return next(a for a in resolved.assumptions if a.key == key)


# ------------------------------------------------------------------------------------ reading


def test_csv_and_yaml_read_the_same_prices(tmp_path):
    csv_entries = read_prices(_prices_csv(tmp_path, "2026-01-15"))
    yaml_path = _write(
        tmp_path / "prices.yaml",
        "- {instance: aws/p3.8xlarge, pricing: reserved_1y, usd_per_hour: 6.00,\n"
        "   as_of: 2026-01-15, source: AWS EDP quote Q3}\n"
        "- gpu: RTX-2080-Ti\n"
        "  usd: 850\n"
        "  as_of: 2026-01-15\n"
        "  source: eBay median of 40 sales\n",
    )
    yaml_entries = read_prices(yaml_path)
    strip = [(e.kind, e.id, e.pricing, e.value, e.as_of, e.source) for e in csv_entries]
    assert strip == [(e.kind, e.id, e.pricing, e.value, e.as_of, e.source) for e in yaml_entries]
    assert strip[1] == ("gpu", "rtx-2080-ti", "purchase", 850.0, "2026-01-15", strip[1][5])
    assert [e.row for e in yaml_entries] == ["line 1", "line 3"]
    assert [e.row for e in csv_entries] == ["line 2", "line 3"]


def test_a_file_of_one_kind_needs_only_its_columns(tmp_path):
    path = _write(tmp_path / "gpus.csv", "gpu,usd,as_of,source\nrtx-3090,999,2026-02-01,quote\n")
    (entry,) = read_prices(path)
    assert (entry.id, entry.pricing, entry.value) == ("rtx-3090", "purchase", 999.0)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            "instance,pricing,usd_per_hour,as_of,source\naws/p3.2xlarge,ondemand,3,2026-01-01,q\n",
            "line 2', column 'pricing': unknown pricing 'ondemand'; valid: on_demand, spot, "
            "reserved_1y, reserved_3y; did you mean 'on_demand'?",
        ),
        (
            "instance,pricing,usd_per_hour,as_of,source\naws/p3.2xlarge,spot,3,2026-13-01,q\n",
            "column 'as_of': '2026-13-01' is not an ISO date (YYYY-MM-DD)",
        ),
        (
            "instance,pricing,usd_per_hour,as_of,source\naws/p3.2xlarge,spot,cheap,2026-01-01,q\n",
            "column 'usd_per_hour': 'cheap' is not a number",
        ),
        (
            "instance,pricing,usd_per_hour,as_of,source\naws/p3.2xlarge,spot,3,2026-01-01,\n",
            "column 'source': is required",
        ),
        (
            "instance,pricing,usd_per_hour,as_of,source\n"
            "aws/p3.2xlarge,spot,3,2026-01-01,a\naws/p3.2xlarge,spot,2,2026-02-01,b\n",
            "line 3', column 'instance': a second spot price of 'aws/p3.2xlarge' (first at line 2)",
        ),
        ("instance,price,as_of,source\n", "unexpected column(s): price; valid: instance"),
        ("gpu,usd,source\nrtx-3090,1,q\n", "missing column(s): as_of"),
        (
            "instance,gpu,pricing,usd_per_hour,usd,as_of,source\n"
            "aws/p3.2xlarge,t4,spot,1,,2026-01-01,q\n",
            "a row prices either an instance or a GPU, not both",
        ),
        ("gpu,usd,as_of,source\n", "holds no prices"),
        (  # kept into the results: an XLSX report of them was an IllegalCharacterError
            "gpu,usd,as_of,source,note\nrtx-3090,1,2026-01-01,my\x01quote,\x1b[31m\n",
            "line 2', column 'source': text holds the control character U+0001; remove it",
        ),
    ],
)
def test_bad_rows_name_the_file_row_and_column(tmp_path, text, says):
    path = _write(tmp_path / "mine.csv", text)
    with pytest.raises(CatalogError) as err:
        read_prices(path)
    assert str(err.value).startswith(str(path))
    assert says in str(err.value)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (  # YAML read it as a date: a ValueError traceback ("day is out of range for month")
            "- {gpu: rtx-3090, usd: 999, as_of: 2026-02-30, source: q}\n",
            "line 1', column 'as_of': '2026-02-30' is not an ISO date (YYYY-MM-DD)",
        ),
        (  # the second one silently won
            "- instance: aws/p3.8xlarge\n  instance: aws/p3.2xlarge\n  pricing: spot\n"
            "  usd_per_hour: 1\n  as_of: 2026-01-01\n  source: q\n",
            "line 2', column 'instance': duplicate key",
        ),
        (
            '- {gpu: rtx-3090, usd: 999, as_of: 2026-01-01, source: q, note: "a\\x1bb"}\n',
            "line 1', column 'note': text holds the control character U+001B; remove it",
        ),
        (
            '- {gpu: rtx-3090, usd: 999, as_of: 2026-01-01, source: "\\ud800"}\n',
            "column 'source': text holds the unpaired surrogate \\ud800",
        ),
        (  # a raw control character: PyYAML's ReaderError traceback
            "- {gpu: rtx-3090, usd: 999, as_of: 2026-01-01, source: a\x01b}\n",
            "invalid YAML: unacceptable character #x0001: special characters are not allowed",
        ),
        (  # an integer of 5,000 digits: a ValueError traceback
            f"- {{gpu: rtx-3090, usd: 9{'9' * 5000}, as_of: 2026-01-01, source: q}}\n",
            "invalid YAML: a value cannot be read: Exceeds the limit (4300 digits)",
        ),
    ],
)
def test_bad_yaml_prices_name_the_file_row_and_column(tmp_path, text, says):
    path = _write(tmp_path / "mine.yaml", text)
    with pytest.raises(CatalogError) as err:
        read_prices(path)
    assert str(err.value).startswith(str(path))
    assert says in str(err.value)


_COLUMNS = ["instance", "pricing", "usd_per_hour", "gpu", "usd", "as_of", "source", "note"]
_CELLS = st.sampled_from(
    ["aws/p3.2xlarge", "rtx-4090", "on_demand", "spot", "2026-01-01", "2026-02-30",
     "9999-12-31", "1.5", "0", "-1", "nan", "1e400", "", "x\x01", '"', "a,b", "\n"]
) | st.text(max_size=8)  # fmt: skip
_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | _CELLS
_KEYS = st.sampled_from([*_COLUMNS, "x"])
_ROWS = st.dictionaries(_KEYS, _SCALARS | st.lists(_SCALARS), max_size=8)


def _csv_text(header: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out).writerows([header, *rows])
    return out.getvalue()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(["prices.csv", "prices.yaml"]),
    text=st.builds(
        _csv_text,
        st.lists(st.sampled_from([*_COLUMNS, "x", ""]), max_size=9),
        st.lists(st.lists(_CELLS, max_size=9), max_size=4),
    )
    | st.lists(_ROWS | _SCALARS, max_size=4).map(lambda y: yaml.safe_dump(y, allow_unicode=True))
    | st.text(max_size=200),
)
def test_a_prices_file_raises_only_catalog_errors(tmp_path, name, text):
    # found a raw control character in YAML: PyYAML's ReaderError, not a CatalogError
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    with contextlib.suppress(CatalogError):
        apply_prices(load_catalog(), read_prices(path))


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path, monkeypatch):
    # read whole: --prices on an endless file (a link to /dev/zero) was a MemoryError traceback
    path = _prices_csv(tmp_path)
    size = path.stat().st_size
    monkeypatch.setattr(pricing.prices, "MAX_PRICES_BYTES", size)
    assert len(read_prices(path)) == 2  # at the limit: read
    monkeypatch.setattr(pricing.prices, "MAX_PRICES_BYTES", size - 1)
    with pytest.raises(CatalogError, match=f"prices.csv: the file is larger than {size - 1:,} b"):
        read_prices(path)
    monkeypatch.undo()
    if Path("/dev/zero").exists():
        (tmp_path / "endless.csv").symlink_to("/dev/zero")
        with pytest.raises(CatalogError, match="endless.csv: the file is larger than 16,777,216"):
            read_prices(tmp_path / "endless.csv")


def test_a_file_must_be_csv_or_yaml_and_exist(tmp_path):
    with pytest.raises(CatalogError, match="ends in .csv, .yaml, .yml"):
        read_prices(_write(tmp_path / "prices.txt", "x"))
    with pytest.raises(CatalogError, match="missing.csv: file not found"):
        read_prices(tmp_path / "missing.csv")
    with pytest.raises(CatalogError, match="expected a list of prices"):
        read_prices(_write(tmp_path / "p.yaml", "gpu: rtx-3090\n"))


# -------------------------------------------------------------------------------- unknown ids


@pytest.mark.parametrize(
    ("row", "closest"),
    [
        ("aws/p3.2xlarg,on_demand,2.5,,", "closest: aws/p3.2xlarge"),
        (",,,rtx-2080ti,900", "closest: rtx-2080-ti"),
    ],
)
def test_unknown_ids_name_the_file_row_and_the_closest_id(tmp_path, row, closest):
    path = _write(
        tmp_path / "prices.csv",
        "instance,pricing,usd_per_hour,gpu,usd,as_of,source\n"
        f"aws/p3.8xlarge,spot,3.0,,,2026-01-01,q\n{row},2026-01-01,q\n",
    )
    entries = read_prices(path)  # each row is fine on its own
    with pytest.raises(CatalogError) as err:
        apply_prices(load_catalog(), entries)
    message = str(err.value)
    assert message.startswith(f"{path}, row 'line 3', column ")
    assert closest in message


def test_a_price_the_catalog_cannot_hold_is_refused_at_its_row(tmp_path):
    path = _write(
        tmp_path / "p.csv",
        "instance,pricing,usd_per_hour,as_of,source\naws/p3.2xlarge,on_demand,0,2026-01-01,q\n",
    )
    with pytest.raises(CatalogError, match=r"row 'line 2', column 'usd_per_hour': must be > 0"):
        apply_prices(load_catalog(), read_prices(path))


# ----------------------------------------------------------------------- overlay and precedence


def test_the_overlay_is_a_new_catalog_and_the_shared_one_is_untouched(tmp_path):
    shipped = load_catalog()
    before = (shipped.gpu("rtx-2080-ti").price_usd, shipped.instance("aws/p3.8xlarge"))
    mine = apply_prices(shipped, read_prices(_prices_csv(tmp_path)))
    assert mine is not shipped and load_catalog() is shipped
    assert mine.gpu("rtx-2080-ti").price_usd == 850.0
    assert mine.instance("aws/p3.8xlarge").reserved_1y_usd_per_hour == 6.0
    assert mine.instance("aws/p3.8xlarge").on_demand_usd_per_hour == 12.24  # not in the file
    assert (shipped.gpu("rtx-2080-ti").price_usd, shipped.instance("aws/p3.8xlarge")) == before
    assert dict(shipped.overlay) == {}
    assert set(mine.overlay) == {("aws/p3.8xlarge", "reserved_1y"), ("rtx-2080-ti", "purchase")}
    assert mine.version == shipped.version


def test_overlay_beats_catalog_and_scenario_beats_overlay_with_their_origins(tmp_path):
    path = _prices_csv(tmp_path, "2026-03-01")
    mine = apply_prices(load_catalog(), read_prices(path))

    overlaid = scenarios.load_mapping(LAB, catalog=mine).resolved
    gpu = _assumption(overlaid, "buy.gpu_price_usd")
    assert (gpu.value, gpu.source) == (
        850.0,
        "prices.csv: eBay median of 40 sales (as of 2026-03-01)",
    )
    rent = _assumption(overlaid, "rent.price_usd_per_hour")
    assert (rent.value, rent.source) == (6.0, "prices.csv: AWS EDP quote Q3 (as of 2026-03-01)")
    # the on-demand price of the hours above the reservation is still the catalog's
    on_demand = _assumption(overlaid, "rent.on_demand_price_usd_per_hour")
    assert on_demand.value == 12.24
    assert on_demand.source.startswith("catalog: aws/p3.8xlarge (us-east-1, as of ")
    assert on_demand.source.endswith("), on_demand")
    assert set(overlaid.prices) == {"buy.gpu_price_usd", "rent.price_usd_per_hour"}

    shipped = scenarios.load_mapping(LAB).resolved
    gpu = _assumption(shipped, "buy.gpu_price_usd")
    assert (gpu.value, gpu.source) == (999.0, "catalog: rtx-2080-ti price")

    given = {**LAB, "buy": {**LAB["buy"], "gpu_price_usd": 700}}
    given["rent"] = {**LAB["rent"], "price_usd_per_hour": 5.5}
    chosen = scenarios.load_mapping(given, catalog=mine).resolved
    assert (_assumption(chosen, "buy.gpu_price_usd").value, chosen.assumptions[0].source) == (
        700.0,
        "scenario",
    )
    assert _assumption(chosen, "rent.price_usd_per_hour").source == "scenario"
    assert dict(chosen.prices) == {}  # nothing of the file was used, so nothing can be stale


def test_an_overlaid_price_is_no_longer_an_estimate(tmp_path):
    path = _write(tmp_path / "p.csv", "gpu,usd,as_of,source\nh100-sxm5-80gb,25000,2026-01-01,q\n")
    assert load_catalog().gpu("h100-sxm5-80gb").price_estimated
    mine = apply_prices(load_catalog(), read_prices(path))
    assert not mine.gpu("h100-sxm5-80gb").price_estimated
    doc = {**LAB, "buy": {"gpu": "h100-sxm5-80gb", "gpu_count": 1}}
    codes = {w.code for w in scenarios.load_mapping(doc, catalog=mine).warnings}
    assert "price_estimated" not in codes
    assert "price_estimated" in {w.code for w in scenarios.load_mapping(doc).warnings}


# ------------------------------------------------------------------------------- stale prices


def test_months_after_keeps_the_day_or_the_end_of_the_month():
    assert months_after(dt.date(2025, 3, 15), 12) == dt.date(2026, 3, 15)
    assert months_after(dt.date(2024, 2, 29), 12) == dt.date(2025, 2, 28)
    assert months_after(dt.date(2025, 12, 31), 2) == dt.date(2026, 2, 28)
    assert months_after(dt.date(2026, 1, 31), -12) == dt.date(2025, 1, 31)


def _entry(as_of: str) -> PriceEntry:
    return PriceEntry("gpu", "rtx-2080-ti", "purchase", 850.0, as_of, "quote", "p.csv", "line 2")


@pytest.mark.parametrize(
    ("as_of", "today", "stale"),
    [
        ("2025-03-15", dt.date(2026, 3, 15), False),  # exactly 12 months
        ("2025-03-15", dt.date(2026, 3, 16), True),  # one day more
        ("2024-02-29", dt.date(2025, 2, 28), False),  # 12 months of a leap day
        ("2024-02-29", dt.date(2025, 3, 1), True),
    ],
)
def test_a_price_is_stale_one_day_after_twelve_months(as_of, today, stale):
    assert _entry(as_of).stale(today) is stale


def test_a_price_of_the_last_day_there_is_is_not_stale():
    # 9999-12-31 + 12 months is no date: an OverflowError traceback from every run with it
    assert _entry("9999-12-31").stale(dt.date(2026, 1, 1)) is False


def test_the_stale_price_warning_at_its_boundary(tmp_path):
    path = _prices_csv(tmp_path, "2025-03-15")
    resolved = scenarios.load_mapping(LAB, catalog=apply_prices(load_catalog(), read_prices(path)))
    q = resolved.resolved.question

    def stale(today: dt.date) -> list:
        return [w for side in q.sides for w in stale_price(side, q, today=today)]

    assert stale(dt.date(2026, 3, 15)) == []
    warned = stale(dt.date(2026, 3, 16))
    assert [w.code for w in warned] == ["stale_price", "stale_price"]
    assert {w.severity for w in warned} == {"warning"}
    assert warned[0].message.startswith(
        "buy.gpu_price_usd = 850 comes from prices.csv: eBay median of 40 sales (as of "
        "2025-03-15), more than 12 months before 2026-03-16"
    )


@pytest.mark.parametrize(("days", "warned"), [(0, False), (1, True)])
def test_loading_warns_of_prices_older_than_twelve_months_from_today(tmp_path, days, warned):
    as_of = months_after(TODAY, -12) - dt.timedelta(days=days)
    path = _prices_csv(tmp_path, as_of.isoformat())
    scenario = scenarios.load_mapping(LAB, catalog=apply_prices(load_catalog(), read_prices(path)))
    assert ("stale_price" in {w.code for w in scenario.warnings}) is warned


# ----------------------------------------------------------------------------- the three doors


def test_run_plan_and_report_take_prices(tmp_path, capsys):
    path = _prices_csv(tmp_path)
    doc = tmp_path / "lab.yaml"
    doc.write_text(json.dumps(LAB), encoding="utf-8")
    assert main(["run", str(doc), "--prices", str(path), "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    origins = {a["key"]: a["source"] for a in result["assumptions"]}
    assert origins["buy.gpu_price_usd"].startswith("prices.csv: eBay median of 40 sales")
    assert "stale_price" not in {w["code"] for w in result["warnings"]}

    plan = ROOT / "scenarios" / "examples" / "plan-lab-rtx4090-growth.yaml"
    gpus = _write(tmp_path / "gpus.csv", "gpu,usd,as_of,source\nrtx-4090,1750,2025-01-02,shop\n")
    assert main(["plan", str(plan), "--prices", str(gpus), "--samples", "200", "--format",
                 "json"]) == 0  # fmt: skip
    result = json.loads(capsys.readouterr().out)
    assert "stale_price" in {w["code"] for w in result["warnings"]}

    report = tmp_path / "r.json"
    assert main(["report", str(doc), "--prices", str(path), "-o", str(report)]) == 0
    assert "eBay median" in report.read_text(encoding="utf-8")


def test_bad_prices_files_are_usage_errors_naming_file_and_row(tmp_path, capsys):
    bad = _write(
        tmp_path / "bad.csv",
        "instance,pricing,usd_per_hour,as_of,source\naws/p3.2xlarg,on_demand,2.5,2026-01-01,q\n",
    )
    doc = ROOT / "scenarios" / "examples" / "worked-example.yaml"
    for args in (
        ["run", str(doc), "--prices", str(bad)],
        ["compare", "--utilisation", "0.5", "--prices", str(bad)],
        ["batch", str(doc), "--out", str(tmp_path / "out"), "--prices", str(bad)],
        ["run", str(doc), "--prices", str(tmp_path / "none.csv")],
    ):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("error: "), err
        assert "Traceback" not in err
    assert main(["run", str(doc), "--prices", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}, row 'line 2', column 'instance': unknown instance id 'aws/p3.2xlarg'" in err
    assert "closest: aws/p3.2xlarge" in err


def test_batch_resolves_every_scenario_with_the_prices_in_its_workers(tmp_path):
    path = _prices_csv(tmp_path)
    doc = tmp_path / "lab.yaml"
    doc.write_text(json.dumps(LAB), encoding="utf-8")
    out = tmp_path / "out"
    code = main(["batch", str(doc), "--out", str(out), "--prices", str(path), "--workers", "1",
                 "--format", "json", "--db", str(tmp_path / "runs.sqlite3"), "-q"])  # fmt: skip
    assert code == 0
    result = json.loads((out / "lab.json").read_text(encoding="utf-8"))
    origins = {a["key"]: a["source"] for a in result["assumptions"]}
    assert origins["rent.price_usd_per_hour"].startswith("prices.csv: AWS EDP quote Q3")
    # a worker process resolves the document itself: with the job's prices, the same key
    entries = read_prices(path)
    scenario = scenarios.load_mapping(LAB, catalog=apply_prices(load_catalog(), entries))
    job = Job(scenario.key(), (LAB, "lab", {}), None, None, None, prices=entries)
    assert _execute(job).result.assumptions == scenario.resolved.assumptions
    with pytest.raises(ValueError, match="resolved the scenario differently"):
        _execute(Job(scenario.key(), (LAB, "lab", {}), None, None, None))


def test_the_service_lays_costmodel_prices_over_its_catalog(tmp_path, monkeypatch):
    path = _prices_csv(tmp_path)
    monkeypatch.setenv("COSTMODEL_PRICES", str(path))
    app = create_app({"TESTING": True, "DB": str(tmp_path / "runs.sqlite3"), "API_KEYS": ""})
    client = app.test_client()
    result = client.post("/v1/evaluate", json=LAB).get_json()
    origins = {a["key"]: a["source"] for a in result["assumptions"]}
    assert origins["buy.gpu_price_usd"].startswith("prices.csv: eBay median of 40 sales")
    assert client.get("/v1/catalog/gpus/rtx-2080-ti").get_json()["price_usd"] == 850.0
    body = {"utilisation": 0.5, "samples": 50, "tier": "hyperscaler"}
    options = client.post("/v1/compare", json=body).get_json()["options"]
    mine = [
        o for o in options if o["catalog_id"] == "aws/p3.8xlarge" and o["pricing"] == "reserved_1y"
    ]
    assert mine[0]["price_usd"] == 6.0
    assert mine[0]["price_source"].startswith("prices.csv: AWS EDP quote Q3")


def test_a_bad_costmodel_prices_stops_the_service_at_start_up(tmp_path):
    bad = _write(tmp_path / "bad.csv", "gpu,usd,as_of,source\nrtx-2080ti,900,2026-01-01,q\n")
    with pytest.raises(ValueError) as err:
        create_app({"TESTING": True, "DB": str(tmp_path / "r.sqlite3"), "PRICES": str(bad)})
    message = str(err.value)
    assert message.startswith(f"COSTMODEL_PRICES: {bad}, row 'line 2', column 'gpu': ")
    assert "closest: rtx-2080-ti" in message
