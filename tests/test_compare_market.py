"""``compare --model`` over the whole market: every owned build and rented instance that holds
the model, measured where a row holds and estimated elsewhere, each marked with its origin;
the estimate's error drawn in the ranking; a model the catalog lacks compared from its
architecture (``--model-config``, an inline model over HTTP); options made by the sides'
keyword constructors."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from api import create_app
from cli import main
from costmodel import BuyInputs, Fixed, OptionInputs, ThroughputError, evaluate_options
from costmodel.options import ERROR_RANK_CORRELATION
from pricing import load_catalog
from pricing.calibration import published
from pricing.estimate import Architecture, Targets, estimate
from pricing.serving_options import Z90
from scenarios.compare import CompareRequest, ComparisonSchema, compare, option_count, wording
from scenarios.compare.speeds import TOO_SLOW, Speeds
from scenarios.schema import BuySchema, RentSchema
from scenarios.sides import Inference, owned, owned_of, rented, rented_of

FIXTURES = Path(__file__).parent / "fixtures" / "hfconfig"
CATALOG = load_catalog()


def _served(model: str, **changes) -> Inference:
    m = CATALOG.model(model)
    values = {"precision": m.precisions[0], "input_tokens": 1000, "output_tokens": 1000}
    return Inference(catalog=CATALOG, model=m, **{**values, **changes})


# ---------------------------------------------------------------------- the options, counted


def test_llama_3_1_8b_ranks_every_build_that_holds_it_each_marked():
    result = compare(CompareRequest(utilisation=0.5, model="llama-3.1-8b", samples=200))
    assert len(result.options) >= 100
    origins = [o.source.origin for o in result.options]
    assert {"measured", "estimated", "published"} == set(origins)
    for o in result.options:
        if o.source.origin == "measured":  # its rows are on A100 SXM4 80GB
            assert o.gpu == "a100-sxm4-80gb" and o.source.sigma is None
            assert o.source.id.startswith("llama-3.1-8b/fp16/a100-sxm4-80gb/")
        elif o.source.origin == "estimated":
            assert o.source.sigma == pytest.approx(0.3157, abs=5e-4)  # dense sigma, published
            assert "GPU" in o.source.conditions and "-bound" in o.source.conditions
    # what is left out is counted, and adds up with what is ranked to every candidate asked
    u = result.unserved
    assert (u.no_measurement_gpus, u.no_measurement_instances) == (0, 0)
    assert u.does_not_fit_servers > 0 and (u.too_slow_servers, u.too_slow_instances) == (0, 0)
    assert option_count(result.request, CATALOG) == len(result.options) + len(result.ruled_out)


def test_every_catalog_model_compares():
    for model in CATALOG.models.values():
        result = compare(CompareRequest(utilisation=0.5, model=model.id, samples=16))
        gpus = [o for o in result.options if o.side != "api"]
        assert gpus, model.id  # even the 400B+ models fit some 8-GPU build
        assert all(o.cost.p50 > 0 and o.tokens_per_s_per_gpu > 0 for o in gpus), model.id
        assert all(o.source.origin in ("measured", "yours", "estimated") for o in gpus)


def test_the_table_json_and_csv_mark_each_origin(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # wide enough for the source column
    args = ["compare", "-u", "0.5", "--model", "llama-3.1-8b", "--samples", "100"]
    assert main([*args, "--top", "0"]) == 0
    out = capsys.readouterr().out
    assert " § " in out and " est." in out and "estimated: 1 GPU per replica" in out
    assert "§ throughput estimated from the model's architecture" in out
    assert "lognormal with sigma 0.32 (P10-P90 a factor 1.50 either way)" in out
    assert "measured: 1 GPU per replica, offline, TensorRT-LLM" in out
    assert main([*args, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    by = {o["source"]["origin"] for o in doc["options"]}
    assert by == {"measured", "estimated", "published"}
    guess = next(o for o in doc["options"] if o["source"]["origin"] == "estimated")
    assert guess["source"]["sigma"] > 0 and guess["source"]["id"] == "calibrated roofline"
    row = next(o for o in doc["options"] if o["source"]["origin"] == "measured")
    assert "sigma" not in row["source"]
    assert doc["wording"]["estimated_note"].startswith("§ throughput estimated")
    assert main([*args, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    sigmas = {r["source_origin"]: r["source_sigma"] for r in rows}
    assert float(sigmas["estimated"]) > 0 and sigmas["measured"] == "" == sigmas["published"]


def test_an_estimated_option_cites_its_error_in_the_words_of_an_estimated_side():
    """One wording of an estimate's error (pricing.estimated.fitted_error_words): the source of
    a comparison's estimated option reads as the throughput_error of a scenario's estimated
    side with the same sigma."""
    from scenarios.resolve import resolve
    from scenarios.schema import ScenarioSchema
    from tests.test_throughput_error import ESTIMATED  # an owned side whose speed is estimated

    fit = published()
    result = compare(CompareRequest(utilisation=0.5, model="llama-3.1-8b", samples=16))
    cited = next(o.source for o in result.options if o.source.origin == "estimated")
    # sigma 0.3158 (dense): 100 sigma = 31.6 -> "±32 %"; to 3 significant figures 0.316
    assert cited.source == (
        "estimated: calibrated roofline, leave-one-out error ±32 %: lognormal, median 1, "
        f"sigma 0.316 ({len(fit.row_ids)} measured rows, calibration as of {fit.as_of})"
    )
    resolved = resolve(ScenarioSchema().load(ESTIMATED), "test", CATALOG)
    error = next(a for a in resolved.assumptions if a.key == "buy.throughput_error")
    assert error.source == cited.source


# --------------------------------------------------------------- the estimate's error, drawn


def _a100(result) -> object:
    return next(
        o for o in result.options if (o.side, o.id, o.gpu_count) == ("buy", "a100-sxm4-80gb", 4)
    )


def test_an_estimated_option_is_wider_than_the_same_option_measured():
    request = CompareRequest(utilisation=0.5, model="llama-3.1-8b", samples=2000)
    measured = _a100(compare(request, CATALOG))
    unmeasured = replace(CATALOG, serving=())
    guessed = _a100(compare(request, unmeasured))
    assert (measured.source.origin, guessed.source.origin) == ("measured", "estimated")

    def width(o) -> float:
        return math.log(o.cost.p90 / o.cost.p10)

    # the prices' +-10 % alone, against the same with a lognormal of sigma 0.316 on top: the
    # log-width of a lognormal's P10-P90 alone is 2 x 1.2816 x 0.316 = 0.809
    assert width(measured) < 0.25 < 0.8 < width(guessed)


def _owned(value: float = 1000.0) -> BuyInputs:
    """A 1-GPU build doing ``value`` tokens/s, with fixed prices."""
    return owned_of(_served("llama-3.1-8b"), "l40s", 1, tokens_per_s_per_gpu=Fixed(value)).inputs


def _figures(options, spreads=None, samples=4000):
    return evaluate_options(
        options,
        utilisation=0.5,
        horizon=36,
        samples=samples,
        seed=3,
        spreads={} if spreads is None else spreads,
        lives=(5.0, 5.0),
    )


def test_the_error_is_a_lognormal_factor_on_the_work_done():
    buy = _owned()
    [fixed] = _figures([OptionInputs("buy", buy)])
    sigma = 0.4
    [drawn] = _figures([OptionInputs("buy", buy, error=ThroughputError(sigma, "l40s:1"))])
    # every input fixed: cost = c / E, so ln(cost / c) = -sigma z with z standard normal
    c = float(np.unique(fixed.cost)[0])
    z = -np.log(drawn.cost / c) / sigma
    # (z is the sum of two Latin hypercube normals, so only as exact as 4,000 random draws)
    assert abs(z.mean()) < 0.01 and z.std() == pytest.approx(1.0, abs=0.03)
    assert np.median(drawn.cost) == pytest.approx(c, rel=0.02)
    p10, p90 = np.percentile(drawn.cost, [10, 90])
    assert p90 / p10 == pytest.approx(math.exp(2 * Z90 * sigma), rel=0.05)


def test_the_draws_of_measured_options_do_not_move_and_builds_share_their_error():
    spreads = {"buy.gpu_price_usd": 0.1}
    buy = _owned()
    [alone] = _figures([OptionInputs("buy", buy)], spreads)
    error = ThroughputError(0.4, "l40s:1")
    with_guesses = _figures(
        [
            OptionInputs("buy", buy),
            OptionInputs("buy", buy, error=error),
            OptionInputs("buy", _owned(2000.0), error=error),  # the same build
            OptionInputs("buy", buy, error=ThroughputError(0.4, "l40s:2")),  # another build
        ],
        spreads,
    )
    assert np.array_equal(alone.cost, with_guesses[0].cost)  # name-keyed draws: unmoved
    ratio = with_guesses[0].cost / with_guesses[1].cost  # = E of the build
    assert np.allclose(with_guesses[0].cost / with_guesses[2].cost, 2 * ratio)  # same E
    other = with_guesses[0].cost / with_guesses[3].cost
    rho = stats.spearmanr(ratio, other).statistic
    assert rho == pytest.approx(ERROR_RANK_CORRELATION, abs=0.04)
    # ln E = sigma z: the Pearson correlation of the normals is 2 sin(pi 0.5 / 6)
    # = 2 sin(pi / 12) = 2 x 0.258819 = 0.517638
    pearson = np.corrcoef(np.log(ratio), np.log(other))[0, 1]
    assert pearson == pytest.approx(0.517638, abs=0.04)
    again = _figures([OptionInputs("buy", buy, error=error)], spreads)
    assert np.array_equal(again[0].cost, with_guesses[1].cost)  # same seed, same draws


# ------------------------------------------------------------------ each build's throughput


def test_a_build_is_measured_where_a_row_holds_else_estimated():
    w = _served("llama-3.3-70b", precision="fp8")
    speeds = Speeds(w)
    h100 = CATALOG.gpu("h100-sxm5-80gb")
    eight = speeds.of(h100, 8)
    assert eight.measured is not None and eight.sigma == 0 and eight.error("h100", 8) is None
    # no row of the PCIe card: an estimate exactly as pricing.estimate gives it
    pcie = CATALOG.gpu("h100-pcie-80gb")
    two = speeds.of(pcie, 2)
    fit = published()
    arch = Architecture.of(w.model)
    expected = estimate(arch, pcie, 2, "fp8", 1000, 1000, Targets(), fit.calibration)
    assert two.measured is None and two.value == expected.tokens_per_s_per_gpu
    assert two.sigma == fit.sigma_of(arch) == fit.sigma_dense
    assert two.error("h100-pcie-80gb", 2) == ThroughputError(two.sigma, "h100-pcie-80gb:2")
    assert speeds.of(pcie, 2) is two  # found once per comparison
    assert speeds.of(CATALOG.gpu("t4"), 1) == "does_not_fit"  # 70 GB in 14.4 GB: nothing fits


def test_a_floor_no_batch_meets_is_counted_too_slow():
    w = _served("llama-3.3-70b", precision="fp8", min_tokens_per_s_per_user=400)
    assert Speeds(w).of(CATALOG.gpu("l40s"), 2) == TOO_SLOW
    result = compare(
        CompareRequest(
            utilisation=0.5, model="llama-3.3-70b", min_tokens_per_s_per_user=400, samples=50
        )
    )
    u = result.unserved
    assert u.too_slow_servers > 0 and u.too_slow_instances > 0
    assert "are estimated to serve no request at 400 tokens/s per user" in wording(result).left_out


# -------------------------------------------------------------------- keyword constructors


def test_keyword_constructors_resolve_as_the_document_does():
    w = _served("llama-3.1-8b")
    by_doc = owned(BuySchema().load({"gpu": "a100-sxm4-80gb", "gpu_count": 8}), "buy", w)
    by_keywords = owned_of(w, "a100-sxm4-80gb", 8)
    assert by_keywords.inputs == by_doc.inputs
    assert by_keywords.assumptions == by_doc.assumptions
    doc = RentSchema().load({"instance": "aws/p4de.24xlarge", "pricing": "reserved_1y"})
    by_doc = rented(doc, "rent", w)
    by_keywords = rented_of(w, "aws/p4de.24xlarge", "reserved_1y")
    assert (by_keywords.inputs, by_keywords.assumptions) == (by_doc.inputs, by_doc.assumptions)


# ------------------------------------------------------------- a model the catalog lacks


def test_model_config_compares_a_model_the_catalog_lacks(capsys, tmp_path):
    config = json.loads((FIXTURES / "qwen3-30b-a3b.json").read_text())
    folder = tmp_path / "Qwen3-30B-A3B-Copy"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    args = ["compare", "-u", "0.5", "--samples", "100", "--format", "json"]
    assert main([*args, "--model-config", str(folder / "config.json")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["model"]["id"] == "inline:qwen3-30b-a3b-copy" and doc["request"]["model"]
    # counted from the config: 30.5 B parameters, 3.3 B active (a mixture of experts)
    assert doc["model"]["params_b"] == pytest.approx(30.52, abs=0.01)
    assert len(doc["options"]) >= 100
    assert {o["source"]["origin"] for o in doc["options"]} == {"estimated"}
    assert doc["options"][0]["source"]["sigma"] == pytest.approx(0.50, abs=0.01)  # MoE sigma
    # named as a catalog model, the catalog's parameter count wins over the config's
    assert main([*args, "--model-config", str(FIXTURES / "llama-3.1-8b.json")]) == 0
    assert json.loads(capsys.readouterr().out)["model"]["params_b"] == 8.03


#: A config of a family whose parameters are not counted (Gemma 2 9B's shape).
GEMMA = {"model_type": "gemma2", "num_hidden_layers": 42, "num_attention_heads": 16,
         "num_key_value_heads": 8, "head_dim": 256, "hidden_size": 3584}  # fmt: skip


@pytest.mark.parametrize(
    ("config", "extra", "says"),
    [
        (None, [], "--model-config: config.json: cannot read the file"),
        ({"model_type": "llama", "num_hidden_layers": 2}, [], "'num_attention_heads'"),
        (GEMMA, [], "--params-b: config.json is a 'gemma2' config; parameters are counted"),
        (GEMMA, ["--params-b", "-1"], "--params-b: must be > 0 [billion parameters], got -1"),
    ],
)
def test_a_bad_model_config_names_the_option(capsys, tmp_path, config, extra, says):
    path = tmp_path / "config.json"
    if config is not None:
        path.write_text(json.dumps(config))
    assert main(["compare", "-u", "0.5", "--model-config", str(path), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err and "Traceback" not in err


def test_an_uncounted_family_compares_with_its_parameters_given(capsys, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(GEMMA))
    args = ["compare", "-u", "0.5", "--samples", "50", "--model-config", str(path)]
    assert main([*args, "--params-b", "9.24", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"]["params_b"] == 9.24
    assert main(["compare", "-u", "0.5", "--params-b", "9"]) == 2
    assert "--params-b: only with --model-config" in capsys.readouterr().err


@pytest.fixture
def client(tmp_path: Path):
    app = create_app({"TESTING": True, "DB": str(tmp_path / "runs.sqlite3"), "API_KEYS": ""})
    return app.test_client()


def test_post_compare_takes_an_inline_model(client):
    model = {"name": "My 8B", "params_b": 8.03, "layers": 32, "kv_heads": 8, "head_dim": 128}
    r = client.post("/v1/compare", json={"utilisation": 0.5, "model": model, "samples": 100})
    assert r.status_code == 200, r.get_json()
    doc = r.get_json()
    assert doc["model"]["id"] == "inline:my-8b" and doc["request"]["model"] == model
    assert len(doc["options"]) >= 100
    assert all(o["source"]["origin"] == "estimated" for o in doc["options"])
    assert ComparisonSchema().dump(compare(CompareRequest(utilisation=0.5, model=model)))


@pytest.mark.parametrize(
    ("model", "path", "says"),
    [
        ({"name": "x", "params_b": 8}, "model.layers", "needs its architecture"),
        ({"name": "x", "params_b": 8, "config": "c.json"}, "model.config", "cannot name a file"),
        ({"name": "x", "params_b": 8, "layers": 0}, "model.layers", "must be >= 1"),
        ({"name": "x", "params_b": 8, "layers": 2, "kv_heads": 2}, "model.head_dim", "required"),
    ],
)
def test_post_compare_refuses_an_inline_model_without_what_it_needs(client, model, path, says):
    r = client.post("/v1/compare", json={"utilisation": 0.5, "model": model})
    assert r.status_code == 422
    errors = r.get_json()["errors"]
    assert [e["path"] for e in errors] == [path] and says in errors[0]["message"]
