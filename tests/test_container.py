"""The container files: Dockerfile, compose.yaml and .dockerignore.

Always checked, without Docker: the Dockerfile's instructions (a slim Python base the project
supports, the package installed with its PostgreSQL extra, a user that is not root, gunicorn's
options parsed by gunicorn itself and its app loaded by gunicorn's own loader, the exposed port
the one that is bound and health-checked, the health check run against a live app); the compose
file (one PostgreSQL with a readiness check, two API services of the one image with their own
health checks and host ports, their run store that database); every ``COSTMODEL_*`` variable
of both files a setting of api/config.py that the app takes; the build context that
.dockerignore leaves holds every file the package needs and none of the repository's clutter;
and the compose settings, pointed at a throw-away PostgreSQL, let a run stored through one
instance be read through the other.

Where Docker works, the image is built and run until it reports itself healthy. This needs
``docker info`` to answer and the base image to be pullable; otherwise (as on a machine that
reaches no container registry) that test skips.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
import tomllib
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from api import create_app
from scenarios.store import parse_location

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = (ROOT / "Dockerfile").read_text("utf-8")
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text("utf-8"))
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
WORKED = yaml.safe_load((ROOT / "scenarios/examples/worked-example.yaml").read_text("utf-8"))


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments dropped."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    out = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


INSTRUCTIONS = _instructions(DOCKERFILE)


def _all(name: str) -> list[str]:
    return [args for word, args in INSTRUCTIONS if word == name]


def _one(name: str) -> str:
    found = _all(name)
    assert len(found) == 1, f"{name}: {found}"
    return found[0]


def _image_env() -> dict[str, str]:
    """The image's ENV, in the ``KEY=value ...`` form."""
    env: dict[str, str] = {}
    for args in _all("ENV"):
        env.update(word.split("=", 1) for word in shlex.split(args))
    return env


def _healthcheck_command() -> list[str]:
    options, _, command = _one("HEALTHCHECK").partition(" CMD ")
    assert re.fullmatch(r"(--[a-z-]+=\S+\s*)+", options.strip()), options
    return json.loads(command)


def _gunicorn_options() -> Any:
    """The image's gunicorn options, parsed by gunicorn's own command-line parser."""
    from gunicorn.config import Config

    return Config().parser().parse_args(shlex.split(_image_env()["GUNICORN_CMD_ARGS"]))


def _port() -> int:
    (exposed,) = _one("EXPOSE").split()
    return int(exposed)


# --- the Dockerfile ------------------------------------------------------------------------


def test_base_image_is_a_slim_python_the_project_supports():
    match = re.fullmatch(r"python:(3)\.(\d+)-slim", _one("FROM"))
    assert match, _one("FROM")
    lowest = re.fullmatch(r">=(\d+)\.(\d+)", PYPROJECT["project"]["requires-python"])
    assert (int(match[1]), int(match[2])) >= (int(lowest[1]), int(lowest[2]))


def test_the_package_is_installed_with_its_postgres_extra():
    installs = [r for r in _all("RUN") if "pip install" in r]
    assert len(installs) == 1 and "[postgres]" in installs[0]
    assert "postgres" in PYPROJECT["project"]["optional-dependencies"]
    assert "psycopg" in " ".join(PYPROJECT["project"]["optional-dependencies"]["postgres"])


def test_the_service_runs_as_a_user_that_is_not_root():
    users = _all("USER")
    assert users, "no USER: the container would run as root"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")
    created = [r for r in _all("RUN") if "useradd" in r]
    assert created and re.search(rf"\b{re.escape(user)}$", created[0]), created
    uid = re.search(r"--uid (\d+)", created[0])
    assert uid and int(uid[1]) > 0
    # Every instruction after USER runs as that user; the install ran before it, as root.
    order = [word for word, _ in INSTRUCTIONS]
    assert order.index("USER") > max(i for i, (w, a) in enumerate(INSTRUCTIONS) if "pip" in a)


def test_cmd_runs_gunicorn_with_the_app_factory(monkeypatch, tmp_path):
    from gunicorn.util import import_app

    cmd = json.loads(_one("CMD"))
    assert cmd[:3] == ["gunicorn", "-c", "python:api.gunicorn_conf"] and len(cmd) == 4
    del cmd[1:3]  # gunicorn's settings of the API: its own answers in the error shape
    options = _gunicorn_options()
    assert options.bind == [f"0.0.0.0:{_port()}"]
    assert options.workers >= 1 and options.timeout >= 60
    # gunicorn's own loader builds the app from the image's settings (the data directory
    # moved to a temporary one).
    env = _image_env()
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("COSTMODEL_DB", str(tmp_path / Path(env["COSTMODEL_DB"]).name))
    app = import_app(cmd[1])
    assert app.test_client().get("/health").status_code == 200


def test_the_exposed_port_is_the_checked_one_and_the_check_works(tmp_path):
    from werkzeug.serving import make_server

    command = _healthcheck_command()
    assert command[:2] == ["python", "-c"]
    assert f"http://127.0.0.1:{_port()}/health" in command[2]
    app = create_app({"DB": str(tmp_path / "runs.sqlite3"), "API_KEYS": ""})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    code = command[2].replace(f":{_port()}/", f":{server.server_port}/")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        assert subprocess.run([sys.executable, "-c", code], timeout=30).returncode == 0
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()
    # Nobody listening any more: the check fails.
    failed = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30)
    assert failed.returncode != 0


# --- compose.yaml ----------------------------------------------------------------------------


#: The environment the compose file is read in: its one required variable set.
_ENV = {"POSTGRES_PASSWORD": "s3cret-for-the-test"}


def _interpolate(value: str, env: dict[str, str] = _ENV) -> str:
    """Compose's ``${NAME:-default}`` (the default when ``NAME`` is unset) and
    ``${NAME:?message}`` (``NAME`` required) in the environment ``env``."""

    def value_of(m: re.Match) -> str:
        name, how, text = m.groups()
        if name in env:
            return env[name]
        assert how == "-", f"compose stops: {text}"
        return text

    return re.sub(r"\$\{([A-Z_]+):([-?])([^}]*)\}", value_of, value)


def test_compose_has_no_default_password_and_says_which_variable_to_set():
    # it fell back to the password "costmodel" although the README says to set one
    text = (ROOT / "compose.yaml").read_text("utf-8")
    uses = re.findall(r"\$\{POSTGRES_PASSWORD([^}]*)\}", text)
    assert len(uses) == 2 and all(u.startswith(":?set POSTGRES_PASSWORD") for u in uses), uses
    db = COMPOSE["services"]["db"]["environment"]["POSTGRES_PASSWORD"]
    with pytest.raises(AssertionError, match="compose stops: set POSTGRES_PASSWORD"):
        _interpolate(db, {})


def _api_services() -> dict[str, dict[str, Any]]:
    return {n: s for n, s in COMPOSE["services"].items() if s.get("build")}


def test_compose_runs_two_api_instances_of_one_image_on_one_postgresql():
    services = COMPOSE["services"]
    apis = _api_services()
    assert len(apis) == 2
    assert {s["build"] for s in apis.values()} == {"."}
    assert len({s["image"] for s in apis.values()}) == 1
    databases = {
        n: s for n, s in services.items() if str(s.get("image", "")).startswith("postgres")
    }
    ((db_name, db),) = databases.items()
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    db_env = {k: _interpolate(str(v)) for k, v in db["environment"].items()}
    host_ports = []
    for name, service in apis.items():
        assert service["depends_on"][db_name]["condition"] == "service_healthy", name
        check = service["healthcheck"]["test"]
        assert check[0] == "CMD" and check[1:] == _healthcheck_command(), name
        (mapping,) = service["ports"]
        host, host_port, container_port = mapping.split(":")
        assert host == "127.0.0.1" and int(container_port) == _port(), name
        host_ports.append(int(host_port))
        url = urlsplit(_interpolate(service["environment"]["COSTMODEL_DB"]))
        assert url.scheme == "postgresql" and url.hostname == db_name and url.port == 5432
        assert url.username == db_env["POSTGRES_USER"]
        assert url.password == db_env["POSTGRES_PASSWORD"]
        assert url.path == "/" + db_env["POSTGRES_DB"]
        assert parse_location(url.geturl()).kind == "postgresql"
    assert len(set(host_ports)) == len(host_ports)
    # instances x workers x pool size stays under PostgreSQL's default max_connections (100).
    pools = [int(s["environment"]["COSTMODEL_DB_POOL_SIZE"]) for s in apis.values()]
    assert sum(pools) * _gunicorn_options().workers <= 100


def _documented_settings() -> set[str]:
    """The environment variables api/config.py's table lists."""
    text = (ROOT / "api" / "config.py").read_text("utf-8")
    return set(re.findall(r"``(COSTMODEL_[A-Z_]+)``", text))


def test_every_costmodel_variable_is_a_setting_the_app_takes(monkeypatch, tmp_path):
    documented = _documented_settings()
    assert {"COSTMODEL_DB", "COSTMODEL_DB_POOL_SIZE", "COSTMODEL_API_KEYS"} <= documented
    given = {k: v for k, v in _image_env().items() if k.startswith("COSTMODEL_")}
    for service in _api_services().values():
        given |= {k: _interpolate(str(v)) for k, v in service["environment"].items()}
    assert set(given) <= documented, set(given) - documented
    # Each one reaches the app's configuration (nothing is opened at start-up).
    given["COSTMODEL_API_KEYS"] = given.get("COSTMODEL_API_KEYS") or "k1,k2"
    for key, value in given.items():
        monkeypatch.setenv(key, value)
    config = create_app().config
    assert config["DB"] == given["COSTMODEL_DB"]
    assert config["DB_POOL_SIZE"] == int(given["COSTMODEL_DB_POOL_SIZE"])
    assert config["API_KEYS"] == ("k1", "k2")


def test_the_compose_settings_share_runs_between_two_instances(postgres_url):
    """Both API services' settings, with the database URL of a throw-away server: a run
    stored through one instance is read through the other."""
    apps = []
    for service in _api_services().values():
        env = {k: _interpolate(str(v)) for k, v in service["environment"].items()}
        config = {k.removeprefix("COSTMODEL_"): v for k, v in env.items()}
        apps.append(create_app({**config, "DB": postgres_url}).test_client())
    posted = apps[0].post("/v1/runs?samples=1", json=WORKED)
    assert posted.status_code == 201, posted.get_json()
    read = apps[1].get(posted.headers["Location"])
    assert read.status_code == 200
    assert read.get_json()["result"] == posted.get_json()["result"]
    assert apps[1].get("/health").get_json()["store"] == "ok"


# --- .dockerignore -------------------------------------------------------------------------


def _regex(pattern: str) -> str:
    """A .dockerignore pattern as a regular expression: ``*`` and ``?`` stay within a folder
    name, ``**`` spans folders."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        else:
            out += {"*": "[^/]*", "?": "[^/]"}.get(pattern[i], re.escape(pattern[i]))
            i += 1
    return out + r"\Z"


def _ignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule: patterns are anchored at the context's root, a matched folder takes
    everything under it, and a later ``!pattern`` re-includes."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        regex = _regex(pattern.removeprefix("!").strip("/"))
        if any(re.match(regex, p) for p in prefixes):
            ignored = not negated
    return ignored


def test_the_build_context_holds_the_package_and_nothing_else():
    lines = (ROOT / ".dockerignore").read_text("utf-8").splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    kept = {p for p in listed if not _ignored(p, patterns)}
    packages = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    roots = {pattern.rstrip("*") for pattern in packages}
    needed = {p for p in listed if p.split("/")[0] in roots} | {
        "pyproject.toml",
        PYPROJECT["project"]["readme"],
        "LICENSE",
    }
    assert needed <= kept, sorted(needed - kept)
    assert any(p.startswith("api/docs/static/vendor/") for p in kept)  # not the top docs/ rule
    assert kept == needed, sorted(kept - needed)
    for clutter in (".git/HEAD", ".venv/bin/python", "tests/conftest.py", "runs.sqlite3"):
        assert _ignored(clutter, patterns), clutter
    assert _ignored("api/__pycache__/app.cpython-311.pyc", patterns)


# --- the image, where Docker works -----------------------------------------------------------


def _docker(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def image() -> str:
    if shutil.which("docker") is None or _docker("info").returncode != 0:
        pytest.skip("Docker does not answer here (docker info fails)")
    base = _one("FROM")
    if _docker("image", "inspect", base).returncode != 0:
        pulled = _docker("pull", base, timeout=600)
        if pulled.returncode != 0:
            pytest.skip(f"the base image {base} cannot be pulled: {pulled.stderr.strip()[-200:]}")
    tag = f"gpu-costmodel-test:{uuid.uuid4().hex[:8]}"
    built = _docker("build", "-t", tag, str(ROOT), timeout=1800)
    assert built.returncode == 0, built.stderr[-2000:]
    yield tag
    _docker("image", "rm", "-f", tag)


def test_the_image_runs_as_a_user_and_reports_itself_healthy(image):
    started = _docker("run", "-d", "-p", "127.0.0.1::8000", image)
    assert started.returncode == 0, started.stderr
    container = started.stdout.strip()
    try:
        assert _docker("exec", container, "id", "-u").stdout.strip() not in ("", "0")
        deadline = time.monotonic() + 180
        status = ""
        while time.monotonic() < deadline and status not in ("healthy", "unhealthy"):
            time.sleep(1)
            status = _docker("inspect", "-f", "{{.State.Health.Status}}", container).stdout
            status = status.strip()
        assert status == "healthy", _docker("logs", container).stderr[-2000:]
    finally:
        _docker("rm", "-f", container)


def test_no_setting_is_baked_into_the_image_that_the_app_does_not_read():
    """Every variable the image sets is either a documented setting or one of gunicorn's or
    Python's own."""
    own = {"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PIP_NO_CACHE_DIR"}
    own |= {"PIP_DISABLE_PIP_VERSION_CHECK", "GUNICORN_CMD_ARGS"}
    assert set(_image_env()) - own <= _documented_settings()
