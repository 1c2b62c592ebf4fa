"""The command line as people use it: help, version, tables that fit, reports, clear errors."""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest
import yaml

from cli import main
from cli.main import _parser

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "scenarios" / "examples").glob("*.yaml"))
T4 = ROOT / "scenarios" / "examples" / "inference-1x-t4-vs-g4dn-xlarge.yaml"
WORKED = ROOT / "scenarios" / "examples" / "worked-example.yaml"


def _costmodel(*args: str, columns: int = 100) -> subprocess.CompletedProcess:
    env = {"COLUMNS": str(columns), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _printed(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *args: str,
    columns: int = 100,
) -> str:
    """What ``costmodel args`` prints into a pipe with a terminal ``columns`` wide: the bytes
    :func:`_costmodel`'s subprocess prints (its environment, no terminal or colour variables),
    run in this process rather than starting Python and importing the app again."""
    for key in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TERM", "LINES"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("COLUMNS", str(columns))
    status = main(list(args))
    out = capsys.readouterr()
    assert status == 0, out.err
    return out.out


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = _parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_the_console_script_exits_with_the_status_and_spares_the_last_collection(monkeypatch):
    """``console`` exits with ``main``'s status, its objects frozen (the interpreter's last
    collections pass over them), while ``main`` itself leaves the collector alone."""
    import gc

    module = sys.modules["cli.main"]  # the package's ``main`` is the function
    monkeypatch.setattr(module, "main", lambda: 2)
    before = gc.get_freeze_count()
    try:
        with pytest.raises(SystemExit) as exit_:
            module.console()
        assert exit_.value.code == 2
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
    # a subprocess through python -m cli exits with main's status too
    assert _costmodel("run", "no-such-example").returncode == 2


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("costmodel ")


@pytest.mark.parametrize("command", sorted(_subparsers()))
def test_every_option_has_help_and_every_command_ends_with_examples(command):
    sub = _subparsers()[command]
    for action in sub._actions:
        if not isinstance(action, argparse._HelpAction):
            assert action.help, (command, action.dest)
    text = sub.format_help()
    assert "examples:" in text and text.rstrip().splitlines()[-1].startswith("  costmodel ")
    assert "examples:" in _parser().format_help()


@pytest.mark.parametrize(
    "args",
    [["plan" if p.name.startswith("plan-") else "run", str(p)] for p in EXAMPLES]
    + [["catalog", "gpus"], ["catalog", "instances"]],
)
def test_tables_fit_a_100_column_terminal(args, monkeypatch, capsys):
    lines = _printed(monkeypatch, capsys, *args, columns=100).splitlines()
    assert max(len(line) for line in lines) <= 100
    assert all(line == line.rstrip() for line in lines)


def test_narrow_terminals_drop_columns_by_priority(monkeypatch, capsys):
    wide = _printed(monkeypatch, capsys, "run", str(WORKED), columns=160)
    narrow = _printed(monkeypatch, capsys, "run", str(WORKED), columns=72)
    assert "P10–P90" in wide and "P10–P90" not in narrow
    assert "P(buy" in narrow and max(len(x) for x in narrow.splitlines()) <= 72


def _header(out: str, title: str) -> str:
    """The header lines of the table that follows the line starting with ``title``."""
    table = out[out.index(title) :].split("\n", 1)[1]
    return table[: table.index("───")]


def test_plan_tables_keep_the_columns_of_their_objective(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    spot = ROOT / "scenarios" / "examples" / "plan-h100-fleet-reserved-spot.yaml"
    text = spot.read_text("utf-8")
    assert "objective: p90" in text
    for objective, shown, dropped in [
        ("p90", ("P10–P90", "CVaR95"), ("Mean",)),  # the P90 is the band's end
        ("cvar95", ("CVaR95", "P10–P90"), ("Mean",)),
        ("mean", ("Mean",), ("CVaR95",)),
    ]:
        path = tmp_path / f"{objective}.yaml"
        path.write_text(text.replace("objective: p90", f"objective: {objective}"), "utf-8")
        assert main(["plan", str(path), "--samples", "500"]) == 0
        header = _header(capsys.readouterr().out, "Candidates")
        assert all(h in header for h in shown), (objective, header)
        assert not any(h in header for h in dropped), (objective, header)


def test_a_plan_that_counts_carbon_keeps_its_carbon_column_at_80_columns(capsys, monkeypatch):
    # Servers, Reserved, Cost P50, Mean, Carbon and the marks are 7 + 8 + 10 + 10 + 8 + 12
    # characters and five gaps of 3: 70 <= 80; P(cheaper than cloud) would add 11 + 3.
    monkeypatch.setenv("COLUMNS", "80")
    plan = ROOT / "scenarios" / "examples" / "plan-lab-rtx4090-carbon.yaml"
    assert main(["plan", str(plan), "--samples", "500"]) == 0
    out = capsys.readouterr().out
    header = _header(out, "Candidates")
    assert "[t CO2e]" in header and "Mean" in header, header
    assert max(map(len, out.splitlines())) <= 80


def test_the_instance_listing_keeps_every_price_at_100_columns(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["catalog", "instances"]) == 0
    out = capsys.readouterr().out
    header = out[: out.index("───")]
    assert all(h in header for h in ("id", "GPUs", "on-demand", "1y", "3y", "spot")), header
    assert max(map(len, out.splitlines())) <= 100


def test_long_warnings_wrap_with_an_indent(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "72")
    assert (
        main(["run", str(ROOT / "scenarios" / "examples" / "lab-4x-rtx2080ti-vs-p3-8xlarge.yaml")])
        == 0
    )
    lines = capsys.readouterr().out.split("Warnings:\n", 1)[1].splitlines()
    assert any(line.startswith("    ") for line in lines)  # a warning took two lines or more
    assert all(line.startswith(("  [", "    ")) and len(line) <= 72 for line in lines), lines


@pytest.mark.parametrize("command", [None, *sorted(_subparsers())])
def test_help_fits_the_terminal(command, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    parser = _parser() if command is None else _subparsers()[command]
    for line in parser.format_help().splitlines():
        if line.startswith("  costmodel "):  # an example is a command line, kept whole
            assert len(line) <= 100, line
        else:
            assert len(line) <= 80, line


def test_payback_never_while_buying_is_cheaper_is_explained(capsys):
    # the T4 box at 50 %: cheaper in 75 % of draws over the horizon, no payback in cash
    assert main(["run", str(T4)]) == 0
    out = capsys.readouterr().out
    assert "Payback counts no resale" in out


def test_percentages_are_the_same_in_the_table_and_the_report(capsys, tmp_path, no_charts):
    assert main(["run", str(T4), "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert main(["run", str(T4)]) == 0
    table = capsys.readouterr().out
    html = tmp_path / "r.html"
    assert main(["report", str(T4), "-o", str(html)]) == 0
    page = unescape(html.read_text("utf-8"))
    shares = [p for p in result["prob_buy_cheaper"] if 0.995 < p < 1]
    assert shares  # a share that must not print as 100 %
    from present.formatting import fmt_share

    for p in shares:
        assert fmt_share(p) in table and fmt_share(p) in page
        assert fmt_share(p) != "100 %"


def test_the_t4_example_has_no_throughput_warning(capsys):
    # the work is counted in T4-hours: both sides are exactly 1 reference GPU per GPU
    assert main(["run", str(T4), "--format", "json"]) == 0
    codes = [w["code"] for w in json.loads(capsys.readouterr().out)["warnings"]]
    assert "throughput_from_peaks" not in codes and "throughput_estimated" not in codes


def test_an_estimated_throughput_is_warned_about_once(tmp_path, capsys):
    text = T4.read_text("utf-8").replace("reference_gpu: t4", "reference_gpu: v100-sxm2-16gb")
    path = tmp_path / "t4-v100.yaml"
    path.write_text(text)
    assert main(["run", str(path), "--format", "json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    peaks = [w for w in warnings if w["code"] == "throughput_estimated"]  # the T4's, anchored
    assert len(peaks) == 1
    assert "int8 inference" in peaks[0]["message"] and "training" not in peaks[0]["message"]


def test_tabs_and_missing_files_are_said_plainly(tmp_path, capsys):
    path = tmp_path / "tabs.yaml"
    path.write_text("version: 1\nname: t\nbuy:\n\tgpu: t4\n")
    assert main(["run", str(path)]) == 2
    assert "indent with spaces, not tabs" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "missing.yaml")]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {tmp_path / 'missing.yaml'}: file not found\n"


# --------------------------------------------------------------------------- report


@pytest.fixture(scope="module")
def result_json(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("result") / "result.json"
    out = _costmodel("run", str(WORKED), "--format", "json")
    path.write_text(out.stdout)
    return path


def test_report_format_from_the_extension_or_the_option(result_json, tmp_path, capsys, no_charts):
    assert main(["report", str(result_json), "-o", str(tmp_path / "a.csv")]) == 0
    assert (tmp_path / "a.csv").read_text().startswith("utilisation,")
    # no extension: --format supplies it, and the file is the one named
    assert main(["report", str(result_json), "--format", "md", "-o", str(tmp_path / "b")]) == 0
    assert (tmp_path / "b").read_text().startswith("# ")
    capsys.readouterr()
    # no extension and no --format, or an unknown extension without --format: refused
    for args in (["-o", str(tmp_path / "c")], ["-o", str(tmp_path / "c.txt")]):
        assert main(["report", str(result_json), *args]) == 2
        assert "error:" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b", *_md_images("b")]


def test_an_explicit_format_writes_exactly_the_path_asked_for(
    result_json, tmp_path, capsys, no_charts
):
    for name, fmt, start in [("x.txt", "md", "# "), ("r.csv", "html", "<!DOCTYPE html>")]:
        assert main(["report", str(result_json), "--format", fmt, "-o", str(tmp_path / name)]) == 0
        assert capsys.readouterr().out.splitlines()[0] == str(tmp_path / name)
        assert (tmp_path / name).read_text("utf-8").startswith(start)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "x.txt", *_md_images("x")]


def _md_images(stem: str) -> list[str]:
    return sorted(f"{stem}_{c}.svg" for c in ("breakeven", "cumulative", "prob_buy_cheaper"))


@pytest.mark.parametrize(
    "change, path",
    [
        ({"schema_version": 2}, "schema_version"),
        ({"prob_buy_cheaper": None}, "prob_buy_cheaper"),
        ({"utilisation": [0.0, 0.25, 0.5]}, "buy_tco.mean"),
    ],
)
def test_report_refuses_results_that_break_the_contract(
    result_json, tmp_path, capsys, change, path
):
    data = json.loads(result_json.read_text())
    data.update(change)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert main(["report", str(bad), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: {path}" in err and "Traceback" not in err
    assert not (tmp_path / "r.html").exists()


def test_report_refuses_nan(result_json, tmp_path, capsys):
    bad = tmp_path / "nan.json"
    text = result_json.read_text()
    assert '"prob_never": 0.0' in text
    bad.write_text(text.replace('"prob_never": 0.0', '"prob_never": NaN', 1))
    assert main(["report", str(bad), "-o", str(tmp_path / "r.html")]) == 2
    assert "NaN" in capsys.readouterr().err


def _one_error_line(capsys, *names: object) -> str:
    """The command's stderr: one ``error:`` line naming each of ``names``, no traceback."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert all(str(n) in err for n in names), err
    return err


def _bad_result(result_json: Path, tmp_path: Path, edit) -> Path:
    data = json.loads(result_json.read_text())
    edit(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))  # json.dumps writes NaN as NaN, as Python reads it
    return bad


def _set(path: str, value):
    def edit(data):
        *parents, last = path.split(".")
        node = data
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[last] = value

    return edit


def _next_version(data):
    data.update(schema_version=2, tco={}, renamed_block=[])
    del data["buy_tco"], data["verdict"]


@pytest.mark.parametrize(
    "edit, says",
    [
        (_next_version, "schema_version: unsupported schema_version 2"),
        (_set("prob_buy_cheaper", None), "prob_buy_cheaper: must not be null"),
        (_set("scenario.discount_rate", float("nan")), "scenario.discount_rate: NaN"),
        (_set("scenario.buy.gpu_count", float("inf")), "scenario.buy.gpu_count: NaN"),
        (_set("assumptions.0.value", float("nan")), "assumptions[0].value: NaN"),
        # no XLSX report can hold it: an IllegalCharacterError traceback
        (
            _set("assumptions.0.source", "my\x03quote"),
            "assumptions[0].source: text holds the control character U+0003; remove it",
        ),
    ],
    ids=[
        "schema-version-2",
        "prob-null",
        "nan-in-scenario",
        "inf-in-scenario",
        "nan-assumption",
        "control-character",
    ],
)
def test_report_refuses_a_bad_result_in_one_line(result_json, tmp_path, capsys, edit, says):
    bad = _bad_result(result_json, tmp_path, edit)
    assert main(["report", str(bad), "-o", str(tmp_path / "r.html")]) == 2
    _one_error_line(capsys, bad, says)
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(
    "edit",
    [_set("scenario.buy", "rtx-4090"), _set("scenario.carbon", {"service_life_years": "long"})],
    ids=["buy-as-text", "service-life-as-text"],
)
def test_a_report_shows_what_it_can_of_an_odd_scenario_echo(result_json, tmp_path, edit, no_charts):
    # the result's scenario is its document echoed, read with care: these two were an
    # AttributeError ("'str' object has no attribute 'get'") and a TypeError (abs() of text)
    bad = _bad_result(result_json, tmp_path, edit)
    for fmt in ("html", "md"):
        assert main(["report", str(bad), "-o", str(tmp_path / f"r.{fmt}")]) == 0
        assert "Break-even" in (tmp_path / f"r.{fmt}").read_text("utf-8")


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"schema_version": 1, "scenario": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ],
    ids=["array", "inside-a-result"],
)
def test_report_refuses_json_nested_too_deep(tmp_path, capsys, text):
    deep = tmp_path / "deep.json"
    deep.write_text(text)
    assert main(["report", str(deep), "-o", str(tmp_path / "r.html")]) == 2
    _one_error_line(capsys, deep, "nested too deeply")


def _limit_memory() -> None:  # a child that would read without end fails at 2 GiB
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_report_of_an_endless_json_is_refused_unread(tmp_path):
    # read whole: a link to /dev/zero was a MemoryError traceback (after eating the memory)
    endless = tmp_path / "endless.json"
    endless.symlink_to("/dev/zero")
    out = subprocess.run(
        [sys.executable, "-m", "cli", "report", str(endless), "-o", str(tmp_path / "r.html")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limit_memory,
    )
    assert out.returncode == 2, out.stderr[-500:]
    says = "is not a file (a device or a pipe); a result JSON is read from a file"
    assert out.stderr == f"error: {endless}: {says}\n"


def test_report_output_must_be_a_file_it_can_write(result_json, tmp_path, capsys):
    folder = tmp_path / "folder"
    folder.mkdir()
    (tmp_path / "d.md").mkdir()
    (tmp_path / "file.txt").write_text("a file")
    for args, says in [
        (["--format", "html", "-o", str(folder)], "is a folder"),
        (["-o", str(tmp_path / "new") + "/"], "is a folder"),
        (["-o", str(tmp_path / "d.md")], "is a folder"),
        (["-o", str(tmp_path / "file.txt" / "out.html")], "file.txt is not a folder"),
        (["--format", "md", "-o", str(tmp_path / "d.md")], "is a folder"),
    ]:
        assert main(["report", str(result_json), *args]) == 2
        _one_error_line(capsys, args[-1].rstrip("/"), says)
    # nothing written, not even the charts of the Markdown report
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.md", "file.txt", "folder"]
    assert list(folder.iterdir()) == [] and list((tmp_path / "d.md").iterdir()) == []
    # a missing parent folder is made
    assert main(["report", str(result_json), "-o", str(tmp_path / "a" / "b" / "r.csv")]) == 0
    assert (tmp_path / "a" / "b" / "r.csv").is_file()


def test_report_never_writes_over_the_file_it_reads(tmp_path, capsys):
    # "--format html -o scenario.yaml" wrote the report over the scenario it had just read
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(WORKED.read_text("utf-8"), encoding="utf-8")
    prices = tmp_path / "prices.csv"
    prices.write_text("gpu,usd,as_of,source\nrtx-4090,1750,2026-01-02,shop\n", encoding="utf-8")
    for args, source in [
        (["--format", "html", "-o", str(scenario)], scenario),
        (["--format", "md", "-o", str(tmp_path / "." / "scenario.yaml")], scenario),
        (["--prices", str(prices), "--format", "csv", "-o", str(prices)], prices),
    ]:
        before = source.read_bytes()
        assert main(["report", str(scenario), *args]) == 2
        _one_error_line(capsys, f"{args[-1]}: is the input {source}; give the output another name")
        assert source.read_bytes() == before


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_report_into_a_place_no_file_can_be_made(result_json, capsys):
    out = "/proc/costmodel-report.html"  # even root cannot create a file here
    assert main(["report", str(result_json), "-o", out]) == 2
    _one_error_line(capsys, out, "cannot write the report")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["schema"], ["run", str(WORKED), "--format", "json"]])
def test_output_to_a_full_disk_is_one_error_line(args):
    # "> result.json" on a full disk: an OSError traceback, then "Exception ignored" at exit
    with open("/dev/full", "w") as full:
        out = subprocess.run(
            [sys.executable, "-m", "cli", *args],
            cwd=ROOT,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"},
            timeout=300,
        )
    assert out.returncode == 1
    assert out.stderr == "error: standard output: No space left on device\n"


def test_a_terminal_that_cannot_show_a_character_gets_a_stand_in(tmp_path):
    # An ASCII (or a Windows code page) standard output: every table ("±", "–") and any name in
    # another script was a UnicodeEncodeError traceback.
    doc = yaml.safe_load(WORKED.read_text("utf-8"))
    doc["name"] = "研究室 lab"
    path = tmp_path / "named.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), "utf-8")
    env = {"COLUMNS": "100", "PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "ascii"}
    out = subprocess.run(
        [sys.executable, "-m", "cli", "run", str(path)],
        cwd=ROOT,
        capture_output=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr.decode("ascii", "replace")
    text = out.stdout.decode("ascii")
    assert text.startswith("??? lab  (samples 1") and "Break-even P50 7.1 % ? 0.0 %" in text


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--port", "-1"], "argument --port: port must be in [1, 65,535], got -1"),
        (["--port", "99999"], "argument --port: port must be in [1, 65,535], got 99999"),
        (["--host", "999.1.1.1"], "error: --host '999.1.1.1': no such address to serve on ("),
    ],
)
def test_serve_refuses_a_port_or_host_it_cannot_bind(args, says):
    # a port out of range was an OverflowError traceback or "Port 99999 is in use by another
    # program"; an unknown host "Name or service not known" with exit status 1
    out = _costmodel("serve", *args)  # a subprocess: a server that starts would not return
    assert out.returncode == 2, out.stderr
    assert says in out.stderr and "Traceback" not in out.stderr


# --------------------------------------------------------------------------- batch extras


def test_dask_without_the_extra_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    args = ["batch", str(WORKED), "--out", str(tmp_path / "out"), "--db", str(tmp_path / "db")]
    assert main([*args, "--dask-scheduler", "tcp://127.0.0.1:1", "--quiet"]) == 2
    assert 'pip install "gpu-costmodel[distributed]"' in capsys.readouterr().err


_IMPORTS = """
import contextlib, io, re, sys
from cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exit_:
        code = exit_.code
heavy = ("scipy", "matplotlib", "flask", "pandas", "openpyxl", "jinja2", "importlib.metadata",
         "importlib.resources", "tempfile", "shutil", "email.utils", "difflib")
loaded = sorted(m for m in heavy if m in sys.modules)
validate = sys.modules.get("marshmallow.validate")
if validate is not None and isinstance(validate.Email.DOMAIN_REGEX, re.Pattern):
    loaded.append("compiled-email-pattern")  # ~25 ms that no scenario needs
print(code, *loaded)
"""


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["run", "--help"],
        # uniform, triangular and fixed inputs only: closed-form inverse CDFs, no scipy
        ["run", str(ROOT / "benchmarks" / "scenario-1m.yaml"), "--samples", "2000"],
        ["run", str(WORKED)],
        ["run", "worked-example"],
        ["examples"],
    ],
)
def test_help_and_plain_runs_import_nothing_heavy(args):
    out = subprocess.run(
        [sys.executable, "-c", _IMPORTS, *args], cwd=ROOT, capture_output=True, text=True
    )
    assert out.stdout.split() == ["0"], out.stdout + out.stderr


def test_the_email_validator_still_validates_once_its_patterns_are_compiled_late():
    code = (
        "import scenarios, marshmallow.validate as v\n"
        "e = v.Email()\n"
        "print(e('someone@example.org'))\n"
        "try:\n    e('someone@')\nexcept v.ValidationError as exc:\n    print(exc.messages[0])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["someone@example.org", "Not a valid email address."]


def test_rfc_822_dates_still_work_once_email_utils_is_imported_late():
    code = (
        "import datetime as dt, sys\n"
        "import scenarios\n"
        "from marshmallow import fields\n"
        "print('email.utils' in sys.modules)\n"
        "d = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)\n"
        "f = fields.DateTime(format='rfc')\n"
        "text = f.serialize('d', {'d': d})\n"
        "print(text, f.deserialize(text) == d)\n"
        "import email.utils\n"
        "print(email.utils.formatdate(0, usegmt=True))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "False",
        "Fri, 02 Jan 2026 03:04:05 +0000 True",
        "Thu, 01 Jan 1970 00:00:00 GMT",
    ]


def test_progress_bar_only_on_a_terminal_and_only_for_long_runs():
    from cli.progress import ProgressBar

    class Stream(io.StringIO):
        def __init__(self, tty: bool) -> None:
            super().__init__()
            self.tty = tty

        def isatty(self) -> bool:
            return self.tty

    now = [0.0]
    clock = lambda: now[0]  # noqa: E731
    for tty, step, shown in [(False, 1.0, False), (True, 0.01, False), (True, 1.0, True)]:
        stream, now[0] = Stream(tty), 0.0
        with ProgressBar(stream, clock=clock) as bar:
            for k in range(1, 11):  # ten chunks, each taking `step` seconds
                now[0] += step
                bar(k / 10)
                if k == 5:
                    assert bar.shown is shown  # projected 10 s shows; 0.1 s or no tty does not
        assert bool(stream.getvalue()) is shown
        assert not bar.shown  # removed at the end


def test_simulate_reports_progress_per_chunk_up_to_one(monkeypatch):
    import scenarios

    monkeypatch.setattr("costmodel.engine._CHUNK_ELEMENTS", 36 * 250)  # 250 draws a chunk
    seen: list[float] = []
    scenarios.evaluate(WORKED, samples=1000, progress=seen.append)
    assert seen == [0.25, 0.5, 0.75, 1.0]


@pytest.mark.parametrize(
    "command, example, engine",
    [
        ("run", "worked-example", "costmodel.engine"),
        ("plan", "plan-lab-rtx4090-growth", "costmodel.fleet"),
    ],
)
def test_a_long_run_or_plan_shows_the_bar_on_a_terminal(
    command, example, engine, monkeypatch, capsys
):
    import functools

    import cli.progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    ticks = iter(range(1_000_000))
    clock = lambda: float(next(ticks))  # noqa: E731  (each look at it is a second later)
    monkeypatch.setattr(
        cli.progress, "ProgressBar", functools.partial(cli.progress.ProgressBar, clock=clock)
    )
    # 250 draws a chunk at 36 months: 1,000 draws are four chunks, the first projecting 4 s
    monkeypatch.setattr(f"{engine}._CHUNK_ELEMENTS", 36 * 250)
    stderr = Terminal()
    monkeypatch.setattr(sys, "stderr", stderr)
    assert main([command, example, "--samples", "1000"]) == 0
    assert "simulating" in stderr.getvalue()
    assert capsys.readouterr().out  # the answer is printed as ever


# --------------------------------------------------------------------------- catalog listings


def test_catalog_json_filters_by_provider(capsys):
    assert main(["catalog", "instances", "--format", "json", "--provider", "Lambda"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["table"] == "instances" and doc["version"] and doc["as_of"]
    items = doc["items"]
    assert items and {i["provider"] for i in items} == {"lambda"}
    assert {i["tier"] for i in items} == {"neocloud"}
    h100 = next(i for i in items if i["id"] == "lambda/gpu_8x_h100_sxm5")
    assert h100["on_demand_usd_per_hour"] == 31.92 and "http" in h100["source"]
    assert [h["usd_per_hour"] for h in h100["history"]] == [27.92, 23.92]


def test_catalog_csv_filters_by_tier(capsys):
    import csv

    assert main(["catalog", "instances", "--format", "csv", "--tier", "marketplace"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows and {r["tier"] for r in rows} == {"marketplace"}
    assert {r["provider"] for r in rows} == {"vastai"}
    assert all(r["as_of"] and r["source"].startswith("https://") for r in rows)


def test_catalog_gpus_of_a_provider(capsys):
    assert main(["catalog", "gpus", "--format", "json", "--provider", "azure"]) == 0
    ids = {g["id"] for g in json.loads(capsys.readouterr().out)["items"]}
    assert {"mi300x", "h200-sxm-141gb", "a100-pcie-80gb"} <= ids
    assert "rtx-4090" not in ids
    assert main(["catalog", "gpus", "--tier", "neocloud"]) == 0
    out = capsys.readouterr().out
    assert "b200" in out and "gtx-960" not in out and "of 48 gpus" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--provider", "lamda"], "unknown provider 'lamda'; valid: aws, azure, coreweave"),
        (["--provider", "lamda"], "did you mean 'lambda'?"),
        (["--tier", "cloud"], "unknown tier 'cloud'; valid: hyperscaler, neocloud, marketplace"),
    ],
)
def test_catalog_refuses_unknown_provider_or_tier(capsys, args, message):
    assert main(["catalog", "instances", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err


def test_catalog_refuses_unknown_format():
    out = _costmodel("catalog", "gpus", "--format", "xml")
    assert out.returncode == 2 and "invalid choice: 'xml'" in out.stderr


def test_the_report_formats_of_the_help_are_the_exporters():
    from cli.options import FORMATS
    from present.reports import FORMATS as EXPORTED

    assert tuple(FORMATS) == tuple(EXPORTED)


def test_the_compare_help_states_the_utilisation_it_takes():
    # The help said "(0, 1]" while a comparison refuses a busy share below 1e-6.
    from cli.options import MIN_UTILISATION
    from costmodel.inputs import MIN_UTILISATION as FLOOR
    from scenarios.compare import load_request
    from scenarios.errors import ScenarioError

    assert MIN_UTILISATION == FLOOR
    help_text = " ".join(_costmodel("compare", "--help").stdout.split())
    assert "busy share of wall-clock hours, in [1e-06, 1]" in help_text
    load_request({"utilisation": FLOOR})
    for u in (FLOOR / 2, 1.0000001):
        with pytest.raises(ScenarioError):
            load_request({"utilisation": u})


def test_costs_per_unit_of_work_keep_three_significant_figures_with_their_zeros():
    # "$0.54" beside "$0.374" in one column read as two precisions: trailing zeros are kept.
    from present.formatting import fmt_unit_cost

    cells = [fmt_unit_cost(x) for x in (0.54, 0.374, 2.4, 0.0689, 123.4, 0.0, None)]
    assert cells == ["$0.540", "$0.374", "$2.40", "$0.0689", "$123", "$0", "—"]
    assert fmt_unit_cost(1234.5) == "$1,234"  # from $1,000 as money


@pytest.mark.parametrize("terminal", [False, True])
def test_a_name_with_brackets_or_colons_is_printed_as_written(tmp_path, terminal):
    # rich read "[/bold]" in a scenario's name as a closing tag (a MarkupError traceback) and
    # dropped "[red]"; in plain text and on a terminal (FORCE_COLOR) the name is the user's text
    doc = yaml.safe_load((ROOT / "scenarios" / "examples" / "worked-example.yaml").read_text())
    for name in ("lab [/bold] build", "lab [red]4x[/red] :smile:"):
        doc["name"] = name
        path = tmp_path / "named.yaml"
        path.write_text(yaml.safe_dump(doc), "utf-8")
        env = {
            "COLUMNS": "100",
            "PATH": "/usr/bin:/bin",
            **({"FORCE_COLOR": "1"} if terminal else {}),
        }
        out = subprocess.run(
            [sys.executable, "-m", "cli", "run", str(path)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=env,
        )
        assert out.returncode == 0, out.stderr
        assert name in re.sub(r"\x1b\[[0-9;]*m", "", out.stdout.splitlines()[0])


def test_throughput_and_compare_take_the_serving_request_options_of_one_definition(capsys):
    """``--input-tokens`` ... ``--max-ttft-ms`` are made once (cli.options.SERVING_FLAGS): both
    commands list them in their help and parse them to the same values and types, and each
    names them in its errors by the key they set."""
    from cli.commands import compare, throughput
    from cli.options import SERVING_FLAGS

    given = ["--input-tokens", "5000", "--output-tokens", "500", "--min-tokens-per-s-per-user",
             "20", "--max-tpot-ms", "25", "--max-ttft-ms", "500"]  # fmt: skip
    want = {"input_tokens": 5000, "output_tokens": 500, "min_tokens_per_s_per_user": 20.0,
            "max_tpot_ms": 25.0, "max_ttft_ms": 500.0}  # fmt: skip
    assert set(want) == set(SERVING_FLAGS)
    for argv in (["throughput", "llama-3.1-8b"], ["compare", "-u", "0.5", "--model", "m"]):
        parser = _subparsers()[argv[0]]
        args = parser.parse_args([*argv[1:], *given])
        assert {k: getattr(args, k) for k in want} == want
        assert [type(getattr(args, k)) for k in want] == [int, int, float, float, float]
        text = parser.format_help()
        assert all(f"{flag} " in text for flag in SERVING_FLAGS.values()), text
        with pytest.raises(SystemExit):
            parser.parse_args([*argv[1:], "--max-tpot-ms", "soon"])
        assert "argument --max-tpot-ms: invalid float value: 'soon'" in capsys.readouterr().err
    for module in (compare, throughput):
        assert all(module._FLAGS[k] == flag for k, flag in SERVING_FLAGS.items())
