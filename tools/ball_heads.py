"""What the preset finders of several heads over ``dog-chased-ball`` share: one-decimal matrices, the
weights of "ball", when one token clearly tops them, values that draw well, and the printout.

``find_two_heads_preset.py`` and ``find_grouped_preset.py`` import it (run as scripts, this folder is
on their path; each puts it there when loaded from elsewhere, as the tests load them).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from attention_math.presets import DOG_CHASED_BALL

__all__ = ["D_K", "D_V", "MIN_MARGIN", "MIN_TOP", "QUERY", "Matrix", "ball_weights", "clearly_top", "draw_values",
           "one_decimal", "print_found"]

Matrix = npt.NDArray[np.float64]

QUERY = 4  # "ball"
MIN_TOP = 0.3
MIN_MARGIN = 0.06
D_K = D_V = 2


def one_decimal(rng: np.random.Generator, shape: tuple[int, ...]) -> Matrix:
    """A matrix of one-decimal entries, -1.0 … 1.0."""
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


def draw_values(rng: np.random.Generator, count: int) -> list[Matrix]:
    """The first ``count`` one-decimal ``W_V`` drawn whose values are of size 0.3 to 1.5 (they draw well)."""
    x = DOG_CHASED_BALL.embeddings
    w_values: list[Matrix] = []
    while len(w_values) < count:
        w_value = one_decimal(rng, (3, D_V))
        norms = np.linalg.norm(x @ w_value, axis=1)
        if norms.min() >= 0.3 and norms.max() <= 1.5:
            w_values.append(w_value)
    return w_values


def print_found(found: dict[str, list[list[list[float]]] | list[list[float]]], digits: int) -> None:
    """The matrices as pasted into ``attention_math/presets.py``, then each head's weights of "ball"."""
    for name, matrices in found.items():
        print(f"{name} = {matrices}")
    for head, (w_query, w_key) in enumerate(zip(found["w_query"], found["w_key"], strict=True), start=1):
        weights = ball_weights(np.array(w_query), np.array(w_key))
        print(f"head {head}: weights of 'ball' = {np.round(weights, digits).tolist()}")
