"""Batch runs (scenarios.batch and ``costmodel batch``/``costmodel report``).

Scenarios are copies of ``scenarios/examples`` run with 2,000 samples to stay fast. Every test
uses its own run store in ``tmp_path`` (``COSTMODEL_DB`` points there too, as a safety net).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import sqlite3
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

import scenarios
from cli import main
from present import to_dict
from present.reports import FORMATS, render
from scenarios import executor
from scenarios.batch import BatchError, expand_paths, run_batch

EXAMPLES = Path(__file__).resolve().parents[1] / "scenarios" / "examples"
BEGINNER = "beginner-1x-rtx2080ti-vs-p3-2xlarge"
LAB = "lab-4x-rtx2080ti-vs-p3-8xlarge"
INFERENCE = "inference-1x-t4-vs-g4dn-xlarge"
WORKED = "worked-example"
SAMPLES = 2000


@pytest.fixture(autouse=True)
def _private_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTMODEL_DB", str(tmp_path / "default-runs.sqlite3"))


def _copy(folder: Path, *stems: str) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copy(EXAMPLES / f"{s}.yaml", folder / f"{s}.yaml")) for s in stems]


def _rows(summary_csv: Path) -> list[dict[str, str]]:
    with summary_csv.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _store_keys(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [k for (k,) in conn.execute("SELECT cache_key FROM runs")]


def _temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


def _alone(path: Path, samples: int = SAMPLES) -> bytes:
    """The result JSON of one scenario run on its own, as ``costmodel report --format json``."""
    return render(scenarios.evaluate(path, samples=samples), "json")


# --------------------------------------------------------------------------- failures


def test_broken_files_are_reported_and_do_not_stop_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in"
    _copy(src, BEGINNER, WORKED)
    (src / "broken.yaml").write_text("version: 1\nname: [oops\n", encoding="utf-8")
    text = (EXAMPLES / f"{LAB}.yaml").read_text(encoding="utf-8")
    assert "gpu: rtx-2080-ti" in text
    (src / "unknown-gpu.yaml").write_text(
        text.replace("gpu: rtx-2080-ti", "gpu: rtx-9999", 1), encoding="utf-8"
    )
    out = tmp_path / "out"

    status = main(
        ["batch", str(src), "--out", str(out), "--samples", str(SAMPLES), "--quiet"]
        + ["--workers", "2", "--db", str(tmp_path / "runs.sqlite3")]
    )

    assert status == 1
    err = capsys.readouterr().err
    assert "broken.yaml" in err and "unknown-gpu.yaml" in err
    for stem in (BEGINNER, "worked-example"):
        assert (out / f"{stem}.json").stat().st_size > 0
        assert (out / f"{stem}.html").stat().st_size > 0
    rows = {Path(r["file"]).name: r for r in _rows(out / "summary.csv")}
    assert set(rows) == {f"{BEGINNER}.yaml", f"{WORKED}.yaml", "broken.yaml", "unknown-gpu.yaml"}
    assert rows["broken.yaml"]["status"] == "failed"
    assert "malformed YAML" in rows["broken.yaml"]["error"]
    assert rows["unknown-gpu.yaml"]["status"] == "failed"
    assert "rtx-9999" in rows["unknown-gpu.yaml"]["error"]
    assert rows["unknown-gpu.yaml"]["name"] == LAB
    good = rows[f"{BEGINNER}.yaml"]
    assert good["status"] == "ok" and good["error"] == ""
    result = to_dict(scenarios.evaluate(EXAMPLES / f"{BEGINNER}.yaml", samples=SAMPLES))
    # rounded to 4 decimals (shares and utilisation) and 2 (months); numbers stay numbers
    assert float(good["breakeven_p50"]) == round(result["breakeven_utilisation"]["p50"], 4)
    assert good["breakeven_p50_never"] == "False"
    j = result["utilisation"].index(0.5)
    assert float(good["prob_buy_cheaper_u0.50"]) == round(result["prob_buy_cheaper"][j], 4)
    assert float(good["payback_p50_u0.50"]) == round(result["payback_months"]["p50"][j], 2)
    assert int(good["warnings"]) == len(result["warnings"])
    # Columns are the union of the levels: u = 0 exists only in the worked example.
    assert good["prob_buy_cheaper_u0.00"] == ""
    assert rows[f"{WORKED}.yaml"]["prob_buy_cheaper_u0.00"] != ""
    assert rows[f"{WORKED}.yaml"]["payback_p50_u0.25"] != ""
    # no payback idle: an empty cell and the flag, never the word "never" in a numeric column
    idle = rows[f"{WORKED}.yaml"]
    assert idle["payback_p50_u0.00"] == "" and idle["payback_p50_u0.00_never"] == "True"


def test_an_out_that_cannot_be_a_folder_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an existing file, and a place no folder can be made: FileExistsError and
    # FileNotFoundError tracebacks from Path.mkdir, after the scenarios were loaded
    src = _copy(tmp_path / "in", WORKED)
    (tmp_path / "taken").write_text("mine\n", encoding="utf-8")
    for out, says in (
        (tmp_path / "taken", "is a file, not a folder"),
        (tmp_path / "taken" / "out", "is a file, not a folder"),
        (Path("/proc/no-such-folder"), "cannot make the folder"),
    ):
        args = ["batch", str(src[0]), "--out", str(out), "--db", str(tmp_path / "runs.sqlite3")]
        assert main([*args, "--samples", "10", "--quiet"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and says in err[0], err
        assert str(out) in err[0]
    assert (tmp_path / "taken").read_text(encoding="utf-8") == "mine\n"


def test_a_report_that_cannot_be_written_is_said_plainly_and_the_rest_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A folder where a report goes: the item's error named the temporary file beside it and
    # Python's exception class.
    src = _copy(tmp_path / "in", WORKED, BEGINNER)
    out = tmp_path / "out"
    report = out / "worked-example.html"
    report.mkdir(parents=True)
    args = ["batch", *map(str, src), "--out", str(out), "--db", str(tmp_path / "runs.sqlite3")]
    assert main([*args, "--samples", "10", "--quiet", "--workers", "1"]) == 1
    err = capsys.readouterr().err
    assert f"FAILED {src[0]}: report: cannot write {report}: Is a directory" in err
    assert ".tmp" not in err and "Error" not in err
    # the other scenario's outputs and both results are written
    assert (out / f"{BEGINNER}.html").stat().st_size > 0
    assert (out / "worked-example.json").stat().st_size > 0
    assert _temp_files(out) == []


def test_a_summary_that_cannot_be_written_is_one_clear_error_and_the_results_are_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # summary.csv a folder: an IsADirectoryError traceback once every scenario had run
    src = _copy(tmp_path / "in", WORKED)
    out = tmp_path / "out"
    (out / "summary.csv").mkdir(parents=True)
    args = ["batch", *map(str, src), "--out", str(out), "--db", str(tmp_path / "runs.sqlite3")]
    assert main([*args, "--samples", "10", "--quiet", "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"error: {out / 'summary.csv'}: cannot write the summary: ")
    assert "Is a directory" in err[0] and ".tmp" not in err[0]
    assert (out / "worked-example.html").stat().st_size > 0
    assert _temp_files(out) == []


# --------------------------------------------------------------------------- resume


def test_interrupted_batch_resumes_without_duplicates_or_temp_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "in"
    _copy(src, BEGINNER, INFERENCE, LAB)
    out, db = tmp_path / "out", tmp_path / "runs.sqlite3"
    args = ["batch", str(src), "--out", str(out), "--db", str(db)]
    args += ["--samples", str(SAMPLES), "--workers", "1", "--format", "json", "csv", "--quiet"]
    calls: list[str] = []
    real_run = executor.evaluate

    def killed_on_second(scenario, **kw):
        calls.append(scenario.name)
        if len(calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C while the second scenario runs
        return real_run(scenario, **kw)

    monkeypatch.setattr(executor, "evaluate", killed_on_second)
    assert main(args) == 130
    assert len(_store_keys(db)) == 1
    # A write cut short by the kill leaves a temporary file behind.
    (out / f".{LAB}.json.{'0' * 32}.tmp").write_bytes(b'{"schema_version": 1, "scen')

    def counted(scenario, **kw):
        calls.append(scenario.name)
        return real_run(scenario, **kw)

    calls.clear()
    monkeypatch.setattr(executor, "evaluate", counted)
    assert main(args) == 0
    assert sorted(calls) == sorted([INFERENCE, LAB])  # the first result was not recomputed
    rows = _rows(out / "summary.csv")
    assert [r["status"] for r in rows] == ["skipped", "ok", "ok"]
    assert _temp_files(out) == []
    first = {p.name: p.read_bytes() for p in out.glob("*.json")}
    assert set(first) == {f"{s}.json" for s in (BEGINNER, INFERENCE, LAB)}

    # An output deleted after the run comes back from the store, bit-identical, not recomputed.
    (out / f"{INFERENCE}.json").unlink()
    (out / f"{LAB}.csv").unlink()
    calls.clear()
    summary = run_batch(
        [src], out, workers=1, samples=SAMPLES, formats=("json", "csv"), store=db, progress=False
    )
    assert calls == []
    assert (summary.ok, summary.skipped, summary.failed) == (0, 3, 0)
    assert {p.name: p.read_bytes() for p in out.glob("*.json")} == first
    assert (out / f"{LAB}.csv").stat().st_size > 0
    assert _temp_files(out) == []

    keys = _store_keys(db)
    assert len(keys) == 3 and len(set(keys)) == 3
    assert set(keys) == {item.key for item in summary.items}
    for name, data in first.items():
        assert data == _alone(src / name.replace(".json", ".yaml"))


# --------------------------------------------------------------------------- what people see


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_needs_no_second_library(tmp_path, monkeypatch) -> None:
    pyproject = tomllib.loads((EXAMPLES.parents[1] / "pyproject.toml").read_text("utf-8"))
    assert not [d for d in pyproject["project"]["dependencies"] if d.startswith("tqdm")]
    monkeypatch.setitem(sys.modules, "tqdm", None)  # as if not installed
    monkeypatch.setenv("COLUMNS", "100")
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    src = tmp_path / "in"
    _copy(src, WORKED)
    (src / "broken.yaml").write_text("version: 1\nname: [oops\n", encoding="utf-8")
    summary = run_batch([src], tmp_path / "out", workers=1, store=tmp_path / "runs.sqlite3")
    assert (summary.ok, summary.failed) == (1, 1)
    shown = terminal.getvalue()
    # the failure printed above the bar, the bar at 2 of 2 with the last scenario's status
    assert f"FAILED {src / 'broken.yaml'}: " in shown
    assert "2/2" in shown and "ok: worked-example-2gpu-vs-on-demand" in shown


def test_the_batch_summary_fits_100_columns(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    args = ["batch", str(EXAMPLES / f"{WORKED}.yaml"), "--out", str(out), "--quiet"]
    assert main([*args, "--db", str(tmp_path / "runs.sqlite3")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "1 scenario(s): 1 run, 0 skipped (already in the run store), 0 failed",
        f"summary: {out / 'summary.csv'}",
    ]
    assert max(map(len, lines)) <= 100


# --------------------------------------------------------------------------- reproducibility


def test_one_and_two_workers_give_identical_bytes(tmp_path: Path) -> None:
    src = tmp_path / "in"
    files = _copy(src, BEGINNER, LAB, INFERENCE)
    outputs = {}
    for workers in (1, 2):
        out = tmp_path / f"out{workers}"
        summary = run_batch(
            [src],
            out,
            workers=workers,
            samples=SAMPLES,
            formats=("json", "csv"),
            store=tmp_path / f"runs{workers}.sqlite3",
            progress=False,
        )
        assert (summary.ok, summary.failed) == (3, 0)
        outputs[workers] = {p.name: p.read_bytes() for p in out.iterdir() if p.suffix != ".csv"}
        outputs[workers] |= {p.name: p.read_bytes() for p in out.glob("*.csv")}
    assert outputs[1] == outputs[2]
    for f in files:
        assert outputs[1][f"{f.stem}.json"] == _alone(f)


def test_dask_local_cluster_gives_the_local_bytes(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    src = tmp_path / "in"
    _copy(src, BEGINNER, LAB)
    local = run_batch(
        [src],
        tmp_path / "local",
        workers=1,
        samples=SAMPLES,
        formats=("json", "csv"),
        store=tmp_path / "local.sqlite3",
        progress=False,
    )
    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        remote = run_batch(
            [src],
            tmp_path / "dask",
            scheduler=cluster.scheduler_address,
            samples=SAMPLES,
            formats=("json", "csv"),
            store=tmp_path / "dask.sqlite3",
            progress=False,
        )
    assert [(i.status, i.error) for i in remote.items] == [("ok", ""), ("ok", "")]
    assert [i.key for i in remote.items] == [i.key for i in local.items]
    for name in (f"{BEGINNER}.json", f"{LAB}.json", f"{BEGINNER}.csv", f"{LAB}.csv"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()


def test_unreachable_dask_scheduler_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    import dask

    src = tmp_path / "in"
    _copy(src, WORKED)
    with (
        dask.config.set({"distributed.comm.timeouts.connect": "1s"}),
        pytest.raises(BatchError, match="Dask scheduler"),
    ):
        run_batch(
            [src],
            tmp_path / "out",
            scheduler="tcp://127.0.0.1:9",
            samples=10,
            formats=("json",),
            store=tmp_path / "runs.sqlite3",
            progress=False,
        )


# --------------------------------------------------------------------------- inputs


def test_list_file_expands_to_several_results_and_glob_selects_files(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    one = yaml.safe_load((EXAMPLES / f"{BEGINNER}.yaml").read_text(encoding="utf-8"))
    two = {**one, "simulation": {**one["simulation"], "seed": 7}}  # same name, other seed
    bad = {**one, "name": "bad one", "colour": "red"}
    (src / "many.yaml").write_text(yaml.safe_dump([one, two, bad]), encoding="utf-8")
    _copy(src, WORKED)
    (src / "ignored.txt").write_text("not a scenario", encoding="utf-8")

    summary = run_batch(
        [str(src / "*.yaml")],
        tmp_path / "out",
        workers=1,
        samples=SAMPLES,
        formats=("json",),
        store=tmp_path / "runs.sqlite3",
        progress=False,
    )

    assert [(Path(i.file).name, i.status) for i in summary.items] == [
        ("many.yaml[0]", "ok"),
        ("many.yaml[1]", "ok"),
        ("many.yaml[2]", "failed"),
        (f"{WORKED}.yaml", "ok"),
    ]
    assert "colour" in summary.items[2].error
    # Files are named from their file, not the scenario's name (worked-example.yaml's is
    # worked-example-2gpu-vs-on-demand), item i of a list as many-i.
    names = [i.outputs[0].name for i in summary.items if i.status == "ok"]
    assert names == ["many-0.json", "many-1.json", f"{WORKED}.json"]
    assert summary.items[0].key != summary.items[1].key
    assert (tmp_path / "out" / "many-1.json").read_bytes() == render(
        scenarios.evaluate(two, samples=SAMPLES), "json"
    )
    assert len(_rows(summary.summary_csv)) == 4


def test_expand_paths_folders_globs_and_duplicates(tmp_path: Path) -> None:
    d = tmp_path / "d"
    for rel in ("b.yaml", "a.yml", "sub/c.yaml", "sub/deeper/e.YAML", ".hidden/x.yaml", "n.txt"):
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text("{}", encoding="utf-8")
    folder = [d / "a.yml", d / "b.yaml", d / "sub/c.yaml", d / "sub/deeper/e.YAML"]
    assert expand_paths([d]) == folder
    assert expand_paths([str(d / "*.y*ml")]) == [d / "a.yml", d / "b.yaml"]
    assert expand_paths([str(d / "**" / "c.yaml")]) == [d / "sub/c.yaml"]
    assert expand_paths([str(d / "su*")]) == [d / "sub/c.yaml", d / "sub/deeper/e.YAML"]
    # Each file once, in argument order; explicit and missing paths are kept as given.
    assert expand_paths([d / "sub/c.yaml", d, d / "n.txt"]) == [
        d / "sub/c.yaml",
        d / "a.yml",
        d / "b.yaml",
        d / "sub/deeper/e.YAML",
        d / "n.txt",
    ]
    assert expand_paths([d / "missing.yaml"]) == [d / "missing.yaml"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(BatchError, match="no scenario files"):
        run_batch([tmp_path / "empty"], tmp_path / "out", store=tmp_path / "r.sqlite3")


# --------------------------------------------------------------------------- report command


def test_report_command_writes_every_format_from_yaml_and_result_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_charts: None
) -> None:
    scenario = _copy(tmp_path / "in", INFERENCE)[0]
    out = tmp_path / "reports"
    for fmt in FORMATS:
        target = out / f"from-yaml.{fmt}"
        assert (
            main(
                ["report", str(scenario), "--format", fmt, "-o", str(target)]
                + ["--samples", "500", "--seed", "3"]
            )
            == 0
        )
        assert target.stat().st_size > 0
    result_json = out / "from-yaml.json"
    assert result_json.read_bytes() == render(
        scenarios.evaluate(scenario, samples=500, seed=3), "json"
    )
    for fmt in FORMATS:
        target = out / f"from-json.{fmt}"
        assert main(["report", str(result_json), "-o", str(target)]) == 0  # format from suffix
        assert target.stat().st_size > 0
    assert (out / "from-json.json").read_bytes() == result_json.read_bytes()
    assert list(out.glob("from-json_*.svg"))  # markdown charts beside the document
    capsys.readouterr()

    assert main(["report", str(result_json), "--samples", "9", "-o", str(out / "x.html")]) == 2
    assert "scenario" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": 1,', encoding="utf-8")
    assert main(["report", str(broken), "-o", str(out / "y.html")]) == 2
    assert "broken.json" in capsys.readouterr().err


# --------------------------------------------------------------------------- spreadsheet cells

#: Text a spreadsheet would run as a formula: it starts with = + - @, a tab or a CR (OWASP).
FORMULAS = (
    '=HYPERLINK("http://evil.example","click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(1+1)",
    "\t=1+1",
    "\r=1+1",
)


def test_summary_csv_and_xlsx_reports_hold_text_not_formulas(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import openpyxl

    src = tmp_path / "in"
    src.mkdir()
    doc = yaml.safe_load((EXAMPLES / f"{WORKED}.yaml").read_text(encoding="utf-8"))
    for i, text in enumerate(FORMULAS):
        (src / f"s{i}.yaml").write_text(yaml.safe_dump({**doc, "name": text, "description": text}))
    monkeypatch.chdir(src)  # relative paths: the file and error cells start with "="
    (src / "=broken.yaml").write_text("version: 1\nname: [oops\n", encoding="utf-8")
    paths = [f"s{i}.yaml" for i in range(len(FORMULAS))] + ["=broken.yaml"]

    summary = run_batch(paths, tmp_path / "out", workers=1, formats=("xlsx",), progress=False)

    rows = _rows(summary.summary_csv)
    assert [r["status"] for r in rows] == ["ok"] * len(FORMULAS) + ["failed"]
    for row in rows:
        assert not [v for v in row.values() if v[:1] in ("=", "+", "-", "@", "\t", "\r")], row
    assert [r["name"] for r in rows[:-1]] == ["'" + t for t in FORMULAS]
    assert rows[-1]["file"] == "'=broken.yaml" and rows[-1]["error"].startswith("'=broken")
    assert float(rows[0]["breakeven_p50"]) >= 0 and int(rows[0]["warnings"]) >= 0
    for item in summary.items[:-1]:
        xlsx = next(p for p in item.outputs if p.suffix == ".xlsx")
        wb = openpyxl.load_workbook(xlsx)
        cells = [c for ws in wb.worksheets for row in ws.iter_rows() for c in row]
        assert [c.coordinate for c in cells if c.data_type == "f"] == []
        summary_sheet = dict(wb["summary"].iter_rows(min_row=2, values_only=True))
        # XML reads a carriage return back as a line feed
        assert summary_sheet["scenario_name"] == "'" + item.name.replace("\r", "\n")


# --------------------------------------------------------------------------- fleet plans

PLAN = "plan-worked-example"
PLAN_CHARTS = ("frontier", "cost_by_servers", "work_split")


def test_a_plan_runs_beside_a_scenario_and_both_have_a_summary_row(tmp_path: Path) -> None:
    from scenarios.store import RunStore

    src = tmp_path / "in"
    scenario, plan = _copy(src, WORKED, PLAN)
    out, db = tmp_path / "out", tmp_path / "runs.sqlite3"
    formats = ("json", "csv", "md", "xlsx")

    summary = run_batch(
        [src], out, workers=1, samples=50, formats=formats, store=db, progress=False
    )

    assert [(Path(i.file).name, i.status) for i in summary.items] == [
        (f"{PLAN}.yaml", "ok"),
        (f"{WORKED}.yaml", "ok"),
    ]
    expected = scenarios.evaluate(plan, samples=50)
    assert (out / f"{PLAN}.json").read_bytes() == render(expected, "json")
    assert (out / f"{PLAN}.csv").read_text("utf-8").startswith("servers,instances,cost_mean,")
    assert (out / f"{PLAN}.xlsx").stat().st_size > 0
    for chart in PLAN_CHARTS:
        assert (out / f"{PLAN}_{chart}.svg").stat().st_size > 0
    assert (out / "worked-example.json").read_bytes() == _alone(scenario, 50)
    # the run store holds the plan result as it holds a scenario's
    with RunStore(db) as store:
        record = store.find(summary.items[0].key)
    assert record is not None and record.result == to_dict(expected)

    rows = {Path(r["file"]).name: r for r in _rows(summary.summary_csv)}
    head = list(_rows(summary.summary_csv)[0])
    assert head[:6] == ["file", "name", "kind", "status", "error", "warnings"]
    assert head[-7:] == [
        "best_servers",
        "best_reserved",
        "best_cost_p50",
        "best_cost_p90",
        "all_cloud_cost_p50",
        "best_prob_cheaper_than_cloud",
        "result",
    ]
    p, s = rows[f"{PLAN}.yaml"], rows[f"{WORKED}.yaml"]
    assert (p["kind"], p["status"], s["kind"], s["status"]) == ("plan", "ok", "scenario", "ok")
    best = expected.best
    assert (p["best_servers"], p["best_reserved"]) == (str(best.servers), str(best.instances))
    assert float(p["best_cost_p50"]) == round(best.cost.p50, 2)
    assert float(p["all_cloud_cost_p50"]) == round(expected.all_cloud.cost.p50, 2)
    assert float(p["best_prob_cheaper_than_cloud"]) == round(best.prob_cheaper_than_cloud, 4)
    assert p["result"] == f"{PLAN}.json" and p["warnings"] == "0"
    # each row leaves the other kind's columns empty
    assert p["breakeven_p50"] == p["breakeven_p50_never"] == p["prob_buy_cheaper_u0.50"] == ""
    assert s["best_servers"] == s["best_cost_p50"] == ""
    assert float(s["breakeven_p50"]) >= 0

    # rerun: the plan result comes back from the store, and a lost report is rewritten from it
    (out / f"{PLAN}.csv").unlink()
    again = run_batch([src], out, workers=1, samples=50, formats=formats, store=db, progress=False)
    assert [i.status for i in again.items] == ["skipped", "skipped"]
    assert (out / f"{PLAN}.csv").read_bytes() == render(expected, "csv")
    assert _rows(again.summary_csv)[0]["best_servers"] == str(best.servers)


def test_report_command_writes_a_plan_from_yaml_and_from_its_result_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_charts: None
) -> None:
    plan = _copy(tmp_path / "in", PLAN)[0]
    out = tmp_path / "reports"
    result_json = out / "plan.json"
    args = ["--samples", "40", "--seed", "2"]
    assert main(["report", str(plan), "-o", str(result_json), *args]) == 0
    assert main(["report", str(plan), "-o", str(out / "from-yaml.html"), *args]) == 0
    expected = scenarios.evaluate(plan, samples=40, seed=2)
    assert result_json.read_bytes() == render(expected, "json")
    assert b"GPU fleet plan" in (out / "from-yaml.html").read_bytes()
    for fmt in FORMATS:
        assert main(["report", str(result_json), "-o", str(out / f"from-json.{fmt}")]) == 0
    assert (out / "from-json.json").read_bytes() == result_json.read_bytes()
    assert (out / "from-json.csv").read_bytes() == render(expected, "csv")
    assert (out / "from-json.html").read_bytes() == (out / "from-yaml.html").read_bytes()
    assert sorted(p.name for p in out.glob("from-json_*.svg")) == sorted(
        f"from-json_{c}.svg" for c in PLAN_CHARTS
    )
    capsys.readouterr()

    # a plan result is refused like a scenario result: one error line, exit status 2
    assert main(["report", str(result_json), "--seed", "1", "-o", str(out / "x.html")]) == 2
    assert "not to a result JSON" in capsys.readouterr().err
    data = json.loads(result_json.read_text("utf-8"))
    data["candidates"][1]["cost"]["p90"] = float("nan")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    assert main(["report", str(bad), "-o", str(out / "y.html")]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: {bad}: candidates[1].cost.p90: NaN and infinities are not JSON numbers; "
        "write null for no value\n"
    )
    data = json.loads(result_json.read_text("utf-8"))
    data.update(schema_version=2, renamed={})
    bad.write_text(json.dumps(data), encoding="utf-8")
    assert main(["report", str(bad), "-o", str(out / "y.html")]) == 2
    assert capsys.readouterr().err == (
        f"error: {bad}: schema_version: unsupported schema_version 2; this release reads 1\n"
    )
    assert not (out / "x.html").exists() and not (out / "y.html").exists()


# ------------------------------------------------------------------ workers die with the batch

_ROOT = EXAMPLES.parents[1]
#: The longest a worker may outlive its killed batch [s].
_ORPHAN_S = 3.0


def _children(pid: int) -> list[int]:
    import psutil

    return [p.pid for p in psutil.Process(pid).children(recursive=True)
            if "resource_tracker" not in " ".join(p.cmdline())]  # fmt: skip


def _gone_within(pids: list[int], seconds: float) -> list[int]:
    """The processes of ``pids`` still running after ``seconds``."""
    import time

    import psutil

    deadline = time.monotonic() + seconds
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in alive if psutil.pid_exists(p) and
                 psutil.Process(p).status() != psutil.STATUS_ZOMBIE]  # fmt: skip
    return alive


def _wait_for_children(proc, count: int) -> list[int]:
    import time

    deadline = time.monotonic() + 60
    while len(found := _children(proc.pid)) < count:
        assert proc.poll() is None and time.monotonic() < deadline, "no workers started"
        time.sleep(0.1)
    time.sleep(1.0)  # past their start-up, into their work
    return found


def _orphans_after_kill(command: list[str], workers: int, **popen: Any) -> list[int]:
    """Start ``command``, wait for its ``workers``, ``kill -9`` it: the workers still running
    :data:`_ORPHAN_S` seconds later."""
    import signal
    import subprocess

    proc = subprocess.Popen(command, cwd=_ROOT, **popen)
    try:
        started = _wait_for_children(proc, workers)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        return _gone_within(started, _ORPHAN_S)
    finally:
        proc.kill()


def test_killing_a_batch_stops_its_workers(tmp_path):

    slow = yaml.safe_load((EXAMPLES / "worked-example.yaml").read_text("utf-8"))
    slow.update(horizon_months=240, simulation={"samples": 200_000, "seed": 1})
    for i in range(4):
        (tmp_path / f"s{i}.yaml").write_text(yaml.safe_dump({**slow, "name": f"slow-{i}"}))
    command = [sys.executable, "-m", "cli", "batch", str(tmp_path), "--out",
               str(tmp_path / "out"), "--workers", "2", "-q"]  # fmt: skip
    assert _orphans_after_kill(command, 2) == []


_HOLDS_THE_GIL = r"""
import ctypes, multiprocessing, sys, time
from scenarios.executor import _exit_with_parent

def work(parent):
    _exit_with_parent(parent)
    ctypes.PyDLL(None).sleep(60)  # one C call that keeps the GIL: no thread of Python runs

if __name__ == "__main__":
    import os
    child = multiprocessing.get_context("spawn").Process(target=work, args=(os.getpid(),))
    child.start()
    time.sleep(60)
"""


def test_a_worker_holding_the_gil_dies_with_its_parent(tmp_path):
    # A thread that looks for the parent every half second never runs in a worker stuck in
    # one C call; the kernel's parent-death signal ends it all the same.

    script = tmp_path / "parent.py"
    script.write_text(_HOLDS_THE_GIL)
    command = [sys.executable, str(script)]
    assert _orphans_after_kill(command, 1, env={"PYTHONPATH": str(_ROOT), "PATH": ""}) == []
