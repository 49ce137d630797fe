"""Search for grouped-query heads that share keys and values yet attend, for "ball", to different tokens.

The preset ``grouped-dog`` keeps the embeddings of ``dog-chased-ball`` ("The dog chased the ball")
and gives it four query heads in two groups of two (d_k = d_v = 2): heads 1 and 2 share one
``W_K`` and ``W_V``, heads 3 and 4 another, as grouped-query attention (Ainslie et al. 2023) shares
them. Sharing the keys does not make the heads of a group attend alike: their queries differ. This
script draws, from a seeded generator, each group's one-decimal ``W_K`` (entries -1.0 … 1.0), then
one-decimal ``W_Q`` until two of them make "ball" attend clearly to two different tokens over that
same ``W_K`` (the top weight at least ``MIN_TOP`` and ``MIN_MARGIN`` above every other, as in
``find_two_heads_preset.py``). Then each group's ``W_V`` (values of a size that draws well) and a
one-decimal ``W_O`` (8 × 3) under which every head counts and no entry of the output of "ball" is
nearly zero.

Run ``python tools/find_grouped_preset.py``; it prints the matrices pasted into
``attention_math/presets.py``. It is seeded, so the output never drifts
(``tests/test_presets.py`` runs it again).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from attention_math.presets import DOG_CHASED_BALL

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its helper beside it, however it is loaded
from ball_heads import D_K, D_V, Matrix, ball_weights, clearly_top, draw_values, one_decimal, print_found

GROUPS, GROUP_SIZE = 2, 2  # key/value heads, query heads per key/value head


def search_group(rng: np.random.Generator, tries: int = 2_000) -> tuple[list[Matrix], Matrix] | None:
    """One group: a shared ``W_K`` and the first two ``W_Q`` whose clear tops differ (None: none in ``tries``)."""
    w_key = one_decimal(rng, (3, D_K))
    found: dict[int, Matrix] = {}
    for _ in range(tries):
        w_query = one_decimal(rng, (3, D_K))
        top = clearly_top(ball_weights(w_query, w_key))
        if top is not None and top not in found:
            found[top] = w_query
            if len(found) == GROUP_SIZE:
                return list(found.values()), w_key
    return None


def search_heads(seed: int = 9) -> tuple[list[Matrix], list[Matrix]]:
    """Each query head's ``W_Q`` (groups in order) and each group's ``W_K``."""
    rng = np.random.default_rng(seed)
    w_queries: list[Matrix] = []
    w_keys: list[Matrix] = []
    while len(w_keys) < GROUPS:
        group = search_group(rng)
        if group is not None:
            w_queries += group[0]
            w_keys.append(group[1])
    return w_queries, w_keys


def pick_values(w_queries: list[Matrix], w_keys: list[Matrix], seed: int = 7) -> tuple[list[Matrix], Matrix]:
    """Each group's ``W_V`` (values of size 0.3 to 1.5) and a ``W_O`` that uses every head."""
    rng = np.random.default_rng(seed)
    x = DOG_CHASED_BALL.embeddings
    w_values = draw_values(rng, GROUPS)
    concat = np.concatenate([ball_weights(wq, w_keys[i // GROUP_SIZE]) @ (x @ w_values[i // GROUP_SIZE])
                             for i, wq in enumerate(w_queries)])
    heads = GROUPS * GROUP_SIZE
    while True:
        w_out = one_decimal(rng, (heads * D_V, x.shape[1]))
        shares = [np.abs(w_out[h * D_V: (h + 1) * D_V]).sum() for h in range(heads)]
        if min(shares) >= 1.0 and np.abs(concat @ w_out).min() >= 0.1:
            return w_values, w_out


def search() -> dict[str, list[list[list[float]]] | list[list[float]]]:
    """Every query head's matrices (each group's ``W_K`` and ``W_V`` repeated for its heads) and ``W_O``."""
    w_queries, w_keys = search_heads()
    w_values, w_out = pick_values(w_queries, w_keys)
    group = [i // GROUP_SIZE for i in range(len(w_queries))]
    return {
        "w_query": [m.tolist() for m in w_queries],
        "w_key": [w_keys[g].tolist() for g in group],
        "w_value": [w_values[g].tolist() for g in group],
        "w_out": w_out.tolist(),
    }


if __name__ == "__main__":
    print_found(search(), 2)
