"""The serving-throughput estimate (pricing.estimate): the worked example of docs/model.md with
every intermediate, the operating point under targets, the replica-size rule, the tensor rate by
architecture, the sliding-window and mixture-of-experts terms, and the model records.

Decimal units throughout: 1 GB = 1e9 bytes, 1 TFLOPS = 1e12 FLOP/s. Hand arithmetic is in the
comments; a figure the docs print to k significant digits is checked to half a unit in its
last digit, and every exact formula to 1e-12 relative.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pricing import CatalogError, Model, load_catalog
from pricing.estimate import (
    Architecture,
    Calibration,
    Targets,
    estimate,
    kv_bytes,
    max_batch,
    serve,
    tensor_flops,
    weights_bytes,
)

#: The worked example's calibration: the reference form's constants.
EXAMPLE = Calibration(eta_b=0.45, eta_f=0.48, o_dec_s=0.0, o_pre_s=0.037)


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


@pytest.fixture(scope="module")
def llama8(cat):
    return Architecture.of(cat.model("llama-3.1-8b"))


@pytest.fixture(scope="module")
def llama70(cat):
    return Architecture.of(cat.model("llama-3.3-70b"))


def test_worked_example_intermediates(cat, llama8):
    l40s = cat.gpu("l40s")
    # W = 8.03e9 params x 1 byte (fp8) = 8.03e9 B
    assert weights_bytes(llama8, "fp8") == pytest.approx(8.03e9, rel=1e-12)
    # kv = 2 x 32 layers x 8 KV heads x 128 x 1 byte = 65,536 B per token
    assert kv_bytes(llama8, 1, "fp8", EXAMPLE) == 65_536
    # F = 362 TFLOPS fp16 x 2 (Ada has fp8 tensor cores) = 724e12 FLOP/s
    assert tensor_flops(l40s, "fp8") == pytest.approx(724e12, rel=1e-12)
    # M_kv = 0.9 x 48e9 - 8.03e9 = 3.517e10 B; n_max = floor(3.517e10 / (2000 x 65,536))
    # = floor(268.33) = 268
    assert max_batch(llama8, 48, 1, "fp8", 2000, EXAMPLE) == 268
    p = serve(llama8, 1, 864, 724e12, "fp8", 1000, 1000, 268, EXAMPLE)
    # memory: (8.03e9 + 268 x 1500 x 65,536) / (0.45 x 864e9) = 3.4375472e10 / 3.888e11
    memory = 3.4375472e10 / 3.888e11
    # compute: 2 x 8.03e9 x 268 / (0.48 x 724e12) = 4.30408e12 / 3.4752e14
    compute = 4.30408e12 / 3.4752e14
    assert memory == pytest.approx(0.0884143, abs=5e-8)
    assert compute == pytest.approx(0.0123851, abs=5e-8)
    assert p.decode_s == pytest.approx(memory, rel=1e-12)
    assert bool(p.memory_bound)
    # t_pre = 2 x 8.03e9 x 1000 / 3.4752e14 + 0.037 = 0.0462132 + 0.037 = 0.0832132 s
    assert p.prefill_s == pytest.approx(1.606e13 / 3.4752e14 + 0.037, rel=1e-12)
    assert p.prefill_s == pytest.approx(0.0832132, abs=5e-8)
    # T = 268 x 0.0832132 + 1000 x 0.0884143 = 110.715 s
    cycle = 268 * p.prefill_s + 1000 * memory
    assert p.cycle_s == pytest.approx(cycle, rel=1e-12)
    assert p.cycle_s == pytest.approx(110.715, abs=5e-4)
    # 268 x 2000 / 110.715 = 4,841.24 tokens/s per GPU; 1000 / 110.715 = 9.032 per user
    assert p.tokens_per_s_per_gpu == pytest.approx(268 * 2000 / cycle, rel=1e-12)
    assert p.tokens_per_s_per_gpu == pytest.approx(4841.24, rel=1e-6)
    assert p.tokens_per_s_per_user == pytest.approx(9.032, abs=5e-4)
    # TTFT = t_pre + t_dec = 0.0832132 + 0.0884143 = 0.1716275 s
    assert p.ttft_s == pytest.approx(p.prefill_s + memory, rel=1e-12)


def test_worked_example_through_estimate(cat, llama8):
    e = estimate(llama8, cat.gpu("l40s"), 1, "fp8", 1000, 1000, Targets(), EXAMPLE)
    assert (e.gpus_per_replica, e.batch, e.n_max, e.bound) == (1, 268, 268, "memory")
    assert e.meets_targets
    assert e.tokens_per_s_per_gpu == pytest.approx(4841.24, rel=1e-6)
    assert e.tpot_ms == pytest.approx(88.4143, abs=5e-5)


def test_a_kept_estimate_is_keyed_on_its_arguments(cat, llama8):
    l40s = cat.gpu("l40s")
    args = (llama8, l40s, 1, "fp8", 1000, 1000, Targets(), EXAMPLE)
    first = estimate(*args)
    assert estimate(*args) == first  # asked again: the same operating point
    # a slower calibration (eta_b 0.45 -> 0.30) is another question: fewer tokens/s
    slower = estimate(*args[:-1], dataclasses.replace(EXAMPLE, eta_b=0.30))
    assert slower.tokens_per_s_per_gpu < first.tokens_per_s_per_gpu
    assert estimate(*args) == first
    # a GPU of other specifications is another question too (bandwidth 864 -> 432 GB/s)
    narrow = dataclasses.replace(l40s, bandwidth_gbs=432.0)
    assert estimate(llama8, narrow, *args[2:]).tokens_per_s_per_gpu < first.tokens_per_s_per_gpu


def test_per_user_floor_picks_the_largest_batch_meeting_it(cat, llama8):
    e = estimate(llama8, cat.gpu("l40s"), 1, "fp8", 1000, 1000, Targets(30), EXAMPLE)
    # n = 37: t_dec = (8.03e9 + 37 x 1500 x 65,536) / 3.888e11 = 1.1667248e10 / 3.888e11
    # = 0.0300084 s; T = 37 x 0.0832132 + 1000 x 0.0300084 = 33.0872 s;
    # s = 1000 / 33.0872 = 30.223 >= 30; 37 x 2000 / 33.0872 = 2,236.51 tokens/s per GPU.
    # n = 38: t_dec = 0.0302613, T = 33.423, s = 29.92 < 30.
    assert e.batch == 37
    assert e.tpot_ms == pytest.approx(1.1667248e10 / 3.888e11 * 1e3, rel=1e-12)
    assert e.tokens_per_s_per_gpu == pytest.approx(2236.51, rel=1e-6)
    assert e.tokens_per_s_per_user == pytest.approx(30.223, abs=5e-4)
    assert e.tpot_ms == pytest.approx(30.0, abs=0.05)
    assert e.ttft_ms == pytest.approx(113.2, abs=0.05)
    assert serve(llama8, 1, 864, 724e12, "fp8", 1000, 1000, 38, EXAMPLE).tokens_per_s_per_user < 30


def test_tpot_ceiling(cat, llama8):
    e = estimate(llama8, cat.gpu("l40s"), 1, "fp8", 1000, 1000, Targets(max_tpot_ms=25), EXAMPLE)
    # n = 17: (8.03e9 + 17 x 9.8304e7) / 3.888e11 = 9.701168e9 / 3.888e11 = 24.95 ms;
    # n = 18: 9.799472e9 / 3.888e11 = 25.20 ms > 25
    assert e.batch == 17
    assert e.tpot_ms == pytest.approx(9.701168e9 / 3.888e11 * 1e3, rel=1e-12)


def test_ttft_ceiling_below_one_requests_prefill_cannot_serve(cat, llama8):
    # TTFT at n = 1 = 0.0832132 + (8.03e9 + 1500 x 65,536) / 3.888e11 = 0.0832132 + 0.0209057
    # = 104.1 ms: a 100 ms ceiling is met by no batch, so the best it can do is reported
    e = estimate(llama8, cat.gpu("l40s"), 1, "fp8", 1000, 1000, Targets(max_ttft_ms=100), EXAMPLE)
    assert not e.meets_targets
    assert e.batch == 1
    assert e.ttft_ms == pytest.approx((0.0832132 + 8.128304e9 / 3.888e11) * 1e3, abs=1e-4)


def test_replica_size_rule_70b_on_8_h100(cat, llama70):
    h100 = cat.gpu("h100-sxm5-80gb")
    # kv = 2 x 80 x 8 x 128 = 163,840 B per token, 3.2768e8 per request; W = 70.56e9 B
    # n_max: G=1 floor((72e9 - 70.56e9) / 3.2768e8) = 4; G=2 floor(73.44e9 / 3.2768e8) = 224;
    # G=4 floor(217.44e9 / 3.2768e8) = 663; G=8 floor(505.44e9 / 3.2768e8) = 1542
    per_gpu = {}
    for g, n_max in ((1, 4), (2, 224), (4, 663), (8, 1542)):
        assert max_batch(llama70, 80, g, "fp8", 2000, EXAMPLE) == n_max
        point = serve(llama70, g, 3350, 1978.8e12, "fp8", 1000, 1000, n_max, EXAMPLE)
        per_gpu[g] = float(point.tokens_per_s_per_gpu)
    assert per_gpu[1] == pytest.approx(166.0, abs=0.05)
    assert per_gpu[2] == pytest.approx(3363.9, abs=0.05)
    assert per_gpu[4] == pytest.approx(3772.2, abs=0.05)
    assert per_gpu[8] == pytest.approx(3135.0, abs=0.05)
    e = estimate(llama70, h100, 8, "fp8", 1000, 1000, Targets(), EXAMPLE)
    assert (e.gpus_per_replica, e.batch) == (4, 663)  # two replicas of 4
    assert e.tokens_per_s_per_gpu == pytest.approx(per_gpu[4], rel=1e-12)
    # a build of 2 GPUs may only run G = 1 or 2
    assert estimate(llama70, h100, 2, "fp8", 1000, 1000, Targets(), EXAMPLE).gpus_per_replica == 2
    # 6 GPUs: G in {1, 2} (4 does not divide 6)
    assert estimate(llama70, h100, 6, "fp8", 1000, 1000, Targets(), EXAMPLE).gpus_per_replica == 2


def test_concurrency_is_spread_over_the_replicas(cat, llama70):
    # 64 requests on 8 GPUs: 32 per replica of 4 (below n_max 663), 16 per replica of 2
    e = estimate(llama70, cat.gpu("h100-sxm5-80gb"), 8, "fp8", 1000, 1000, Targets(), EXAMPLE, 64)
    expected = {
        g: float(
            serve(
                llama70, g, 3350, 1978.8e12, "fp8", 1000, 1000, 64 * g / 8, EXAMPLE
            ).tokens_per_s_per_gpu
        )
        for g in (1, 2, 4, 8)
        if max_batch(llama70, 80, g, "fp8", 2000, EXAMPLE) >= 1
    }
    best = max(expected, key=expected.get)
    assert e.gpus_per_replica == best
    assert e.batch == min(64 * best / 8, max_batch(llama70, 80, best, "fp8", 2000, EXAMPLE))
    assert e.tokens_per_s_per_gpu == pytest.approx(expected[best], rel=1e-12)


def test_a_model_that_fits_nowhere_gives_none(cat):
    r1 = Architecture.of(cat.model("deepseek-r1"))
    # 671e9 B at fp8 against 0.9 x 8 x 80e9 = 576e9 B
    assert estimate(r1, cat.gpu("h100-sxm5-80gb"), 8, "fp8", 1000, 1000, Targets(), EXAMPLE) is None


def test_tensor_rate_by_architecture(cat):
    # Hopper: fp8 tensor cores, no fp4: fp4 runs at the fp8 rate (2 x 989.4)
    h100 = cat.gpu("h100-sxm5-80gb")
    assert tensor_flops(h100, "fp16") == pytest.approx(989.4e12)
    assert tensor_flops(h100, "fp4") == pytest.approx(2 * 989.4e12)
    # Blackwell: fp4 at 4 x 2250
    assert tensor_flops(cat.gpu("b200"), "fp4") == pytest.approx(4 * 2250e12)
    # Ampere: fp8 at the fp16 rate; CDNA 3 (MI300X): fp8 doubled
    assert tensor_flops(cat.gpu("a100-sxm4-80gb"), "fp8") == pytest.approx(312e12)
    assert tensor_flops(cat.gpu("mi300x"), "fp8") == pytest.approx(2 * 1307.4e12)
    # no tensor cores (Pascal): the fp32 peak
    assert tensor_flops(cat.gpu("gtx-1080-ti"), "fp16") == pytest.approx(
        cat.gpu("gtx-1080-ti").fp32_tflops * 1e12
    )


def test_compressed_and_sliding_window_kv(cat):
    r1 = Architecture.of(cat.model("deepseek-r1"))
    # MLA: 61 layers x 576 values x 1 byte = 35,136 B per token at fp8
    assert kv_bytes(r1, 1, "fp8", EXAMPLE) == 35_136
    oss = Architecture.of(cat.model("gpt-oss-120b"))
    # 36 layers x 2 x 8 x 64 = 36,864 B per token at fp8 (reference form: every layer full);
    # with the term, 18 layers hold at most 128 tokens: at 2000 tokens
    # 18 x 1024 x 2000 + 18 x 1024 x 128 = 36,864,000 + 2,359,296 = 39,223,296 B
    assert kv_bytes(oss, 2000, "fp8", EXAMPLE) == 36_864 * 2000
    windowed = dataclasses.replace(EXAMPLE, terms=("sliding_window",))
    assert kv_bytes(oss, 2000, "fp8", windowed) == 39_223_296
    assert kv_bytes(oss, 100, "fp8", windowed) == 36_864 * 100  # inside the window


def test_moe_efficiency_slows_only_a_mixture_of_experts(cat, llama8):
    moe = dataclasses.replace(EXAMPLE, terms=("moe_efficiency",), eta_moe=0.5)
    dense = serve(llama8, 1, 864, 724e12, "fp8", 1000, 1000, 268, moe)
    assert dense.decode_s == pytest.approx(3.4375472e10 / 3.888e11, rel=1e-12)
    qwen = Architecture.of(cat.model("qwen3-235b"))
    a = serve(qwen, 4, 4800, 1979e12, "fp8", 1000, 1000, 1, EXAMPLE)
    b = serve(qwen, 4, 4800, 1979e12, "fp8", 1000, 1000, 1, moe)
    assert bool(a.memory_bound)
    # memory-bound at batch 1: the step's memory time doubles (o_dec = 0)
    assert b.decode_s == pytest.approx(2 * a.decode_s, rel=1e-12)


def test_pcie_tensor_parallel_time_per_layer(cat, llama70):
    tp = dataclasses.replace(EXAMPLE, terms=("pcie_tp",), o_tp_s=0.001)
    args = (3350, 1978.8e12, "fp8", 1000, 1000, 100)
    base = serve(llama70, 4, *args, EXAMPLE, True)
    # PCIe cards in a replica of 4: 80 layers x 1 ms = 80 ms more per decode step
    assert serve(llama70, 4, *args, tp, True).decode_s == pytest.approx(base.decode_s + 0.080)
    # modules (NVLink) and single-card replicas: nothing added
    assert serve(llama70, 4, *args, tp, False).decode_s == base.decode_s
    assert serve(llama70, 1, *args, tp, True).decode_s == serve(llama70, 1, *args, EXAMPLE).decode_s
    # estimate() reads the form factor from the catalog: an L40S is a card
    l40s = cat.gpu("l40s")
    e = estimate(llama70, l40s, 4, "fp8", 1000, 1000, Targets(), tp)
    point = serve(llama70, 4, 864, 724e12, "fp8", 1000, 1000, e.batch, tp, True)
    assert e.tpot_ms == pytest.approx(float(point.decode_s) * 1e3, rel=1e-12)


def test_functions_broadcast_over_arrays(llama8):
    n = np.array([1, 37, 268])
    p = serve(llama8, 1, 864, 724e12, "fp8", 1000, 1000, n, EXAMPLE)
    one = [float(serve(llama8, 1, 864, 724e12, "fp8", 1000, 1000, k, EXAMPLE).cycle_s) for k in n]
    assert p.cycle_s.shape == (3,)
    np.testing.assert_allclose(p.cycle_s, one, rtol=1e-15)


def test_calibration_and_targets_are_checked():
    with pytest.raises(CatalogError, match=r"eta_b.*\(0, 1\]"):
        Calibration(1.2, 0.5, 0, 0)
    with pytest.raises(CatalogError, match="o_pre_s.*>= 0"):
        Calibration(0.5, 0.5, 0, -1)
    with pytest.raises(CatalogError, match="unknown term"):
        Calibration(0.5, 0.5, 0, 0, ("warp",))
    with pytest.raises(CatalogError, match="max_tpot_ms must be a positive number"):
        Targets(max_tpot_ms=0)


def test_the_catalog_gives_the_architecture(cat):
    base = cat.model("llama-3.1-8b")
    assert (base.layers, base.kv_heads, base.head_dim, base.kv_dim_per_layer) == (32, 8, 128, None)
    assert cat.model("llama-3.3-70b").params_b == 70.56
    assert cat.model("deepseek-r1").kv_dim_per_layer == 576
    # the record's own checks are tests/test_pricing.py's (the catalog's architecture columns)
    with pytest.raises(CatalogError, match="has no architecture"):
        Architecture.of(Model.inline("mystery", 7))
    # --params-b overrides the count of a dense model (total and active alike)
    assert Architecture.of(base, params_b=9.0).active_params_b == 9.0
