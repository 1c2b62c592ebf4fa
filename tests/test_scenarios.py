"""The scenario format: bad input gives a clear error and exit status 2, never a traceback."""

import json
import textwrap
from pathlib import Path

import pytest
import yaml

import scenarios
from cli import main
from present import to_dict, to_json
from scenarios.errors import ScenarioError
from tests.helpers import KEY_PATH_CASES

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "scenarios" / "examples").glob("*.yaml"))

GOOD = """\
version: 1
name: t
horizon_months: 24
utilisation: [0.25, 0.5]
simulation: {samples: 200, seed: 3}
workload: {precision: fp16}
buy:
  gpu: rtx-2080-ti
  gpu_count: 2
  pue: 1.1
rent:
  instance: aws/p3.8xlarge
"""


def _run(tmp_path, text, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(textwrap.dedent(text))
    code = main(["run", str(path)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err, str(path)


def test_good_scenario_runs(tmp_path, capsys):
    code, err, _ = _run(tmp_path, GOOD, capsys)
    assert code == 0 and err == ""


@pytest.mark.parametrize(
    "old, new, expected",
    [
        (
            "horizon_months: 24",
            "horizon_month: 24",
            ["horizon_month", "did you mean 'horizon_months'", "valid keys:"],
        ),
        (
            "  pue: 1.1",
            "  pue: 1.1\n  electricty_usd_per_kwh: 0.1",
            ["buy.electricty_usd_per_kwh", "electricity_usd_per_kwh"],
        ),
        ("horizon_months: 24", "horizon_months: ten", ["horizon_months", "wrong type"]),
        ("  pue: 1.1", "  pue: 0.8", ["buy.pue", "[1, 5] [-]"]),
        (
            "  pue: 1.1",
            "  pue: {dist: uniform, low: 1.5, high: 1.2}",
            ["buy.pue", "low (1.5) is greater than high (1.2)"],
        ),
        ("  pue: 1.1", "  pue: {dist: gamma, k: 2}", ["buy.pue", "unknown dist 'gamma'", "pert"]),
        (
            "  pue: 1.1",
            "  pue: {dist: normal, mean: 1.3, sd: 0.1}",
            ["buy.pue", "give low/high bounds"],
        ),
        ("  pue: 1.1", "  pue: .nan", ["buy.pue", "finite"]),
        ("gpu: rtx-2080-ti", "gpu: rtx-2080ti", ["buy.gpu", "rtx-2080-ti"]),
        ("instance: aws/p3.8xlarge", "instance: aws/p3.8xl", ["rent.instance", "aws/p3.8xlarge"]),
        (
            "workload: {precision: fp16}",
            "workload: {precision: fp16, min_gpu_memory_gb: 12}",
            ["buy.gpu", "below workload.min_gpu_memory_gb = 12 GB"],
        ),
        (
            "workload: {precision: fp16}",
            "workload: {precision: bf16}",
            ["workload.precision", "fp32, fp16, int8"],
        ),
        ("version: 1", "version: 2", ["version", "unsupported version 2"]),
        ("  gpu_count: 2", "  gpu_count: 2\n  gpu_count: 3", ["buy.gpu_count", "duplicate key"]),
        ("  pue: 1.1", "  pue: [1.1", ["malformed YAML"]),
        (
            "instance: aws/p3.8xlarge",
            "instance: aws/p5.48xlarge\n  pricing: reserved_3y",
            ["rent.price_usd_per_hour", "no reserved_3y price", "choose pricing from"],
        ),
        ("  pue: 1.1", "  pue: 1.1\n  gpu_price_usd: -5", ["buy.gpu_price_usd", "[0, 1,000,000]"]),
        ("name: t\n", "", ["name", "required key is missing"]),
        (
            "utilisation: [0.25, 0.5]",
            "utilisation: {start: 0.9, stop: 0.1, step: 0.1}",
            ["utilisation.start", "greater than stop"],
        ),
        ("utilisation: [0.25, 0.5]", "utilisation: [0.25, 1.5]", ["utilisation", "1.5"]),
        (
            "workload: {precision: fp16}",
            "workload: {precision: fp16}\ncorrelations: [[buy.pue, rent.price_annual_change, 0.3]]",
            ["correlations[0]", "buy.pue is fixed"],
        ),
    ],
)
def test_bad_input_names_file_path_and_choices(tmp_path, capsys, old, new, expected):
    assert old in GOOD
    code, err, path = _run(tmp_path, GOOD.replace(old, new, 1), capsys)
    assert code == 2
    assert path in err
    for text in expected:
        assert text in err, (text, err)


def test_errors_carry_the_line_of_the_key(tmp_path, capsys):
    _, err, path = _run(tmp_path, GOOD.replace("  pue: 1.1", "  pue: 0.5"), capsys)
    assert f"{path}:10: buy.pue:" in err


def test_malformed_yaml_gives_its_line(tmp_path, capsys):
    _, err, path = _run(tmp_path, GOOD.replace("  pue: 1.1", "  pue: [1.1"), capsys)
    assert f"{path}:11:" in err or f"{path}:10:" in err


def test_missing_and_empty_files(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope.yaml")]) == 2
    assert "file not found" in capsys.readouterr().err
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert main(["run", str(empty)]) == 2
    assert "expected a mapping (key: value lines), got empty document" in capsys.readouterr().err


def test_a_folder_given_as_a_file_points_to_batch(tmp_path, capsys):
    # "cannot read file: [Errno 21] Is a directory: '...'" (the path twice, and errno)
    assert main(["run", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path}: is a folder, not a file; 'costmodel batch {tmp_path} --out DIR' "
        "runs every file in it\n"
    )


@pytest.mark.parametrize(
    ("text", "got"),
    [("5\n", "a number, 5"), ("yes\n", "true or false"), ("hello\n", "text, 'hello'")],
)
def test_a_file_that_is_no_mapping_says_what_it_holds_in_words(tmp_path, capsys, text, got):
    # Python's type names: "got a int", "got a str", "got a bool"
    path = tmp_path / "scalar.yaml"
    path.write_text(text)
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {path}: expected a mapping (key: value lines), got {got}\n"
    with pytest.raises(scenarios.ScenarioError, match=r"mapping \(key: value lines\), got a list"):
        scenarios.load_mapping([1, 2])


def test_inline_gpu_without_throughput_needs_an_override():
    data = scenarios.ScenarioSchema().load(
        {
            "version": 1,
            "name": "x",
            "buy": {
                "gpu": {"name": "mystery", "memory_gb": 16, "tdp_w": 200, "price_usd": 900},
                "gpu_count": 1,
            },
            "rent": {"instance": "aws/p3.2xlarge"},
        }
    )
    with pytest.raises(scenarios.ScenarioError) as err:
        scenarios.load_mapping(data)
    assert "buy.relative_throughput" in str(err.value)


@pytest.mark.parametrize("option", ["--samples 0", "--samples 1000001", "--seed -1", "--seed 1e23"])
def test_bad_cli_arguments(capsys, option):
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(EXAMPLES[0]), *option.split()])
    assert exit_.value.code == 2
    assert option.split()[0] in capsys.readouterr().err


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_runs_and_round_trips(path):
    sc = scenarios.load_file(path)
    result = to_dict(scenarios.evaluate(sc, samples=500))
    if isinstance(sc, scenarios.Plan):
        assert result["kind"] == "plan" and result["best"] in result["candidates"]
    else:
        assert len(result["buy_tco"]["p50"]) == len(result["utilisation"])
    assert result["verdict"]
    # the resolved scenario is itself a valid scenario with the same cache key
    again = scenarios.load_mapping(json.loads(json.dumps(result["scenario"])))
    assert again.key(500) == sc.key(500)


def test_same_seed_gives_byte_identical_json():
    sc = scenarios.load_file(EXAMPLES[0])
    a = to_json(scenarios.evaluate(sc, samples=2000))
    b = to_json(scenarios.evaluate(scenarios.load_file(EXAMPLES[0]), samples=2000))
    c = to_json(scenarios.evaluate(sc, samples=2000, seed=12345))
    assert a == b and a != c


def test_catalog_listing(capsys):
    assert main(["catalog", "gpus"]) == 0
    out = capsys.readouterr().out
    assert "rtx-2080-ti" in out and "h100-sxm5-80gb" in out
    assert main(["catalog", "instances"]) == 0
    out = capsys.readouterr().out
    assert "aws/p3.8xlarge" in out and "aws/g4dn.xlarge" in out


def test_counts_beyond_the_scaling_table_and_extreme_lognormals_are_input_errors():
    inline = {"name": "big", "gpu": "t4", "gpu_count": 63, "on_demand_usd_per_hour": 30}
    doc = {
        "version": 1,
        "name": "x",
        "buy": {"gpu": "rtx-3090", "gpu_count": 2},
        "rent": {"instance": inline},
    }
    with pytest.raises(scenarios.ScenarioError) as err:
        scenarios.load_mapping(doc)
    assert err.value.errors[0]["path"] == "rent.scaling_efficiency"
    doc["rent"]["scaling_efficiency"] = 0.8
    assert scenarios.load_mapping(doc).name == "x"
    doc["buy"]["admin_usd_per_month"] = {"dist": "lognormal", "mean": 1e-200, "sd": 1e200}
    with pytest.raises(scenarios.ScenarioError) as err:
        scenarios.load_mapping(doc)
    assert err.value.errors[0]["path"] == "buy.admin_usd_per_month"


@pytest.mark.parametrize("doc, path, message", KEY_PATH_CASES)
def test_errors_name_their_key_path_on_the_command_line(tmp_path, capsys, doc, path, message):
    file = tmp_path / "s.yaml"
    file.write_text(yaml.safe_dump(doc))
    assert main(["run", str(file)]) == 2
    err = capsys.readouterr().err
    assert f": {path}: " in err and message in err, err
    with pytest.raises(scenarios.ScenarioError) as exc:
        scenarios.load_mapping(doc)
    assert [e["path"] for e in exc.value.errors] == [path]


def test_a_lognormal_takes_low_and_high():
    doc = {
        "version": 1,
        "name": "x",
        "buy": {
            "gpu": "rtx-3090",
            "gpu_count": 1,
            "pue": {"dist": "lognormal", "median": 1.3, "p90": 1.5, "low": 1.0, "high": 2.0},
        },
        "rent": {"instance": "aws/p3.2xlarge"},
    }
    sc = scenarios.load_mapping(doc)
    assert sc.resolved.inputs.buy.pue.support() == (1.0, 2.0)
    assert sc.document["buy"]["pue"] == doc["buy"]["pue"]


def test_a_file_reports_its_unknown_keys_and_unknown_ids_in_one_run(tmp_path):
    path = tmp_path / "two.yaml"
    path.write_text(
        "version: 1\nname: two\nbuy:\n  gpu: rtx-4090\n  gpu_count: 1\n  pue2: 1.2\n"
        "rent:\n  instance: aws/p3.8xlarg\n"
    )
    with pytest.raises(ScenarioError) as exc:
        scenarios.load_file(path)
    found = [(e["line"], e["path"]) for e in exc.value.errors]
    assert found == [(6, "buy.pue2"), (8, "rent.instance")]  # both at once, in line order
    assert "closest: aws/p3.8xlarge" in exc.value.errors[1]["message"]


def test_an_inline_instance_reports_its_unknown_gpu_with_the_unknown_keys_in_one_run(tmp_path):
    path = tmp_path / "two.yaml"
    path.write_text(
        "version: 1\nname: two\nbuy:\n  gpu: rtx-4090\n  gpu_count: 1\n  colour: red\n"
        "rent:\n  instance:\n    name: x\n    gpu: v100-sxm9\n    gpu_count: 1\n"
        "    on_demand_usd_per_hour: 3.06\n"
    )
    with pytest.raises(ScenarioError) as exc:
        scenarios.load_file(path)
    found = [(e["line"], e["path"]) for e in exc.value.errors]
    assert found == [(6, "buy.colour"), (10, "rent.instance.gpu")]
    assert "closest: v100-sxm2" in exc.value.errors[1]["message"]


def test_a_plan_block_says_which_pricing_it_takes():
    doc = {
        "version": 1,
        "kind": "plan",
        "name": "p",
        "demand": {"reference_gpu_hours_per_month": 100},
        "own": {"gpu": "rtx-4090", "gpu_count": 1, "servers": {"min": 0, "max": 1}},
        "burst": {"instance": "aws/p3.2xlarge", "pricing": "reserved_1y"},
    }
    with pytest.raises(ScenarioError) as exc:
        scenarios.load_mapping(doc)
    (error,) = exc.value.errors
    assert error["path"] == "burst.pricing"
    assert "on_demand" in error["message"] and "spot" in error["message"]


@pytest.mark.parametrize("written", ["1.5e3", "1.5E3", "15e2", "1.5e+3", "1500"])
def test_a_number_in_exponent_notation_is_a_number_without_its_sign_or_dot(tmp_path, written):
    # YAML 1.1 (PyYAML's resolver) read 1.5e3 as the text "1.5e3"; YAML 1.2 reads 1,500
    path = tmp_path / "e.yaml"
    path.write_text(
        "version: 1\nname: e\nbuy:\n  gpu: rtx-4090\n  gpu_count: 1\n"
        f"  gpu_price_usd: {written}\nrent:\n  instance: aws/p3.2xlarge\n"
    )
    assert scenarios.load_file(path).document["buy"]["gpu_price_usd"] == 1500


def test_a_plans_inline_burst_instance_reports_its_unknown_gpu_in_the_same_run():
    doc = yaml.safe_load(scenarios.example("plan-worked-example").read_text("utf-8"))
    doc["own"]["colour"] = "red"
    doc["burst"] = {
        "instance": {"name": "x", "gpu": "v100-sxm9", "gpu_count": 1, "on_demand_usd_per_hour": 3}
    }
    with pytest.raises(ScenarioError) as exc:
        scenarios.load_mapping(doc)
    assert [e["path"] for e in exc.value.errors] == ["own.colour", "burst.instance.gpu"]


def test_a_document_is_validated_by_schemas_built_once(monkeypatch):
    """Validating and resolving a document builds no marshmallow schema once the first one has
    been loaded (a fresh ScenarioSchema deep-copied some 15 schemas' fields a document), and
    the prebuilt schemas give the same document as fresh ones."""
    import marshmallow

    from scenarios.loader import validate
    from scenarios.schema import ScenarioSchema

    data = yaml.safe_load(scenarios.example("lab-4x-rtx2080ti-vs-p3-8xlarge").read_text())
    first = scenarios.load_mapping(data)
    built = []
    init = marshmallow.Schema.__init__
    monkeypatch.setattr(
        marshmallow.Schema,
        "__init__",
        lambda self, *a, **k: built.append(self) or init(self, *a, **k),
    )
    again = scenarios.load_mapping(data)
    assert built == []
    assert again.document == first.document
    assert validate(data, "<test>") == ScenarioSchema().load(data)
