"""How the compiled kernels are chosen (costmodel.compiled)."""

from __future__ import annotations

import pytest

from costmodel.compiled import KERNELS_VARIABLE, kernel


def test_numpy_chosen_gives_none(monkeypatch):
    monkeypatch.setenv(KERNELS_VARIABLE, "numpy")
    assert kernel("absent") is None


def test_missing_kernel_falls_back_unless_required(monkeypatch):
    monkeypatch.delenv(KERNELS_VARIABLE, raising=False)
    assert kernel("absent") is None
    monkeypatch.setenv(KERNELS_VARIABLE, "c")
    with pytest.raises(ImportError, match=r"costmodel\._absent was not built"):
        kernel("absent")


def test_unknown_choice_is_refused(monkeypatch):
    monkeypatch.setenv(KERNELS_VARIABLE, "fortran")
    with pytest.raises(ValueError, match="not one of: c, numpy"):
        kernel("absent")
