"""Search for two one-decimal heads that attend, for "ball", most to different tokens.

The preset ``two-heads`` keeps the embeddings of ``dog-chased-ball`` ("The dog chased the
ball") and gives it two heads of d_k = d_v = 2. This script draws one-decimal ``W_Q`` and
``W_K`` (entries -1.0 … 1.0) from a seeded generator until one pair makes "ball" attend most
to "dog" and another most to "chased", each clearly: the top weight at least ``MIN_TOP`` and
at least ``MIN_MARGIN`` above every other weight (so the two decimals on screen show it).
Then it draws each head's ``W_V`` until the values have a size that draws well, and a one-
decimal ``W_O`` (4 × 3) under which the two heads' halves of ``concat`` both count and no
entry of the output of "ball" is nearly zero.

Run ``python tools/find_two_heads_preset.py``; it prints the matrices pasted into
``attention_math/presets.py``. It is deterministic (seeded), so the output never drifts.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from attention_math.presets import DOG_CHASED_BALL

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its helper beside it, however it is loaded
from ball_heads import D_K, D_V, Matrix, ball_weights, clearly_top, draw_values, one_decimal, print_found

TARGETS = (1, 2)  # head 1 attends most to "dog", head 2 to "chased"


def search_heads(seed: int = 14, tries: int = 100_000) -> tuple[list[Matrix], list[Matrix]]:
    """``W_Q`` and ``W_K`` of head 1 (top "dog") and head 2 (top "chased"), the first drawn."""
    rng = np.random.default_rng(seed)
    found: dict[int, tuple[Matrix, Matrix]] = {}
    for _ in range(tries):
        w_query, w_key = one_decimal(rng, (3, D_K)), one_decimal(rng, (3, D_K))
        top = clearly_top(ball_weights(w_query, w_key))
        if top in TARGETS and top not in found:
            found[top] = (w_query, w_key)
            if len(found) == len(TARGETS):
                return [found[t][0] for t in TARGETS], [found[t][1] for t in TARGETS]
    raise RuntimeError("no heads found; raise `tries`")


def pick_values(w_queries: list[Matrix], w_keys: list[Matrix], seed: int = 7) -> tuple[list[Matrix], Matrix]:
    """Each head's ``W_V`` (values of size 0.3 to 1.5) and a ``W_O`` that uses both heads.

    ``W_O`` is drawn until neither head's rows of it are nearly zero and every entry of the
    output of "ball" is at least 0.1 in size (none shows as 0.00).
    """
    rng = np.random.default_rng(seed)
    x = DOG_CHASED_BALL.embeddings
    w_values = draw_values(rng, len(TARGETS))
    concat = np.concatenate(
        [ball_weights(wq, wk) @ (x @ wv) for wq, wk, wv in zip(w_queries, w_keys, w_values, strict=True)]
    )
    while True:
        w_out = one_decimal(rng, (len(TARGETS) * D_V, x.shape[1]))
        halves = [np.abs(w_out[h * D_V : (h + 1) * D_V]).sum() for h in range(len(TARGETS))]
        if min(halves) >= 1.5 and np.abs(concat @ w_out).min() >= 0.1:
            return w_values, w_out


def search() -> dict[str, list[list[list[float]]] | list[list[float]]]:
    """The two heads' matrices and ``W_O``, as nested lists."""
    w_queries, w_keys = search_heads()
    w_values, w_out = pick_values(w_queries, w_keys)
    return {
        "w_query": [m.tolist() for m in w_queries],
        "w_key": [m.tolist() for m in w_keys],
        "w_value": [m.tolist() for m in w_values],
        "w_out": w_out.tolist(),
    }


if __name__ == "__main__":
    print_found(search(), 4)
