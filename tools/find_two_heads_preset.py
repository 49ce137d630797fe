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

import math

import numpy as np
import numpy.typing as npt

from attention_math.presets import DOG_CHASED_BALL

Matrix = npt.NDArray[np.float64]

QUERY = 4  # "ball"
TARGETS = (1, 2)  # head 1 attends most to "dog", head 2 to "chased"
MIN_TOP = 0.3
MIN_MARGIN = 0.06
D_K = D_V = 2


def _one_decimal(rng: np.random.Generator, shape: tuple[int, ...]) -> Matrix:
    return rng.integers(-10, 11, size=shape) / 10


def ball_weights(w_query: Matrix, w_key: Matrix, x: Matrix = DOG_CHASED_BALL.embeddings) -> Matrix:
    """The weights of "ball" over the five tokens: softmax(q5 · k_j / √d_k)."""
    scores = (x[QUERY] @ w_query) @ (x @ w_key).T / math.sqrt(w_key.shape[1])
    exps = np.exp(scores - scores.max())
    weights: Matrix = exps / exps.sum()
    return weights


def clearly_top(weights: Matrix) -> int | None:
    """The token with the largest weight when it stands out clearly, else None."""
    order = np.argsort(weights)[::-1]
    top, second = weights[order[0]], weights[order[1]]
    if top >= MIN_TOP and top - second >= MIN_MARGIN:
        return int(order[0])
    return None


def search_heads(seed: int = 14, tries: int = 100_000) -> tuple[list[Matrix], list[Matrix]]:
    """``W_Q`` and ``W_K`` of head 1 (top "dog") and head 2 (top "chased"), the first drawn."""
    rng = np.random.default_rng(seed)
    found: dict[int, tuple[Matrix, Matrix]] = {}
    for _ in range(tries):
        w_query, w_key = _one_decimal(rng, (3, D_K)), _one_decimal(rng, (3, D_K))
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
    w_values: list[Matrix] = []
    while len(w_values) < len(TARGETS):
        w_value = _one_decimal(rng, (3, D_V))
        norms = np.linalg.norm(x @ w_value, axis=1)
        if norms.min() >= 0.3 and norms.max() <= 1.5:
            w_values.append(w_value)
    concat = np.concatenate(
        [ball_weights(wq, wk) @ (x @ wv) for wq, wk, wv in zip(w_queries, w_keys, w_values, strict=True)]
    )
    while True:
        w_out = _one_decimal(rng, (len(TARGETS) * D_V, x.shape[1]))
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
    found = search()
    for name, matrices in found.items():
        print(f"{name} = {matrices}")
    for head, (w_query, w_key) in enumerate(zip(found["w_query"], found["w_key"], strict=True), start=1):
        weights = ball_weights(np.array(w_query), np.array(w_key))
        print(f"head {head}: weights of 'ball' = {np.round(weights, 4).tolist()}")
