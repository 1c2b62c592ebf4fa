"""The price of a hosted API per million tokens of the workload's requests.

A provider bills input and output tokens at different prices, and input tokens read from its
prompt cache at a third. For requests of I input and O output tokens with a share c of the input
billed at the cached price, one million tokens (input + output) of such requests cost

    p_api = (I ((1 - c) p_in + c p_cached) + O p_out) / (I + O)   [USD per million tokens].
"""

from __future__ import annotations

import numpy as np

__all__ = ["blended_price"]

Value = float | np.ndarray


def blended_price(
    input_tokens: Value,
    output_tokens: Value,
    input_usd_per_mtok: Value,
    output_usd_per_mtok: Value,
    cached_input_usd_per_mtok: Value | None = None,
    cached_input_share: Value = 0.0,
) -> np.ndarray:
    """Blended API price of the workload [USD per million tokens, input + output].

    Args:
        input_tokens, output_tokens: tokens per request [tokens], >= 0, not both 0.
        input_usd_per_mtok, output_usd_per_mtok: the provider's prices [USD/M tokens].
        cached_input_usd_per_mtok: price of cached input [USD/M tokens]; default the input price.
        cached_input_share: c, share of input tokens billed at the cached price [-], in [0, 1].

    Every argument broadcasts (one value per draw, say).

    Returns:
        p_api of the module docstring, an array of the broadcast shape.

    Raises:
        ValueError: negative token counts, a request of no tokens, or a share outside [0, 1].
    """
    i = np.asarray(input_tokens, dtype=float)
    o = np.asarray(output_tokens, dtype=float)
    c = np.asarray(cached_input_share, dtype=float)
    if not (np.all(i >= 0) and np.all(o >= 0) and np.all(i + o > 0)):
        raise ValueError("input_tokens and output_tokens must be >= 0 and not both 0 [tokens]")
    if not np.all((c >= 0) & (c <= 1)):
        raise ValueError("cached_input_share must be in [0, 1] [-]")
    p_in = np.asarray(input_usd_per_mtok, dtype=float)
    p_cached = p_in if cached_input_usd_per_mtok is None else cached_input_usd_per_mtok
    p_input = (1.0 - c) * p_in + c * np.asarray(p_cached, dtype=float)
    return (i * p_input + o * np.asarray(output_usd_per_mtok, dtype=float)) / (i + o)
