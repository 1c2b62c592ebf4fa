"""The production server: gunicorn serving ``api:create_app()`` on a free loopback port, on
each run-store backend."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKED = yaml.safe_load((ROOT / "scenarios/examples/worked-example.yaml").read_text("utf-8"))
HOST = "127.0.0.1"
START_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def request(
    port: int, method: str, path: str, body: Any = None, timeout: float = 30.0
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


@pytest.fixture
def server(tmp_path: Path, store_location: str) -> Iterator[int]:
    """gunicorn with 2 workers on ``store_location``; yields its port and always stops it."""
    port = free_port()
    env = {
        **os.environ,
        "COSTMODEL_DB": store_location,
        "COSTMODEL_API_KEYS": "",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    log = (tmp_path / "gunicorn.log").open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "--bind",
            f"{HOST}:{port}",
            "--workers",
            "2",
            "--timeout",
            "120",
            "api:create_app()",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"gunicorn exited with {proc.returncode}:\n{_log_text(tmp_path)}")
            try:
                if request(port, "GET", "/health", timeout=2)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"gunicorn did not answer /health in time:\n{_log_text(tmp_path)}")
            time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
        log.close()


def _log_text(tmp_path: Path) -> str:
    return (tmp_path / "gunicorn.log").read_text(errors="replace")[-4000:]


def test_gunicorn_serves_runs(server: int) -> None:
    status, headers, body = request(server, "POST", "/v1/runs", WORKED)
    assert status == 201, body
    run = json.loads(body)
    assert headers["Location"] == f"/v1/runs/{run['id']}"
    assert run["result"]["buy_tco"]["p50"] == pytest.approx(
        [7996.3813, 8757.2999, 9518.2185, 11040.0558], rel=1e-6
    )

    status, _, body = request(server, "GET", headers["Location"])
    assert status == 200 and json.loads(body) == run

    status, _, body = request(server, "GET", "/v1/runs/not-a-run")
    assert status == 404 and json.loads(body)["code"] == 404
    status, _, body = request(server, "GET", "/openapi.json")
    assert status == 200 and json.loads(body)["openapi"].startswith("3.")


def test_gunicorn_workers_store_concurrent_runs(server: int) -> None:
    """16 concurrent POSTs across two worker processes: all stored once, all readable."""

    def post(i: int) -> str:
        status, _, body = request(server, "POST", "/v1/runs", {**WORKED, "name": f"gunicorn-{i}"})
        assert status == 201, body
        return json.loads(body)["id"]

    with ThreadPoolExecutor(max_workers=16) as pool:
        ids = list(pool.map(post, range(16)))
    assert len(set(ids)) == 16
    status, _, body = request(server, "GET", "/v1/runs?page_size=100")
    listing = json.loads(body)
    assert status == 200 and listing["total"] == 16
    assert sorted(r["id"] for r in listing["items"]) == sorted(ids)
    assert {r["name"] for r in listing["items"]} == {f"gunicorn-{i}" for i in range(16)}
