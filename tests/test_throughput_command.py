"""``costmodel throughput`` and ``GET /v1/throughput``: the worked example of docs/model.md
through the JSON (with the calibration set to the example's constants), measured against
estimated options, the estimate's P10-P90, the calibration report and bad input."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

import pricing.serving_options as serving_options
from cli import main
from pricing import load_catalog
from pricing.calibration import published
from pricing.estimate import Calibration
from pricing.serving_options import Question, answer
from tests.test_api import assert_error, make_app

#: The worked example's constants: the reference form's.
EXAMPLE = Calibration(eta_b=0.45, eta_f=0.48, o_dec_s=0.0, o_pre_s=0.037)


@pytest.fixture
def example_fit(monkeypatch):
    fit = dataclasses.replace(published(), calibration=EXAMPLE)
    monkeypatch.setattr(serving_options, "published", lambda: fit)
    return fit


def _json(capsys, *argv: str) -> dict:
    assert main(["throughput", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_worked_example_through_the_command(capsys, example_fit):
    # the catalog measures this shape on the L40S; --estimate sets the estimate beside it
    args = ("llama-3.1-8b", "--gpu", "l40s", "--gpus", "1", "--precision", "fp8", "--estimate")
    doc = _json(capsys, *args)
    (o,) = doc["options"]
    assert (o["origin"], o["gpus_per_replica"], o["batch"], o["bound"]) == (
        "estimated",
        1,
        268,
        "memory",
    )
    assert o["tokens_per_s_per_gpu"]["p50"] == pytest.approx(4841.24, rel=1e-6)
    assert o["tpot_ms"] == pytest.approx(88.4143, abs=5e-5)
    # P10/P90 = P50 x exp(-/+ 1.2816 sigma), sigma the dense leave-one-out sigma
    sigma = example_fit.sigma_dense
    assert doc["sigma"] == sigma
    assert o["tokens_per_s_per_gpu"]["p90"] == pytest.approx(
        4841.24 * math.exp(1.2815515655446004 * sigma), rel=1e-6
    )
    floor = _json(capsys, *args, "--min-tokens-per-s-per-user", "30")["options"][0]
    assert floor["batch"] == 37
    assert floor["tokens_per_s_per_gpu"]["p50"] == pytest.approx(2236.51, rel=1e-6)
    tpot = _json(capsys, *args, "--max-tpot-ms", "25")["options"][0]
    assert tpot["batch"] == 17


def test_70b_on_eight_h100_picks_two_replicas(capsys, example_fit):
    # the 1024/1024 shape has a vLLM row of unstated replica size (an 8-GPU node); 1000/1000
    # has a TP2 row; 1500/1000 has none, so it is estimated
    doc = _json(
        capsys,
        "llama-3.3-70b",
        "--gpu",
        "h100-sxm5-80gb",
        "--gpus",
        "8",
        "--precision",
        "fp8",
        "--input-tokens",
        "1000",
        "--concurrency",
        "2000",
    )
    (o,) = doc["options"]
    assert o["origin"] == "estimated"  # a concurrency: no measured row answers it
    e = answer(
        Question("llama-3.3-70b", "fp8", gpus=("h100-sxm5-80gb",), gpu_count=8), load_catalog()
    )
    assert e.options[0].origin == "measured"
    assert e.options[0].row_id.endswith("trtllm-pytorch-2gpu")
    # without a concurrency or a row: G = 4, 3,772.2 tokens/s per GPU
    q = Question("llama-3.3-70b", "fp8", 1000, 999, ("h100-sxm5-80gb",), 8)
    (est,) = answer(q, load_catalog(), example_fit).options
    assert est.gpus_per_replica == 4


def test_measured_options_are_exact_and_estimated_ones_carry_the_error():
    a = answer(Question("llama-3.1-8b", "fp8", gpus=("h100-sxm5-80gb", "b200")), load_catalog())
    measured = [o for o in a.options if o.origin == "measured"]
    estimated = [o for o in a.options if o.origin == "estimated"]
    assert measured and estimated
    assert all(o.p10 == o.p50 == o.p90 for o in measured)
    # a TP1 row holds for every build size (1 divides each)
    assert {o.gpus for o in measured} == {4, 8}
    assert all(o.p10 < o.p50 < o.p90 for o in estimated)
    assert [o.p50 for o in a.options] == sorted((o.p50 for o in a.options), reverse=True)


def test_calibration_report(capsys):
    assert main(["throughput", "--calibration"]) == 0
    out = capsys.readouterr().out
    fit = published()
    assert f"{fit.loo_median_pct:.1f} %" in out
    assert f"sigma of ln ratios {fit.sigma:.3f}" in out
    doc = _json(capsys, "--calibration")
    assert doc["rows"] == len(doc["row_ratios"]) == 45
    assert doc["loo_median_pct"] == fit.loo_median_pct


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["llama-3.1-8c"], "closest: llama-3.1-8b"),
        (["llama-3.1-8b", "--gpu", "h100"], "closest: h100-pcie-80gb, h100-sxm5-80gb"),
        (["llama-3.1-8b", "--input-tokens", "-5"], "--input-tokens must be >= 0"),
        (["llama-3.1-8b", "--gpus", "100"], "--gpus must be <= 64"),
        (["llama-3.1-8b", "--max-tpot-ms", "0"], "--max-tpot-ms must be a positive number"),
        (["llama-3.1-8b", "--precision", "fp6"], "unknown precision 'fp6'"),
        (["deepseek-r1", "--gpu", "l4", "--gpus", "1"], "671.0 GB of weights at fp8"),
        ([], "name a MODEL"),
    ],
)
def test_bad_input_is_a_clear_error(capsys, argv, message):
    assert main(["throughput", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_api_answers_the_same_as_the_command(tmp_path: Path, capsys):
    client = make_app(tmp_path).test_client()
    query = "model=llama-3.3-70b&gpu=l40s&gpu=h100-sxm5-80gb&precision=fp8&gpus=8"
    body = client.get(f"/v1/throughput?{query}").get_json()
    cli = _json(
        capsys,
        "llama-3.3-70b",
        "--gpu",
        "l40s",
        "--gpu",
        "h100-sxm5-80gb",
        "--precision",
        "fp8",
        "--gpus",
        "8",
    )
    assert body == cli
    report = client.get("/v1/throughput/calibration").get_json()
    assert report["sigma"] == published().sigma
    assert len(report["row_ratios"]) == 45


def test_api_errors_are_in_the_one_shape(tmp_path: Path):
    client = make_app(tmp_path).test_client()
    # A model or GPU the catalog lacks is a query parameter outside the spec's enum: 400, as
    # any query parameter out of range (it was 422 while ?gpus=999 was 400).
    body = assert_error(client.get("/v1/throughput?model=llama-3.1-8c"), 400)
    assert body["errors"][0]["path"] == "query.model"
    assert "llama-3.1-8b" in body["message"]
    body = assert_error(client.get("/v1/throughput?model=llama-3.1-8b&gpu=l4&gpu=h100"), 400)
    assert body["errors"][0]["path"] == "query.gpu" and "h100-sxm5-80gb" in body["message"]
    assert assert_error(client.get("/v1/throughput?model=x&gpu=h100"), 400)
    assert_error(client.get("/v1/throughput?model=llama-3.1-8b&input_tokens=-1"), 400)
    assert_error(client.get("/v1/throughput?model=llama-3.1-8b&sample=1"), 400)
    body = assert_error(client.get("/v1/throughput?model=deepseek-r1&gpu=l4&gpus=1"), 422)
    assert "do not fit" in body["message"]
    spec = client.get("/openapi.json").get_json()
    assert {"/v1/throughput", "/v1/throughput/calibration"} <= set(spec["paths"])
    # the spec names the ids the server takes
    params = {p["name"]: p["schema"] for p in spec["paths"]["/v1/throughput"]["get"]["parameters"]}
    catalog = load_catalog()
    assert params["model"]["enum"] == sorted(catalog.models)
    assert params["gpu"]["items"]["enum"] == sorted(catalog.gpus)


def test_chart_curves_run_from_batch_one_to_the_operating_point(tmp_path: Path, capsys):
    from pricing.serving_chart import curves

    cat = load_catalog()
    a = answer(Question("llama-3.3-70b", "fp8", gpus=("l40s",), gpu_count=8), cat)
    (label,) = curves(a, cat)
    user, per_gpu = curves(a, cat)[label]
    best = a.options[0]
    assert label == f"l40s x8 (G {best.gpus_per_replica})"
    # the last point is the option itself; the first serves one request per replica
    assert per_gpu[-1] == pytest.approx(best.p50, rel=1e-12)
    assert user[-1] == pytest.approx(best.tokens_per_s_per_user, rel=1e-12)
    assert (np.diff(per_gpu) > 0).all() and (np.diff(user) < 0).all()
    path = tmp_path / "chart.svg"
    assert main(["throughput", "llama-3.3-70b", "--gpu", "l40s", "--chart", str(path)]) == 0
    assert path.read_text(encoding="utf-8").startswith("<?xml")
    assert main(["throughput", "llama-3.3-70b", "--chart", str(tmp_path / "c.gif")]) == 2
    assert "written as .png or .svg" in capsys.readouterr().err


def test_the_pages_curves_carry_the_estimates_band(tmp_path: Path):
    # GET /v1/throughput with curves=N: the N best estimated GPUs' curves (the page's chart),
    # each ending at its option; P10/P90 = P50 * exp(-/+ 1.2815516 sigma), the options' own:
    # at the published sigma 0.315774 that is P50 / 1.49882 and P50 * 1.49882.
    client = make_app(tmp_path).test_client()
    body = client.get("/v1/throughput?model=llama-3.1-8b&curves=3").get_json()
    assert "curves" not in client.get("/v1/throughput?model=llama-3.1-8b").get_json()
    firsts = {}
    for o in body["options"]:  # the best estimated option of each GPU, best first
        if o["origin"] == "estimated":
            firsts.setdefault(o["gpu"], o)
    best = list(firsts.values())[:3]
    assert [(c["gpu"], c["gpus"], c["gpus_per_replica"]) for c in body["curves"]] == [
        (o["gpu"], o["gpus"], o["gpus_per_replica"]) for o in best
    ]
    spread = math.exp(1.2815515655446004 * body["sigma"])
    for c, o in zip(body["curves"], best, strict=True):
        band = {k: np.array(v) for k, v in c["tokens_per_s_per_gpu"].items()}
        assert len(band["p50"]) == len(c["tokens_per_s_per_user"]) <= 40
        np.testing.assert_allclose(band["p10"] * spread, band["p50"], rtol=1e-12)
        np.testing.assert_allclose(band["p90"] / spread, band["p50"], rtol=1e-12)
        for k in ("p10", "p50", "p90"):  # the last point is the option itself
            assert band[k][-1] == pytest.approx(o["tokens_per_s_per_gpu"][k], rel=1e-12)
        assert c["tokens_per_s_per_user"][-1] == pytest.approx(o["tokens_per_s_per_user"])
    assert_error(client.get("/v1/throughput?model=llama-3.1-8b&curves=13"), 400)
