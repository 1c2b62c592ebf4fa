"""The estimate's calibration (pricing.calibration): the published file is what a refit on the
shipped catalog gives, the fit recovers known constants, and the leave-one-out error is what its
definition says."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from pricing import CatalogError, load_catalog
from pricing.calibration import (
    FORM,
    evaluate,
    fit,
    from_json,
    leave_one_out,
    predict,
    published,
    rows_of,
    to_json,
)
from pricing.estimate import Calibration

TOOL = Path(__file__).resolve().parents[1] / "tools" / "build_calibration.py"


@pytest.fixture(scope="module")
def rows():
    return rows_of(load_catalog())


@pytest.fixture(scope="module")
def refit(rows):
    return evaluate(rows, FORM, load_catalog().as_of)


def test_published_calibration_is_a_refit(refit):
    shipped = published()
    assert shipped.as_of == load_catalog().as_of
    assert shipped.row_ids == refit.row_ids
    assert shipped.calibration.terms == FORM
    for name in ("eta_b", "eta_f", "o_dec_s", "o_pre_s", "eta_moe", "o_tp_s"):
        got, want = getattr(shipped.calibration, name), getattr(refit.calibration, name)
        assert got == pytest.approx(want, rel=1e-4, abs=1e-7), name
    for name in ("loo_median_pct", "sigma", "sigma_dense", "sigma_moe"):
        assert getattr(shipped, name) == pytest.approx(getattr(refit, name), rel=1e-4), name
    np.testing.assert_allclose(shipped.loo, refit.loo, rtol=1e-4)
    np.testing.assert_allclose(shipped.in_sample, refit.in_sample, rtol=1e-4)


def _same(a: object, b: object) -> bool:
    """Whether two row sets (dataclasses of arrays, nested) hold the same values."""
    if dataclasses.is_dataclass(a):
        return type(a) is type(b) and all(
            _same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )
    return np.array_equal(np.asarray(a), np.asarray(b))


def test_the_tool_writes_the_published_text(rows, refit, monkeypatch):
    spec = importlib.util.spec_from_file_location("build_calibration", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    asked = []

    def fitted(tool_rows, terms, as_of):  # the fit of the same rows, terms and date: refit's
        asked.append((_same(tool_rows, rows), terms, as_of))
        return refit

    monkeypatch.setattr(tool, "evaluate", fitted)
    assert from_json(tool.build()) == from_json(to_json(published()))
    assert asked == [(True, FORM, load_catalog().as_of)]


def test_the_published_error_beats_the_reference_form_and_says_how_much(refit):
    # every row of the catalog with an architecture: 45 measured operating points
    assert len(refit.row_ids) == 45
    assert refit.loo_median_pct <= 30
    assert 0.3 < refit.sigma < 0.6
    assert refit.sigma_dense is not None and refit.sigma_moe is not None  # >= 10 rows each


def test_error_statistics_follow_their_definitions(refit, rows):
    loo = np.asarray(refit.loo)
    assert refit.loo_median_pct == pytest.approx(np.median(np.abs(loo - 1)) * 100, rel=1e-12)
    assert refit.sigma == pytest.approx(np.std(np.log(loo), ddof=1), rel=1e-12)
    assert refit.sigma_moe == pytest.approx(np.std(np.log(loo[rows.moe]), ddof=1), rel=1e-12)
    # in-sample ratios are the full fit's predictions over the measurements
    expected = predict(rows, refit.calibration) / rows.measured
    np.testing.assert_allclose(refit.in_sample, expected, rtol=1e-12)


def test_leave_one_out_predicts_each_row_without_it(rows):
    small = rows.subset(np.arange(len(rows.ids)) < 12)
    ratios = leave_one_out(small)
    keep = np.arange(12) != 3
    alone = fit(small.subset(keep))
    assert ratios[3] == pytest.approx(predict(small, alone)[3] / small.measured[3], rel=1e-12)


def test_the_fit_recovers_known_constants(rows):
    # measurements made by the form itself at known constants: the fit returns them
    known = Calibration(0.6, 0.4, 0.002, 0.02, FORM, eta_moe=0.5, o_tp_s=0.001)
    synthetic = dataclasses.replace(rows, measured=predict(rows, known))
    got = fit(synthetic, known.terms)
    for name in ("eta_b", "eta_f", "o_pre_s", "eta_moe", "o_tp_s"):
        assert getattr(got, name) == pytest.approx(getattr(known, name), rel=1e-3), name
    assert got.o_dec_s == pytest.approx(0.002, abs=1e-5)


def test_rows_run_at_their_stated_replica_size(rows):
    stated = rows.ids.index("llama-3.1-70b/fp16/a100-sxm4-80gb/1000x1000/trtllm-0.17-4gpu")
    assert rows.allowed[stated].tolist() == [False, False, True, False, False]
    # an unstated row may take any size of one node...
    node = rows.ids.index("llama-3.3-70b/fp8/h100-sxm5-80gb/1024x1024/vllm")
    assert rows.allowed[node].tolist() == [True, True, True, True, False]
    # ...or two nodes where the model fits in none (671 GB of DeepSeek-R1 at fp8 on H100s;
    # the smaller sizes hold no request, so the prediction passes them over)
    multi = rows.ids.index("deepseek-r1/fp8/h100-sxm5-80gb/1024x1024/dynamo-trtllm")
    assert bool(rows.allowed[multi][-1])
    assert np.isfinite(predict(rows, published().calibration)[multi])
    # single-stream llama.cpp row: concurrency 1, so batch 1
    assert rows.concurrency[rows.ids.index("llama-3-8b/fp16/rtx-4090/0x512/llama.cpp-1gpu")] == 1


def test_a_broken_published_file_is_named():
    with pytest.raises(CatalogError, match="serving_calibration.json.*not a published"):
        from_json("{}")
    with pytest.raises(CatalogError, match=r"eta_b.*\(0, 1\]"):
        text = to_json(published()).replace('"eta_b": ', '"eta_b": 7', 1)
        from_json(text)
