"""The compiled kernels: small C extension modules built with the package where a C compiler
is at hand, each beside the numpy form it replaces, which gives the same numbers bit for bit.

A kernel is the module ``costmodel._<name>`` (its source ``costmodel/_<name>.c``, declared in
``pyproject.toml`` as an optional extension: a machine without a compiler installs without it
and evaluates with numpy). ``COSTMODEL_KERNELS`` chooses: ``c`` requires every kernel (a
missing one is an error, as CI wants), ``numpy`` uses none (to compare the two), unset uses
those that were built.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["KERNELS_VARIABLE", "kernel"]

#: The environment variable that chooses between the compiled kernels and numpy.
KERNELS_VARIABLE = "COSTMODEL_KERNELS"

_CHOICES = ("c", "numpy")


def kernel(name: str) -> ModuleType | None:
    """The compiled module ``costmodel._<name>``, or ``None`` where the caller should use its
    numpy form: the module was not built, or ``COSTMODEL_KERNELS=numpy``. Raises
    :class:`ImportError` for a module missing under ``COSTMODEL_KERNELS=c`` and
    :class:`ValueError` for a value of the variable that is neither."""
    choice = os.environ.get(KERNELS_VARIABLE, "").strip().lower()
    if choice and choice not in _CHOICES:
        raise ValueError(
            f"{KERNELS_VARIABLE}={choice!r} is not one of: {', '.join(_CHOICES)} (or unset)"
        )
    if choice == "numpy":
        return None
    try:
        return importlib.import_module(f"costmodel._{name}")
    except ImportError:
        if choice == "c":
            raise ImportError(
                f"costmodel._{name} was not built (reinstall with a C compiler at hand, or "
                f"unset {KERNELS_VARIABLE} to use numpy)"
            ) from None
        return None
