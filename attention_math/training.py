"""Where ``W_Q`` and ``W_K`` come from: they start random and are learned by gradient descent.

The sentence is the lecture's: "The dog chased the ball, but it couldn't catch it." The first
"it" is the dog (it could not catch), the second the ball (it was not caught). Only the four
words that matter are kept, as the lecture's first part keeps three: ``dog, ball, it, it``.

Why a fourth number. The lecture gives every "it" the one embedding (0.5, 0.5, 0.1); with it
no ``W_Q`` and ``W_K`` can help, since equal rows of ``X`` give equal queries and so equal
attention rows: both "it"s would end on the same noun. A real model's input to an attention
layer is not the bare word; it carries position and, from the layers before, context. Here a
fourth number stands for that context, the **role**: +0.3 for the subject of its verb ("dog"
chased; the first "it" couldn't catch), −0.3 for the object (the "ball" was chased; the second
"it" was not caught). The first three numbers are the lecture's: "animal" and "thing" (the dog
0.9 and 0.1, the ball the reverse, "it" half of each) and a "shared" 0.1 that every word has
(through ``W_Q`` it works like a bias: a preference among keys that every query shares). The
role is small next to the meaning, so the raw dot products ``X Xᵀ`` drown it: the first "it"
scores the dog 0.60 and the ball 0.42 but itself 0.60 too, and their softmax is 0.27, 0.23,
0.27, 0.23. The weights must learn to use it.

The loss, stated: each "it" should put all its attention on its noun, so its target row is one-
hot on that noun, and the loss is the cross-entropy of the target ``t`` against the attention
row ``a`` (``a = softmax(q kᵀ / √d_k)`` over every key, itself included), averaged over the
``m = 2`` queries: ``L = −(1/m) Σ_queries Σ_j t_j log a_j``, here
``−½ (log a(it₁ → dog) + log a(it₂ → ball))``; ``log 4 ≈ 1.39`` for an even row over the four.

The gradient, exactly. With ``s = q kᵀ / √d_k``, ``∂L/∂s_j = (a_j − t_j) / m`` for each query's
row; call those rows ``G`` (``m × n``). Then ``∂L/∂W_Q = X_qᵀ G K / √d_k`` (``X_q`` the queries'
rows of ``X``) and ``∂L/∂W_K = Xᵀ Gᵀ Q_q / √d_k`` (``Q_q = X_q W_Q``). Training starts from
``W_Q`` then ``W_K`` drawn by ``numpy.random.default_rng(seed).uniform(−b, b, (d_in, d_k))``
with ``b = 1/√d_in = 0.5``, as PyTorch's ``nn.Linear`` initialises a weight, and takes plain
steps ``W ← W − learning_rate · ∂L/∂W``. The loss reads only the attention weights, so its
gradient with respect to ``W_V`` is 0: ``W_V`` is fixed, not learned (:data:`W_VALUE`).

What it learns (seed 0): the query reads the role (``W_Q``'s role row grows to 5.6) and the key
tells dog from ball (``W_K``: animal +3.8, thing −3.8, role +1.7). In one sentence the subject
is also the animal, so nothing here can tell "look for the subject" from "look for the animal";
a sentence whose subject is the thing would.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._core import AttentionTrace, FloatArray, as_matrix, frozen, owned, self_attention
from ._errors import ScenarioError
from .scenario import Scenario

__all__ = [
    "DEFAULT_LEARNING_RATE",
    "DEFAULT_STEPS",
    "D_K",
    "EMBEDDINGS",
    "FEATURES",
    "QUERIES",
    "REFERENTS",
    "SENTENCE",
    "TARGETS",
    "TOKENS",
    "W_VALUE",
    "LossGradient",
    "TrainingTrace",
    "gradient",
    "train_attention",
]

SENTENCE = "The dog chased the ball, but it couldn't catch it."
"""The lecture's sentence; :data:`TOKENS` are its four words that matter, in order."""

TOKENS: tuple[str, ...] = ("dog", "ball", "it", "it")
"""The tokens, one per row of :data:`EMBEDDINGS`."""

FEATURES: tuple[str, ...] = ("animal", "thing", "shared", "role")
"""What each column of :data:`EMBEDDINGS` stands for (role: + subject, − object of its verb)."""

EMBEDDINGS: FloatArray = frozen(
    [
        [0.9, 0.1, 0.1, 0.3],  # dog: the subject of "chased"
        [0.1, 0.9, 0.1, -0.3],  # ball: its object
        [0.5, 0.5, 0.1, 0.3],  # it: the subject of "couldn't catch" (the dog)
        [0.5, 0.5, 0.1, -0.3],  # it: the object of "catch" (the ball)
    ]
)
"""``X``, 4 × 4: the lecture's three numbers of each word and its role; read-only."""

QUERIES: tuple[int, ...] = (2, 3)
"""The rows of the two "it"s: the queries the loss looks at."""

REFERENTS: tuple[int, ...] = (0, 1)
"""The noun each query refers to: the first "it" the dog, the second the ball."""

TARGETS: FloatArray = frozen(np.eye(len(TOKENS))[list(REFERENTS)])
"""The target rows, one per query: all the attention on its noun (``2 × 4``, one-hot)."""

D_K = 2
"""Columns of ``W_Q`` and ``W_K``: queries and keys are 2-d, as in the lecture."""

W_VALUE: FloatArray = frozen([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
"""The fixed ``W_V`` (4 × 2): a value is a word's (animal, thing), so the context vector of an
"it" shows which noun it took its meaning from. Not learned: the loss does not depend on it."""

DEFAULT_STEPS = 60
"""Steps of gradient descent: the loss, near log 4 at first, ends near 0.03 (seed 0)."""

DEFAULT_LEARNING_RATE = 1.0
"""The fixed step size."""

_MAX_STEPS = 10_000
_SUM_TOLERANCE = 1e-9


@dataclass(frozen=True, eq=False)
class LossGradient:
    """The loss at some weights, the queries' attention rows, and the exact gradient.

    Attributes
    ----------
    loss
        ``L = −(1/m) Σ_queries Σ_j t_j log a_j``, the mean cross-entropy.
    rows
        ``a``, each query's attention row (``m × n``): ``softmax(q kᵀ / √d_k)`` over every key.
    grad_query, grad_key
        ``∂L/∂W_Q`` and ``∂L/∂W_K``, each ``d_in × d_k`` like the weight it belongs to.
    """

    loss: float
    rows: FloatArray
    grad_query: FloatArray
    grad_key: FloatArray


def gradient(
    w_query: npt.ArrayLike,
    w_key: npt.ArrayLike,
    *,
    embeddings: npt.ArrayLike = EMBEDDINGS,
    queries: Sequence[int] = QUERIES,
    targets: npt.ArrayLike = TARGETS,
) -> LossGradient:
    """The cross-entropy loss of the queries' attention rows and its gradient in ``W_Q``, ``W_K``.

    Parameters
    ----------
    w_query, w_key
        ``d_in × d_k`` each.
    embeddings
        ``X``, ``n × d_in`` (default: the sentence's, :data:`EMBEDDINGS`).
    queries
        The rows of ``X`` whose attention the loss reads, 0-based (default: the two "it"s).
    targets
        One target row per query, ``m × n``, each a distribution (entries ≥ 0, summing to 1).

    Returns
    -------
    LossGradient
        Read-only; the inputs are not touched.

    Raises
    ------
    ScenarioError
        Naming the argument whose shape or numbers are wrong, or when the scores overflow.

    Examples
    --------
    >>> at_zero = gradient(np.zeros((4, 2)), np.zeros((4, 2)))
    >>> round(at_zero.loss, 4), at_zero.rows[0]
    (1.3863, array([0.25, 0.25, 0.25, 0.25]))
    >>> bool(np.all(at_zero.grad_query == 0))  # a saddle: random weights start the descent
    True
    """
    x, wq, wk, rows, target = _checked_problem(embeddings, w_query, w_key, queries, targets)
    with np.errstate(over="ignore", invalid="ignore"):
        result = _loss_and_gradient(x, wq, wk, rows, target)
    if not _finite(result):
        raise ScenarioError("w_query: the scores overflow float64 with w_key; expected smaller weights")
    return result


def _loss_and_gradient(
    x: FloatArray, wq: FloatArray, wk: FloatArray, queries: npt.NDArray[np.intp], targets: FloatArray
) -> LossGradient:
    """The forward pass of the queries' rows and the backward pass, as the module docstring states."""
    sqrt_d_k = math.sqrt(wk.shape[1])
    x_q = x[queries]
    q = x_q @ wq
    k = x @ wk
    scaled = q @ k.T / sqrt_d_k
    shifted = scaled - np.max(scaled, axis=1, keepdims=True)
    log_rows = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    rows = np.exp(log_rows)
    m = len(queries)
    loss = 0.0 - float(np.sum(targets * log_rows)) / m  # 0.0 - …: a perfect row gives 0, not -0
    g = (rows - targets) / m / sqrt_d_k  # ∂L/∂(q kᵀ): the softmax's and the scale's parts together
    return LossGradient(loss=loss, rows=owned(rows), grad_query=owned(x_q.T @ (g @ k)),
                        grad_key=owned(x.T @ (g.T @ q)))


def _finite(result: LossGradient) -> bool:
    """Whether the loss and both gradients are finite (not so when the scores overflow)."""
    return math.isfinite(result.loss) and bool(np.all(np.isfinite(result.grad_query)) and np.all(
        np.isfinite(result.grad_key)))


def _checked_problem(
    embeddings: npt.ArrayLike, w_query: npt.ArrayLike, w_key: npt.ArrayLike, queries: object, targets: npt.ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray, npt.NDArray[np.intp], FloatArray]:
    """``X``, ``W_Q``, ``W_K``, the query rows and the targets, each checked and copied."""
    x = as_matrix("embeddings", embeddings)
    n, d_in = x.shape
    wq, wk = as_matrix("w_query", w_query), as_matrix("w_key", w_key)
    for name, matrix in (("w_query", wq), ("w_key", wk)):
        if matrix.shape[0] != d_in:
            raise ScenarioError(f"{name}: expected {d_in} rows (one per embedding dimension), got {matrix.shape[0]}")
    if wk.shape[1] != wq.shape[1]:
        raise ScenarioError(f"w_key: expected {wq.shape[1]} columns to match w_query (d_k), got {wk.shape[1]}")
    rows = _checked_queries(queries, n)
    target = as_matrix("targets", targets)
    if target.shape != (len(rows), n):
        raise ScenarioError(f"targets: expected one row of {n} per query, {len(rows)} × {n}, got shape {target.shape}")
    if np.any(target < 0) or np.any(np.abs(np.sum(target, axis=1) - 1.0) > _SUM_TOLERANCE):
        raise ScenarioError("targets: expected each row to be a distribution (entries >= 0, summing to 1)")
    return x, wq, wk, rows, target


def _checked_queries(queries: object, n: int) -> npt.NDArray[np.intp]:
    if isinstance(queries, (str, bytes)) or not isinstance(queries, Sequence | np.ndarray) or len(queries) == 0:
        raise ScenarioError(f"queries: expected a non-empty list of token rows, got {queries!r}")
    for row in queries:
        if isinstance(row, (bool, np.bool_)) or not isinstance(row, (int, np.integer)) or not 0 <= row < n:
            raise ScenarioError(f"queries: expected 0-based token rows from 0 to {n - 1}, got {row!r}")
    return np.array([int(row) for row in queries], dtype=np.intp)


@dataclass(frozen=True, eq=False)
class TrainingTrace:
    """A training run of ``W_Q`` and ``W_K``, step by step; every array read-only.

    Step ``t`` is the weights after ``t`` updates: ``w_query[0]`` is the random start,
    ``w_query[steps]`` the learned matrix, and ``w_query[t + 1] = w_query[t] − learning_rate ·
    grad_query[t]`` (likewise for keys).

    Attributes
    ----------
    sentence, tokens, features
        The lecture's sentence, the four tokens kept, and what each embedding column means.
    embeddings
        ``X``, ``n × d_in``.
    queries, referents
        The rows of the "it"s, and of the noun each refers to.
    targets
        One target row per query, ``m × n`` (one-hot on its noun).
    w_query, w_key
        ``W_Q`` and ``W_K`` at every step, ``(steps + 1) × d_in × d_k``.
    w_value
        The fixed ``W_V``, ``d_in × d_v`` (see :data:`W_VALUE`).
    grad_query, grad_key
        ``∂L/∂W_Q`` and ``∂L/∂W_K`` at the weights of each step before the last, ``steps × d_in × d_k``.
    rows
        Each query's attention row at every step, ``(steps + 1) × m × n``.
    losses
        One per step: ``losses[t]`` is the loss of the weights before update ``t`` (``steps`` values).
    final_loss
        The loss of the learned weights, after the last update.
    learning_rate, seed
        As given to :func:`train_attention`.
    """

    sentence: str
    tokens: tuple[str, ...]
    features: tuple[str, ...]
    embeddings: FloatArray
    queries: tuple[int, ...]
    referents: tuple[int, ...]
    targets: FloatArray
    w_query: FloatArray
    w_key: FloatArray
    w_value: FloatArray
    grad_query: FloatArray
    grad_key: FloatArray
    rows: FloatArray
    losses: FloatArray
    final_loss: float
    learning_rate: float
    seed: int

    @property
    def steps(self) -> int:
        """The number of updates made."""
        return int(self.losses.shape[0])

    @property
    def step_numbers(self) -> FloatArray:
        """``0, 1, …, steps`` as floats: the step that each first index of :attr:`w_query`, :attr:`w_key`,
        :attr:`rows` and :attr:`step_losses` names (a number to show, as the run counts it).

        >>> train_attention(steps=3).step_numbers
        array([0., 1., 2., 3.])
        """
        return frozen(np.arange(self.steps + 1, dtype=np.float64))

    @property
    def step_losses(self) -> FloatArray:
        """The loss at every step's weights, the learned ones included: ``steps + 1`` values,
        :attr:`losses` then :attr:`final_loss`, indexed like :attr:`w_query` and :attr:`rows`.

        >>> run = train_attention()
        >>> run.step_losses.shape, bool(run.step_losses[60] == run.final_loss)
        ((61,), True)
        >>> float(run.step_losses[0].round(2)), float(run.step_losses[20].round(2))
        (1.37, 0.56)
        """
        return frozen(np.append(self.losses, self.final_loss))

    def trace_at(self, step: int = -1) -> AttentionTrace:
        """Self-attention of the sentence with the weights of ``step`` (default: the learned ones).

        ``step`` runs from 0 (the random start) to :attr:`steps`; negative counts from the end.
        ``W_V`` is the fixed :attr:`w_value`. The queries' rows of its weights are :attr:`rows` ``[step]``.

        >>> trace = train_attention().trace_at()
        >>> trace.weights[2].round(2), trace.context[2].round(2)
        (array([0.97, 0.  , 0.03, 0.01]), array([0.89, 0.11]))
        """
        index = self._step_index(step)
        return self_attention(self.embeddings, self.w_query[index], self.w_key[index], self.w_value)

    def scenario(self, step: int = -1, *, query: int | None = None, precision: int = 2) -> Scenario:
        """The weights of ``step`` as a :class:`~attention_math.Scenario`, for the lecture's pipeline.

        ``query`` is a 0-based token row (default: the last "it"); ``precision`` the decimals shown
        (learned weights have many, so the scenario is :attr:`~attention_math.Scenario.rounded`).

        >>> learned = train_attention().scenario()
        >>> learned.query_token, learned.rounded, learned.query_step().weights.round(2)
        ('it', True, array([0.  , 0.97, 0.01, 0.03]))
        """
        index = self._step_index(step)
        title = "Learned by gradient descent" if index == self.steps else f"After {index} steps of gradient descent"
        return Scenario(title, self.tokens, self.embeddings, self.w_query[index], self.w_key[index], self.w_value,
                        query=query, precision=precision)

    def _step_index(self, step: int) -> int:
        last = self.steps
        whole = isinstance(step, (int, np.integer)) and not isinstance(step, (bool, np.bool_))
        if not whole or not -last - 1 <= step <= last:
            raise ScenarioError(f"step: expected a whole number from 0 to {last} (negative from the end), got {step!r}")
        return int(step) % (last + 1)


def train_attention(
    seed: int = 0, *, steps: int = DEFAULT_STEPS, learning_rate: float = DEFAULT_LEARNING_RATE
) -> TrainingTrace:
    """Learn ``W_Q`` and ``W_K`` so each "it" attends to its noun: plain gradient descent, every step kept.

    Parameters
    ----------
    seed
        Seed of ``numpy.random.default_rng``, which draws ``W_Q`` then ``W_K`` uniformly in ±1/√d_in.
    steps
        Updates to make, 1 to 10,000.
    learning_rate
        The fixed step size, a positive number.

    Returns
    -------
    TrainingTrace
        The same arguments give the same numbers, bit for bit.

    Raises
    ------
    ScenarioError
        Naming the argument, if one is out of range, or the learning rate makes the weights overflow.

    Examples
    --------
    >>> run = train_attention(seed=0)
    >>> run.steps, round(float(run.losses[0]), 2), round(run.final_loss, 2)
    (60, 1.37, 0.03)
    >>> run.rows[0].round(2)  # before: each "it" spread evenly, dog and ball alike
    array([[0.24, 0.26, 0.25, 0.25],
           [0.23, 0.27, 0.25, 0.25]])
    >>> run.rows[-1].round(2)  # after: the first "it" on the dog, the second on the ball
    array([[0.97, 0.  , 0.03, 0.01],
           [0.  , 0.97, 0.01, 0.03]])
    """
    seed, steps, rate = _checked_run(seed, steps, learning_rate)
    x, queries, shape = EMBEDDINGS, np.array(QUERIES, dtype=np.intp), (EMBEDDINGS.shape[1], D_K)
    w_query, w_key = np.empty((steps + 1, *shape)), np.empty((steps + 1, *shape))
    rng, bound = np.random.default_rng(seed), 1.0 / math.sqrt(shape[0])
    w_query[0], w_key[0] = rng.uniform(-bound, bound, shape), rng.uniform(-bound, bound, shape)  # W_Q first
    grad_query, grad_key = np.empty((steps, *shape)), np.empty((steps, *shape))
    rows, losses = np.empty((steps + 1, len(QUERIES), x.shape[0])), np.empty(steps + 1)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(steps + 1):
            step = _loss_and_gradient(x, w_query[t], w_key[t], queries, TARGETS)
            if not _finite(step):
                raise ScenarioError(f"learning_rate: {rate} makes the weights overflow at step {t}; expected less")
            rows[t], losses[t] = step.rows, step.loss
            if t < steps:
                grad_query[t], grad_key[t] = step.grad_query, step.grad_key
                w_query[t + 1], w_key[t + 1] = w_query[t] - rate * step.grad_query, w_key[t] - rate * step.grad_key
    return TrainingTrace(
        sentence=SENTENCE, tokens=TOKENS, features=FEATURES, embeddings=EMBEDDINGS, queries=QUERIES,
        referents=REFERENTS, targets=TARGETS, w_query=owned(w_query), w_key=owned(w_key), w_value=W_VALUE,
        grad_query=owned(grad_query), grad_key=owned(grad_key), rows=owned(rows), losses=frozen(losses[:steps]),
        final_loss=float(losses[steps]), learning_rate=rate, seed=seed,
    )


def _checked_run(seed: object, steps: object, learning_rate: object) -> tuple[int, int, float]:
    """``seed``, ``steps`` and ``learning_rate`` checked, as Python numbers."""
    whole = tuple(_whole(name, value, low, high) for name, value, low, high in (
        ("seed", seed, 0, 2**63 - 1), ("steps", steps, 1, _MAX_STEPS)))
    if isinstance(learning_rate, (bool, np.bool_)) or not isinstance(learning_rate, numbers.Real):
        raise ScenarioError(f"learning_rate: expected a positive number, got {learning_rate!r}")
    rate = float(learning_rate)
    if not (math.isfinite(rate) and rate > 0):
        raise ScenarioError(f"learning_rate: expected a positive finite number, got {learning_rate!r}")
    return whole[0], whole[1], rate


def _whole(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ScenarioError(f"{name}: expected a whole number from {low:,} to {high:,}, got {value!r}")
    return int(value)
