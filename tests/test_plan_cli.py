"""``costmodel plan`` with many candidates: a plan the command cannot hold is refused before
anything is evaluated, naming the limit and the fix; the table shows the best N and the
frontier, and says so."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import yaml

from api.memory import plan_memory
from cli import main
from cli.commands.plan import TOP

ROOT = Path(__file__).resolve().parents[1]
SPOT = ROOT / "scenarios" / "examples" / "plan-h100-fleet-reserved-spot.yaml"


def _plan(tmp_path: Path, servers: int, instances: int) -> Path:
    doc = yaml.safe_load(SPOT.read_text("utf-8"))
    doc["own"]["servers"] = {"min": 0, "max": servers}
    doc["reserve"]["instances"] = {"min": 0, "max": instances}
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(doc), "utf-8")
    return path


def test_a_plan_the_command_cannot_hold_is_refused_at_once(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("COSTMODEL_MAX_MEMORY", raising=False)
    path = _plan(tmp_path, 1000, 1000)
    start = time.process_time()
    assert main(["plan", str(path)]) == 2
    assert time.process_time() - start < 1.0  # refused before any draw
    err = capsys.readouterr().err
    # 83,886,080 (the process) + 26,880,000 (a chunk, 7 x 8 x 10,000 x 48) + 320,000 (the
    # draws, 10,000 x 32) + 50,160,000 (a block of 209 candidates, 209 x 10,000 x 24)
    # + 4,408,804,400 (1,002,001 candidates x 4,400) = 4,570,050,480 bytes, 4.3 GiB
    assert plan_memory(10_000, 1_002_001, 48) == 4_570_050_480
    assert "1,002,001 candidates would hold about 4.3 GiB" in err, err
    assert "more than the 1.0 GiB" in err and "COSTMODEL_MAX_MEMORY" in err
    assert "narrow own.servers or reserve.instances" in err
    most = int(re.search(r"about ([\d,]+) candidates fit", err)[1].replace(",", ""))
    assert plan_memory(10_000, most, 48) <= 2**30 < plan_memory(10_000, most + 1, 48)
    assert "Traceback" not in err


def test_the_bound_is_the_services_setting(tmp_path, capsys, monkeypatch):
    path = _plan(tmp_path, 4, 1)  # 10 candidates: about 100 MiB at 10,000 draws
    monkeypatch.setenv("COSTMODEL_MAX_MEMORY", str(50 * 2**20))
    assert main(["plan", str(path)]) == 2
    assert "more than the 50 MiB one evaluation may hold" in capsys.readouterr().err
    monkeypatch.setenv("COSTMODEL_MAX_MEMORY", "lots")
    assert main(["plan", str(path)]) == 2
    assert "COSTMODEL_MAX_MEMORY must be a positive integer [byte], got 'lots'" in (
        capsys.readouterr().err
    )


def _rows(out: str) -> list[str]:
    table = out.split("Candidates (")[1]
    return [line for line in table.splitlines() if re.match(r"^\s+\d+\s+\d+\s+\$", line)]


@pytest.mark.parametrize("top", [None, "3", "0"])
def test_the_table_shows_the_best_and_the_frontier(tmp_path, capsys, monkeypatch, top):
    monkeypatch.setenv("COLUMNS", "120")
    path = _plan(tmp_path, 30, 2)  # 93 candidates
    args = ["plan", str(path), "--samples", "300"] + (["--top", top] if top else [])
    assert main(args) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    frontier = [r for r in rows if "frontier" in r or "best" in r]
    shown = TOP if top is None else int(top)
    if shown:
        assert len(rows) <= shown + len(frontier)
        assert f"{len(rows)} of 93 candidates shown: the best {shown} by the p90 cost" in out
        assert "--top 0 shows every one" in out
    else:
        assert len(rows) == 93 and "candidates shown" not in out
    assert any("best" in r for r in rows)


def test_top_must_be_a_count(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["plan", str(_plan(tmp_path, 2, 1)), "--top", "-1"])
    assert exc.value.code == 2
    assert "must be a whole number >= 0, got '-1'" in capsys.readouterr().err
