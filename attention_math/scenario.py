"""Scenarios: a validated, immutable description of one explainer.

A scenario is a title, the tokens, their embeddings ``X``, the three weight matrices, the query
token to explain and the number of decimals to show. It is made from Python, from a TOML file
(:func:`load_scenario`), by name (:func:`attention_math.preset`), or from a sentence whose
numbers are drawn reproducibly (:meth:`Scenario.from_sentence`). Every invalid input raises
:class:`ScenarioError`, naming the field and what was expected.
"""

from __future__ import annotations

import difflib
import math
import numbers
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ._core import AttentionTrace, FloatArray, QueryStep, self_attention
from ._errors import ScenarioError
from .multi_head import MultiHeadTrace, combine_heads, multi_head_attention

if TYPE_CHECKING:
    from .minilm import ModelHead

__all__ = [
    "MAX_RANDOM_SIZE",
    "MODELS",
    "ModelChoice",
    "Scenario",
    "load_scenario",
    "resolve_query",
    "scenario_from_mapping",
    "scenario_to_toml",
    "toml_value",
]

MAX_RANDOM_SIZE = 64
"""Largest ``d_model`` and ``d_k`` a sentence scenario may ask for."""

_MAX_PRECISION = 4
_MAX_DECIMALS = 6
_MATRIX_FIELDS = ("embeddings", "w_query", "w_key", "w_value")
_HEAD_KEYS = _MATRIX_FIELDS[1:]
_EXPLICIT_KEYS = ("title", "tokens", *_MATRIX_FIELDS, "query", "precision", "scaled", "heads", "w_out")
_SENTENCE_KEYS = ("title", "sentence", "seed", "d_model", "d_k", "d_v", "heads", "query", "precision", "scaled")
_MODEL_KEYS = ("title", "model", "query", "precision")
_FLAT_MODEL_KEYS = ("sentence", "layer", "head")  # beside ``model = "minilm"``, as the CLI's options
_ALL_KEYS = tuple(dict.fromkeys(_EXPLICIT_KEYS + _SENTENCE_KEYS + _MODEL_KEYS + _FLAT_MODEL_KEYS))
_MODEL_PRECISION = 2  # a real head's numbers are float32's: every decimal is rounded, 2 read best

MODELS = ("minilm",)
"""The real models a scenario can take a head of (``model.name``): all-MiniLM-L6-v2 (:mod:`attention_math.minilm`)."""


@dataclass(frozen=True)
class ModelChoice:
    """One head of a real model, on one sentence: what a ``model`` table or ``--model`` asks for.

    ``layer`` and ``head`` count from 1, as the screen and the lecture say ("layer 1 of 6, head 1 of
    12"), and as a scenario file counts its ``query``; :func:`attention_math.minilm.head` counts from 0,
    as the model's own files name their layers (``encoder.layer.0``).

    Examples
    --------
    >>> ModelChoice("minilm", "The cat sat.", layer=1, head=12).head_of_model().head  # the model's own index
    11
    >>> ModelChoice("gpt2", "The cat sat.", layer=1, head=1)
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: model: unknown model 'gpt2'; expected one of minilm
    >>> ModelChoice("minilm", "The cat sat.", layer=7, head=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: layer: expected a whole number from 1 to 6 (counted from 1, ...), got 7
    """

    name: str
    sentence: str
    layer: int
    head: int

    def __post_init__(self) -> None:
        from .minilm import N_HEADS, N_LAYERS  # constants only: nothing of the model's extra is imported

        if self.name not in MODELS:
            raise ScenarioError(f"model: unknown model {self.name!r}; expected one of {', '.join(MODELS)}")
        if not isinstance(self.sentence, str) or not self.sentence.strip():
            raise ScenarioError(f"sentence: expected text for the model to read, got {self.sentence!r}")
        for name, count in (("layer", N_LAYERS), ("head", N_HEADS)):
            number = getattr(self, name)
            if isinstance(number, bool) or not isinstance(number, (int, np.integer)) or not 1 <= number <= count:
                raise ScenarioError(
                    f"{name}: expected a whole number from 1 to {count} (counted from 1, as on screen), got {number!r}"
                )

    def head_of_model(self) -> ModelHead:
        """The head itself: :func:`attention_math.minilm.head` (0-based) of layer ``layer`` and head ``head``.

        Raises
        ------
        ScenarioError
            When the model is not installed (naming the install commands), or the sentence is longer
            than the model takes.
        """
        from .minilm import head

        return head(self.sentence, layer=self.layer - 1, head=self.head - 1)

    def to_dict(self) -> dict[str, Any]:
        """The ``model`` table of a scenario file."""
        return {"name": self.name, "sentence": self.sentence, "layer": self.layer, "head": self.head}


def _model_choice(table: object) -> ModelChoice:
    """A scenario file's ``model`` table checked: its keys, then :class:`ModelChoice`'s own checks."""
    if not isinstance(table, Mapping):
        raise ScenarioError(f"model: expected a model's name or a table {{name, sentence, layer, head}}, got {table!r}")
    known = ("name", "sentence", "layer", "head")
    for key in table:
        if key not in known:
            raise ScenarioError(f"model.{_key_name(key)}: unknown key{_suggest(str(key), known)}")
    if "sentence" not in table:
        raise ScenarioError("sentence: missing; a model's head needs a sentence to read")
    return ModelChoice(str(table.get("name", "minilm")), table["sentence"], table.get("layer", 1), table.get("head", 1))


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _matrix(name: str, value: object) -> FloatArray:
    """Check a matrix entry by entry, so the message can say which row or entry is wrong."""
    if isinstance(value, np.ndarray):
        if value.dtype == np.bool_ or not np.issubdtype(value.dtype, np.number):
            raise ScenarioError(f"{name}: expected numbers, got an array of {value.dtype}")
        if value.ndim != 2:
            raise ScenarioError(f"{name}: expected a 2-d matrix, got {value.ndim} dimension(s)")
        rows: list[list[object]] = value.tolist()
    elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        rows = []
        for r, row in enumerate(value, start=1):
            if isinstance(row, np.ndarray) and row.ndim == 1:
                row = row.tolist()
            if not isinstance(row, Sequence) or isinstance(row, (str, bytes)):
                raise ScenarioError(
                    f"{name}: expected a list of rows (lists of numbers); row {r} is {row!r}"
                )
            rows.append(list(row))
    else:
        raise ScenarioError(f"{name}: expected a matrix (a list of rows), got {value!r}")
    if not rows or not rows[0]:
        raise ScenarioError(f"{name}: expected a non-empty matrix, got an empty one")
    width = len(rows[0])
    for r, row in enumerate(rows, start=1):
        if len(row) != width:
            raise ScenarioError(
                f"{name}: ragged rows, row 1 has {width} entries but row {r} has {len(row)}"
            )
        for c, entry in enumerate(row, start=1):
            if not _is_number(entry):
                raise ScenarioError(
                    f"{name}: expected a number at row {r}, column {c}, got {entry!r}"
                )
            try:
                finite = math.isfinite(float(entry))  # type: ignore[arg-type]
            except OverflowError:  # a Python int beyond float64
                finite = False
            if not finite:
                raise ScenarioError(
                    f"{name}: expected a finite number at row {r}, column {c}, got {entry!r}"
                )
    matrix = np.array(rows, dtype=np.float64)
    matrix.setflags(write=False)
    return matrix


def _whole_number(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ScenarioError(f"{name}: expected a whole number from {low} to {high}, got {value!r}")
    if not low <= int(value) <= high:
        raise ScenarioError(f"{name}: expected a whole number from {low} to {high}, got {value}")
    return int(value)


def _checked_tokens(title: object, tokens: object) -> tuple[str, ...]:
    """The title checked, and the tokens as a tuple of non-blank strings."""
    if not isinstance(title, str):
        raise ScenarioError(f"title: expected text, got {title!r}")
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
        raise ScenarioError(f"tokens: expected a list of strings, got {tokens!r}")
    checked = tuple(tokens)
    for position, token in enumerate(checked, start=1):
        if not isinstance(token, str) or not token.strip():
            raise ScenarioError(f"tokens: expected non-blank text for token {position}, got {token!r}")
    return checked


def _checked_row(query: object, n: int, n_tokens: int) -> int:
    """The query's 0-based row (the last when ``None``), once the tokens match the ``n`` rows."""
    if n_tokens != n:
        raise ScenarioError(f"tokens: expected one token per row of embeddings ({n}), got {n_tokens}")
    row = n - 1 if query is None else query
    if isinstance(row, (bool, np.bool_)) or not isinstance(row, (int, np.integer)):
        raise ScenarioError(f"query: expected a 0-based token index, got {row!r}")
    if not 0 <= row < n:
        raise ScenarioError(f"query: expected a 0-based token index from 0 to {n - 1}, got {row}")
    return int(row)


def _stack(name: str, value: object) -> FloatArray:
    """One matrix per head, each checked like any matrix ("w_key, head 2: …"), all of one shape."""
    if isinstance(value, np.ndarray) and value.ndim != 3:
        raise ScenarioError(f"{name}: expected one matrix per head (heads × rows × columns), got {value.ndim}-d")
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence | np.ndarray) or len(value) == 0:
        raise ScenarioError(f"{name}: expected a list of matrices, one per head, got {value!r}")
    first = value[0]
    if isinstance(first, Sequence) and len(first) > 0 and _is_number(first[0]):
        raise ScenarioError(f"{name}: expected one matrix per head (w_out makes the scenario multi-head), got a matrix")
    matrices = [_matrix(f"{name}, head {h}", part) for h, part in enumerate(value, start=1)]
    for h, matrix in enumerate(matrices, start=1):
        if matrix.shape != matrices[0].shape:
            rows, columns = matrices[0].shape
            raise ScenarioError(
                f"{name}, head {h}: expected {rows} × {columns} like head 1, got {matrix.shape[0]} × {matrix.shape[1]}"
            )
    stack = np.stack(matrices)
    stack.setflags(write=False)
    return stack


def _decimals(array: FloatArray) -> int:
    """The fewest decimals (at most 6) that write every entry, forgiving binary noise.

    >>> _decimals(np.array([0.1, 0.2 + 0.1, 2.0])), _decimals(np.array([0.2961])), _decimals(np.array([1 / 3]))
    (1, 4, 6)
    """
    values = np.abs(array.ravel())
    with np.errstate(over="ignore", invalid="ignore"):
        for places in range(_MAX_DECIMALS):
            scaled = values * 10.0**places
            if np.all(np.abs(scaled - np.rint(scaled)) <= 1e-9 * np.maximum(1.0, scaled)):
                return places
    return _MAX_DECIMALS


def _decimals_of(x: FloatArray, weights: Sequence[FloatArray], w_out: FloatArray | None) -> tuple[int, int]:
    """``(input decimals, exact decimals)``: see :attr:`Scenario.input_decimals` and ``exact_decimals``."""
    of_x = _decimals(x)
    of_weights = max(_decimals(w) for w in weights)
    inputs = max(of_x, of_weights, 0 if w_out is None else _decimals(w_out))
    return inputs, max(inputs, of_x + of_weights)


def _checked_precision(precision: object, exact: int) -> int:
    """The precision asked for, or by default the exact decimals kept between 2 and 4."""
    if precision is None:
        return min(_MAX_PRECISION, max(2, exact))
    return _whole_number("precision", precision, 0, _MAX_PRECISION)


def resolve_query(tokens: Sequence[str], spec: int | str) -> int:
    """Turn a query as people give it into a 0-based row.

    Parameters
    ----------
    tokens
        The scenario's tokens.
    spec
        A token number counted from 1 (as on slides), the same as a string of digits, or the
        text of a token that occurs exactly once.

    Returns
    -------
    int
        The 0-based index of the query token.

    Examples
    --------
    >>> tokens = ["The", "dog", "chased", "the", "ball"]
    >>> resolve_query(tokens, 5), resolve_query(tokens, "ball"), resolve_query(tokens, "3")
    (4, 4, 2)
    """
    n = len(tokens)
    expected = f"a token number from 1 to {n} or the text of a token"
    if isinstance(spec, str):
        digits = spec.strip()
        # ASCII only: "²" is a digit to str.isdigit but not to int().
        if digits.isascii() and digits.isdigit():
            return resolve_query(tokens, int(digits))
        places = [i for i, token in enumerate(tokens) if token == spec]
        if len(places) == 1:
            return places[0]
        if places:
            numbers_ = ", ".join(str(i + 1) for i in places)
            raise ScenarioError(
                f"query: token {spec!r} occurs at positions {numbers_}; give its number instead"
            )
        known = ", ".join(repr(t) for t in tokens)
        raise ScenarioError(f"query: no token {spec!r}; expected {expected} ({known})")
    if isinstance(spec, (bool, np.bool_)) or not isinstance(spec, (int, np.integer)):
        raise ScenarioError(f"query: expected {expected}, got {spec!r}")
    if not 1 <= int(spec) <= n:
        raise ScenarioError(f"query: expected {expected}, got {spec}")
    return int(spec) - 1


@dataclass(frozen=True, eq=False, init=False)
class Scenario:
    """One explainer: tokens, their embeddings, the weight matrices and the query.

    One head (the default): ``w_query``, ``w_key`` and ``w_value`` are matrices. Several heads
    (when ``w_out`` is given): they are stacks with one matrix per head, as
    :func:`~attention_math.multi_head_attention` takes them, and :attr:`heads` holds each head
    as a one-head scenario. A multi-head scenario's :meth:`trace` and :meth:`query_step` are
    those of its first head (one self-attention); :meth:`multi_head_trace` has every head.

    Parameters
    ----------
    title
        Shown on screen and in file names (as a slug).
    tokens
        One string per row of ``embeddings``, shown literally.
    embeddings
        ``X``, ``n × d_in``.
    w_query, w_key
        ``d_in × d_k``; with ``w_out``, ``h × d_in × d_k`` (a list of ``h`` matrices).
    w_value
        ``d_in × d_v``; with ``w_out``, ``h × d_in × d_v``.
    query
        The 0-based row of the token to explain; ``None`` means the last token. (Files and
        the command line count from 1: see :func:`resolve_query`.)
    precision
        Decimals shown, 0 to 4. ``None`` (the default) shows as many as a product of an
        embedding and a weight has (:attr:`exact_decimals`), at least 2 and at most 4: with
        one-decimal inputs, 2, so each term ``x_i[m] · W[m, c]`` of ``Q``, ``K`` and ``V`` is
        shown exactly and adds up to the shown total; with two-decimal inputs, 4. Never
        fewer than 2, because weights at one decimal cannot be told apart. When the precision
        is below :attr:`exact_decimals`, :attr:`rounded` is true.
    scaled
        Divide scores by ``√d_k`` (turned off only to show softmax saturation).
    w_out
        ``W_O``, ``h·d_v × d_out``, for a multi-head scenario; ``None`` for one head.

    Raises
    ------
    ScenarioError
        Naming the field and what was expected, for any invalid input.

    Examples
    --------
    >>> s = Scenario("toy", ["a", "b"], [[1, 0], [0, 1]], [[1], [0]], [[1], [1]], [[1], [2]])
    >>> s.query, s.query_token, s.d_k, s.precision, s.rounded
    (1, 'b', 1, 2, False)
    >>> s.trace().weights[1].round(3)
    array([0.5, 0.5])
    >>> Scenario("bad", ["a"], [[1, 0], [0, 1]], [[1], [0]], [[1], [1]], [[1], [2]])
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: tokens: expected one token per row of embeddings (2), got 1
    """

    title: str
    tokens: tuple[str, ...]
    embeddings: FloatArray
    w_query: FloatArray
    w_key: FloatArray
    w_value: FloatArray
    query: int
    precision: int
    scaled: bool
    w_out: FloatArray | None
    model: ModelChoice | None
    _trace: AttentionTrace = field(init=False, repr=False, compare=False)
    _heads: tuple[Scenario, ...] = field(init=False, repr=False, compare=False)
    _multi: MultiHeadTrace | None = field(init=False, repr=False, compare=False)
    _decimals: tuple[int, int] = field(init=False, repr=False, compare=False)

    def __init__(
        self,
        title: str,
        tokens: Sequence[str],
        embeddings: npt.ArrayLike,
        w_query: npt.ArrayLike,
        w_key: npt.ArrayLike,
        w_value: npt.ArrayLike,
        query: int | None = None,
        precision: int | None = None,
        scaled: bool = True,
        *,
        w_out: npt.ArrayLike | None = None,
        model: ModelChoice | None = None,
    ) -> None:
        checked_tokens = _checked_tokens(title, tokens)
        x = _matrix("embeddings", embeddings)
        row = _checked_row(query, x.shape[0], len(checked_tokens))
        if not isinstance(scaled, (bool, np.bool_)):
            raise ScenarioError(f"scaled: expected true or false, got {scaled!r}")
        given = (("w_query", w_query), ("w_key", w_key), ("w_value", w_value))
        if w_out is None:
            wq, wk, wv = weights = tuple(_matrix(name, value) for name, value in given)
            # self_attention checks the shapes against each other and catches overflow.
            # a model's head: its own trace (the same numbers from the same inputs, made by attention_math.minilm)
            trace = (self_attention(x, wq, wk, wv, scaled=bool(scaled)) if model is None
                     else _model_trace(model, x, weights))
            out = None
        else:
            wq, wk, wv = weights = tuple(_stack(name, value) for name, value in given)
            out = _matrix("w_out", w_out)
            trace = multi_head_attention(x, wq, wk, wv, out, scaled=bool(scaled)).heads[0]
        decimals = _decimals_of(x, weights, out)
        set_ = object.__setattr__  # the dataclass is frozen; this is its constructor
        for name, value in (
            ("title", title), ("tokens", checked_tokens), ("embeddings", x), ("query", row),
            ("precision", _checked_precision(precision, decimals[1])), ("scaled", bool(scaled)),
            ("w_out", out), ("model", model), ("_trace", trace), ("_decimals", decimals),
        ):
            set_(self, name, value)
        for (name, _), matrix in zip(given, weights, strict=True):
            set_(self, name, matrix)
        heads = () if out is None else self._each_head()
        set_(self, "_heads", heads)
        set_(self, "_multi", None if out is None else combine_heads(tuple(h._trace for h in heads), out))

    def _each_head(self) -> tuple[Scenario, ...]:
        """Head ``h`` as a one-head scenario titled "…: head h": the same tokens, ``X``, query and precision."""
        return tuple(
            Scenario(
                f"{self.title}: head {h + 1}", self.tokens, self.embeddings, self.w_query[h], self.w_key[h],
                self.w_value[h], self.query, self.precision, self.scaled,
            )
            for h in range(self.w_query.shape[0])
        )

    @classmethod
    def from_model(
        cls, model: ModelChoice, *, query: int | str | None = None, title: str | None = None,
        precision: int | None = None,
    ) -> Scenario:
        """A real model's head on a sentence: its WordPiece tokens, its inputs (with the bias as the
        weight of an input that is always 1, so ``d_in`` is 385) and its own trace.

        Shown with 2 decimals unless ``precision`` says otherwise; titled by the sentence. Without a
        ``query``, the last word of the sentence explains (the last token with a letter or digit, not
        ``[SEP]``, whose row is the model's mark, nor the full stop).

        Examples
        --------
        >>> s = Scenario.from_model(ModelChoice("minilm", "The cat sat.", layer=1, head=1), query="cat")
        >>> s.tokens, s.query, s.d_in, s.d_k, s.precision, s.model.layer
        (('[CLS]', 'the', 'cat', 'sat', '.', '[SEP]'), 2, 385, 32, 2, 1)
        >>> bool(np.array_equal(s.trace().weights, s.model.head_of_model().trace.weights))
        True
        >>> Scenario.from_model(ModelChoice("minilm", "The cat sat.", layer=1, head=1)).query_token
        'sat'
        """
        found = model.head_of_model()
        trace = found.trace
        return cls(
            title=model.sentence if title is None else title,
            tokens=found.tokens,
            embeddings=trace.embeddings,
            w_query=trace.w_query,
            w_key=trace.w_key,
            w_value=trace.w_value,
            query=_last_word(found.tokens) if query is None else resolve_query(found.tokens, query),
            precision=_MODEL_PRECISION if precision is None else precision,
            model=model,
        )

    def model_head(self) -> ModelHead:
        """The model's head this scenario shows (biases, its place in the model), for a model scenario.

        Raises
        ------
        ScenarioError
            For a scenario of made-up numbers, which has no model.
        """
        if self.model is None:
            raise ScenarioError("model: this scenario's numbers are made up; it has no model's head")
        return self.model.head_of_model()

    @classmethod
    def from_sentence(
        cls,
        sentence: str,
        *,
        seed: int = 0,
        d_model: int = 3,
        d_k: int = 2,
        d_v: int | None = None,
        heads: int = 1,
        query: int | str | None = None,
        title: str | None = None,
        precision: int | None = None,
    ) -> Scenario:
        """A scenario whose tokens are the sentence's words and whose numbers are drawn.

        Tokens are the whitespace-separated words, kept exactly as typed. The numbers are
        drawn uniformly from [-1, 1] by ``numpy.random.default_rng(seed)`` and rounded to one
        decimal, so every product can be checked by hand; the same arguments give the same
        numbers. In this order: ``X`` (``n × d_model``), ``W_Q`` and ``W_K`` (``d_model × d_k``),
        ``W_V`` (``d_model × d_v``); with ``heads`` above 1, each of the three as ``heads``
        matrices, then ``W_O`` (``heads·d_v × d_model``). A row of ``X`` of zeros or equal to an
        earlier one is drawn again, from a stream of its own (while ``d_model`` allows).

        Parameters
        ----------
        sentence
            The text to tokenize.
        seed
            Seed of the random generator (0 or more).
        d_model, d_k, d_v
            Embedding size, query/key size and value size (default: ``d_k``), each 1 to
            ``MAX_RANDOM_SIZE``.
        heads
            Attention heads, 1 to ``MAX_RANDOM_SIZE``; 1 is a one-head scenario (no ``W_O``).
        query, title, precision
            A token number from 1 or a token's text (default the last token); the title
            (default the sentence); decimals shown (default 2, see :class:`Scenario`).

        Examples
        --------
        >>> s = Scenario.from_sentence("the cat sat", seed=1, d_v=3)
        >>> s.tokens, s.embeddings.shape, s.w_key.shape, s.w_value.shape, s.precision
        (('the', 'cat', 'sat'), (3, 3), (3, 2), (3, 3), 2)
        >>> two = Scenario.from_sentence("the cat sat", heads=2)
        >>> two.n_heads, two.w_query.shape, two.w_out.shape
        (2, (2, 3, 2), (4, 3))
        """
        if not isinstance(sentence, str) or not sentence.split():
            raise ScenarioError(f"sentence: expected text with at least one word, got {sentence!r}")
        tokens = tuple(sentence.split())
        drawn = _drawn_matrices(len(tokens), seed=seed, d_model=d_model, d_k=d_k, d_v=d_v, heads=heads)
        return cls(
            title=" ".join(tokens) if title is None else title,
            tokens=tokens,
            **drawn,
            query=None if query is None else resolve_query(tokens, query),
            precision=precision,
        )

    # -- derived ---------------------------------------------------------------------------
    @property
    def n_tokens(self) -> int:
        """Number of tokens ``n``."""
        return len(self.tokens)

    @property
    def d_in(self) -> int:
        """Embedding size (columns of ``X``)."""
        return int(self.embeddings.shape[1])

    @property
    def d_k(self) -> int:
        """Query/key size (columns of ``W_Q`` and ``W_K``; of each head's)."""
        return int(self.w_key.shape[-1])

    @property
    def d_v(self) -> int:
        """Value size (columns of ``W_V``; of each head's)."""
        return int(self.w_value.shape[-1])

    @property
    def n_heads(self) -> int:
        """The number of heads: 1 without ``w_out``."""
        return max(1, len(self._heads))

    @property
    def heads(self) -> tuple[Scenario, ...]:
        """Each head as a one-head scenario titled "…: head h"; ``(self,)`` for a one-head scenario."""
        return self._heads or (self,)

    @property
    def query_token(self) -> str:
        """The text of the query token."""
        return self.tokens[self.query]

    @property
    def input_decimals(self) -> int:
        """The most decimals an input number has (``X``, every weight matrix), 0 to 6.

        A number has ``k`` decimals when it is, to float64 rounding, a multiple of ``10⁻ᵏ``:
        0.1 has one (though its binary value is 0.1000000000000000055…), 0.30000000000000004
        (0.1 + 0.2) also one, 2.0 none. Six means six or more.

        Examples
        --------
        >>> from attention_math import preset
        >>> preset("dog-chased-ball").input_decimals, preset("softmax-saturation").input_decimals
        (1, 0)
        """
        return self._decimals[0]

    @property
    def exact_decimals(self) -> int:
        """Decimals that show every product of an embedding and a weight exactly, 0 to 12.

        The decimals of ``X`` plus the most of ``W_Q``, ``W_K`` and ``W_V`` (and at least
        :attr:`input_decimals`): at this precision each term ``x_i[m] · W[m, c]``, and so every
        entry of ``Q``, ``K`` and ``V``, is shown exactly, and sums of shown terms are the shown
        totals. Later numbers (the scores' terms, the weights, ``z``) are products of those and
        of exponentials: they are shown rounded at any precision.

        Examples
        --------
        >>> from attention_math import preset
        >>> preset("dog-chased-ball").exact_decimals, preset("your-journey").exact_decimals
        (2, 6)
        """
        return self._decimals[1]

    @property
    def rounded(self) -> bool:
        """Whether the precision is below :attr:`exact_decimals`: numbers from the inputs shown rounded.

        Then a sum of shown terms (a ``q_i[c]`` of the projection, say) may differ from the shown
        total in the last digit, and a caption should say the numbers are rounded.

        Examples
        --------
        >>> from attention_math import preset
        >>> preset("dog-chased-ball").rounded, preset("your-journey").rounded
        (False, True)
        """
        return self.precision < self.exact_decimals

    def trace(self, *, causal: bool = False) -> AttentionTrace:
        """Every intermediate of attention (masked when ``causal``); of the first head if several."""
        if self._heads:
            return self._heads[0].trace(causal=causal)
        if not causal:
            return self._trace
        return self_attention(
            self.embeddings, self.w_query, self.w_key, self.w_value,
            scaled=self.scaled, causal=True,
        )

    def query_step(self) -> QueryStep:
        """The term-by-term arithmetic of the scenario's query (in the first head if several)."""
        return self._trace.query_step(self.query)

    def multi_head_trace(self, *, causal: bool = False) -> MultiHeadTrace:
        """Every head's trace, their concatenation and the output ``concat @ W_O``.

        Raises
        ------
        ScenarioError
            For a one-head scenario, which has no ``W_O``.

        Examples
        --------
        >>> from attention_math import preset
        >>> trace = preset("two-heads").multi_head_trace()
        >>> trace.n_heads, trace.concat.shape, trace.output.shape
        (2, (5, 4), (5, 3))
        """
        if self.w_out is None or self._multi is None:
            raise ScenarioError("w_out: a one-head scenario has no W_O; give [[heads]] tables and w_out, or heads = 2")
        if not causal:
            return self._multi
        return multi_head_attention(
            self.embeddings, self.w_query, self.w_key, self.w_value, self.w_out, scaled=self.scaled, causal=True
        )

    def simplified(self) -> Scenario:
        """The same tokens and embeddings with ``W_Q = W_K = W_V = I`` (``d_in × d_in``), unscaled.

        The simplified self-attention of the previous lecture, where ``X`` plays every role:
        the scores are the raw dot products ``X Xᵀ``, the weights ``softmax(X Xᵀ)`` (no
        ``√d_k``: that lecture had no scaling) and the context vectors ``weights @ X``. Title,
        query and precision are kept; the result has one head.

        Examples
        --------
        >>> from attention_math import preset
        >>> raw = preset("raw-dot-product").simplified()
        >>> raw.w_key.tolist(), raw.scaled
        ([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], False)
        >>> raw.trace().scores[0].round(2)
        array([0.51, 0.51, 0.51])
        """
        identity = np.eye(self.d_in)
        return replace(self.heads[0], title=self.title, w_query=identity, w_key=identity, w_value=identity,
                       scaled=False)

    def with_query(self, spec: int | str) -> Scenario:
        """The same scenario explaining another token (number from 1, or its text)."""
        return replace(self, query=resolve_query(self.tokens, spec))

    def with_precision(self, precision: int) -> Scenario:
        """The same scenario shown with ``precision`` decimals (0 to 4).

        Examples
        --------
        >>> from attention_math import preset
        >>> s = preset("your-journey").with_precision(2)
        >>> s.precision, s.rounded
        (2, True)
        >>> preset("dog-chased-ball").with_precision(5)
        Traceback (most recent call last):
        ...
        attention_math._errors.ScenarioError: precision: expected a whole number from 0 to 4, got 5
        """
        return replace(self, precision=_checked_precision(precision, self.exact_decimals))

    def to_dict(self) -> dict[str, Any]:
        """Plain lists and numbers, as in a scenario file (``query`` counted from 1).

        A multi-head scenario has ``w_out`` and ``heads``, a list of ``{w_query, w_key, w_value}``.
        """
        if self.model is not None:  # the model's numbers are read again from the model, not written out
            return {"title": self.title, "model": self.model.to_dict(), "query": self.query + 1,
                    "precision": self.precision}
        data: dict[str, Any] = {"title": self.title, "tokens": list(self.tokens)}
        data["embeddings"] = self.embeddings.tolist()
        if self.w_out is None:
            data.update({name: getattr(self, name).tolist() for name in _MATRIX_FIELDS[1:]})
        data.update(query=self.query + 1, precision=self.precision, scaled=self.scaled)
        if self.w_out is not None:
            data["w_out"] = self.w_out.tolist()
            data["heads"] = [
                {name: getattr(head, name).tolist() for name in _MATRIX_FIELDS[1:]} for head in self._heads
            ]
        return data


def _drawn_matrices(
    n: int, *, seed: object, d_model: object, d_k: object, d_v: object, heads: object
) -> dict[str, Any]:
    """``X``, ``W_Q``, ``W_K``, ``W_V`` (and ``w_out``) drawn in that order, uniform in [-1, 1], one decimal."""
    seed = _whole_number("seed", seed, 0, 2**63 - 1)
    d_model = _whole_number("d_model", d_model, 1, MAX_RANDOM_SIZE)
    d_k = _whole_number("d_k", d_k, 1, MAX_RANDOM_SIZE)
    d_v = d_k if d_v is None else _whole_number("d_v", d_v, 1, MAX_RANDOM_SIZE)
    heads = _whole_number("heads", heads, 1, MAX_RANDOM_SIZE)
    per_head = () if heads == 1 else (heads,)
    shapes = {
        "embeddings": (n, d_model),
        "w_query": (*per_head, d_model, d_k),
        "w_key": (*per_head, d_model, d_k),
        "w_value": (*per_head, d_model, d_v),
    }
    if heads > 1:
        shapes["w_out"] = (heads * d_v, d_model)
    rng = np.random.default_rng(seed)
    # + 0.0 turns -0.0 into 0.0, which prints more kindly.
    drawn = {name: np.round(rng.uniform(-1.0, 1.0, size=shape), 1) + 0.0 for name, shape in shapes.items()}
    drawn["embeddings"] = _distinct_rows(drawn["embeddings"], seed)
    return drawn


def _distinct_rows(embeddings: np.ndarray, seed: int) -> np.ndarray:
    """``embeddings`` with each row that is all zeros or equals an earlier row drawn again.

    Two words with one embedding are one point in every space and tie in every score, and a
    zero embedding has no arrow: a lecture about telling tokens apart shows neither. The rows
    drawn again come from a stream of their own, so every other number stays as drawn.
    """
    again = np.random.default_rng([seed, 1])
    rows = embeddings.copy()
    seen: set[bytes] = set()
    for i in range(rows.shape[0]):
        row = rows[i]
        for _ in range(_REDRAWS):  # bounded: a d_model of 1 has only 20 rows to give
            if row.any() and row.tobytes() not in seen:
                break
            row = np.round(again.uniform(-1.0, 1.0, size=row.shape), 1) + 0.0
        rows[i] = row
        seen.add(row.tobytes())
    return rows


_REDRAWS = 1000


def toml_value(value: Any) -> str:
    r"""One value of a scenario file as TOML: a boolean, number, string or (nested) list.

    Strings are TOML basic strings with every quote, backslash and control character escaped,
    so :mod:`tomllib` reads back the same text whatever it holds; floats are written with
    ``repr`` and read back to the same float64.

    Examples
    --------
    >>> print(toml_value('say "hi"\tthere'))
    "say \"hi\"\u0009there"
    >>> print(toml_value([[0.1, -2.0], [3.0, 1e-300]]))
    [
      [0.1, -2.0],
      [3.0, 1e-300],
    ]
    >>> tomllib.loads("x = " + toml_value("a\\b\x7f"))["x"] == "a\\b\x7f"
    True
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        # TOML basic string: escape quote, backslash and every control character.
        out = []
        for ch in value:
            if ch in '"\\':
                out.append("\\" + ch)
            elif ord(ch) < 0x20 or ord(ch) == 0x7F:
                out.append(f"\\u{ord(ch):04X}")
            else:
                out.append(ch)
        return '"' + "".join(out) + '"'
    if isinstance(value, list):
        if value and isinstance(value[0], list):
            return "[\n" + "".join(f"  {toml_value(row)},\n" for row in value) + "]"
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def scenario_to_toml(scenario: Scenario) -> str:
    """The scenario as a scenario file that :func:`load_scenario` reads back exactly.

    A multi-head scenario's heads come last, as ``[[heads]]`` tables.

    Examples
    --------
    >>> from attention_math import preset
    >>> s = preset("dog-chased-ball")
    >>> back = scenario_from_mapping(tomllib.loads(scenario_to_toml(s)))
    >>> bool(np.all(back.w_value == s.w_value)), back.tokens == s.tokens, back.query
    (True, True, 4)
    >>> print(scenario_to_toml(preset("two-heads")).split("[[heads]]")[1].strip().splitlines()[0])
    w_query = [
    """
    data = scenario.to_dict()
    tables = data.pop("heads", [])
    model = data.pop("model", None)
    lines = [f"{key} = {toml_value(value)}\n" for key, value in data.items()]
    if model is not None:  # an inline table: model = {name = "minilm", sentence = "…", layer = 1, head = 1}
        lines.append("model = {" + ", ".join(f"{key} = {toml_value(value)}" for key, value in model.items()) + "}\n")
    for table in tables:
        lines.append("\n[[heads]]\n")
        lines.extend(f"{key} = {toml_value(value)}\n" for key, value in table.items())
    return "".join(lines)


def _key_name(key: object) -> str:
    """A key as a message names it: as written when plain, else quoted and escaped (one line).

    >>> print(_key_name("sentense"), _key_name("a\\nb"), _key_name("two words"))
    sentense 'a\\nb' 'two words'
    """
    name = str(key)
    plain = bool(name) and name.isprintable() and not any(ch.isspace() for ch in name)
    return name if plain else repr(name)


def _suggest(key: str, known: Sequence[str] = _ALL_KEYS) -> str:
    close = difflib.get_close_matches(key, known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def scenario_from_mapping(data: Mapping[str, Any]) -> Scenario:
    """Build a scenario from the keys of a scenario file (see docs/scenarios.md).

    Either ``tokens`` with ``embeddings``, ``w_query``, ``w_key`` and ``w_value``; or ``tokens``
    with ``embeddings``, ``w_out`` and ``heads``, a list of tables (``[[heads]]`` in TOML) each
    holding a head's ``w_query``, ``w_key`` and ``w_value``; or a ``sentence`` with optional
    ``seed``, ``d_model``, ``d_k``, ``d_v`` and ``heads`` (a number). Each takes ``title``,
    ``query`` (a number from 1 or a token's text), ``precision`` and ``scaled``.

    Examples
    --------
    >>> scenario_from_mapping({"sentence": "a b c", "seed": 3, "query": "b"}).query
    1
    >>> scenario_from_mapping({"sentense": "a b"})
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: sentense: unknown key (did you mean 'sentence'?)
    """
    for key in data:
        if key not in _ALL_KEYS:
            raise ScenarioError(f"{_key_name(key)}: unknown key{_suggest(str(key))}")
    if "model" in data:
        return _model_scenario(data)
    for key in ("layer", "head"):
        if key in data:
            raise ScenarioError(f"{key}: only allowed beside model = \"minilm\" (a real model's layer and head)")
    if "sentence" in data:
        return _sentence_scenario(data)
    for key in data:
        if key not in _EXPLICIT_KEYS:
            raise ScenarioError(f"{_key_name(key)}: only allowed together with 'sentence'")
    weights = _head_tables(data) if "heads" in data or "w_out" in data else _one_head(data)
    tokens = data["tokens"]
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise ScenarioError(f"tokens: expected a list of strings, got {tokens!r}")
    query = data.get("query")
    row = None
    if query is not None:
        if not all(isinstance(t, str) for t in tokens):
            raise ScenarioError("tokens: expected a list of strings")
        row = resolve_query(list(tokens), query)
    return Scenario(
        title=data.get("title", " ".join(str(t) for t in tokens)),
        tokens=tuple(tokens),
        embeddings=data["embeddings"],
        **weights,
        query=row,
        precision=data.get("precision"),
        scaled=data.get("scaled", True),
    )


def _model_scenario(data: Mapping[str, Any]) -> Scenario:
    """A file with a ``model`` table, or ``model = "minilm"`` beside ``sentence``, ``layer`` and ``head`` (as the
    CLI's options, 1-based): a real model's head on its sentence.

    >>> _model_scenario({"model": "gpt2", "sentence": "Hi."})
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: model: unknown model 'gpt2'; expected one of minilm
    >>> _model_scenario({"model": {"name": "minilm", "sentence": "Hi."}, "layer": 2})
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: layer: not allowed beside a model table (give it as model.layer)
    """
    flat = isinstance(data["model"], str)
    if not flat and not isinstance(data["model"], Mapping):
        _model_choice(data["model"])  # names what a model must be
    allowed = _MODEL_KEYS + _FLAT_MODEL_KEYS if flat else _MODEL_KEYS
    for key in data:
        if key not in allowed:
            if key in _FLAT_MODEL_KEYS:
                raise ScenarioError(f"{key}: not allowed beside a model table (give it as model.{key})")
            raise ScenarioError(
                f"{_key_name(key)}: not allowed beside 'model' (the model gives the tokens and numbers)"
            )
    table = {"name": data["model"], **{key: data[key] for key in _FLAT_MODEL_KEYS if key in data}} if flat \
        else data["model"]
    return Scenario.from_model(_model_choice(table), query=data.get("query"), title=data.get("title"),
                               precision=data.get("precision"))


def _last_word(tokens: Sequence[str]) -> int:
    """The last token with a letter or digit, [CLS] and [SEP] left out (the last token if none has one)."""
    words = [i for i, token in enumerate(tokens) if token not in ("[CLS]", "[SEP]") and any(c.isalnum() for c in token)]
    return words[-1] if words else len(tokens) - 1


def _model_trace(model: ModelChoice, x: FloatArray, weights: Sequence[FloatArray]) -> AttentionTrace:
    """The model's own trace of its head, once the inputs given are the model's own."""
    trace = model.head_of_model().trace
    given = (x, *weights)
    own = (trace.embeddings, trace.w_query, trace.w_key, trace.w_value)
    if not all(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(given, own, strict=True)):
        raise ScenarioError(
            "model: the embeddings and weights must be the model's own (make it with Scenario.from_model)"
        )
    return trace


def _one_head(data: Mapping[str, Any]) -> dict[str, Any]:
    """The three weight matrices of a one-head file, once every needed key is there."""
    missing = [key for key in ("tokens", *_MATRIX_FIELDS) if key not in data]
    if missing:
        raise ScenarioError(
            f"{missing[0]}: missing; a scenario needs tokens, embeddings, w_query, w_key and "
            "w_value (or [[heads]] tables and w_out, or a sentence)"
        )
    return {name: data[name] for name in _HEAD_KEYS}


def _head_tables(data: Mapping[str, Any]) -> dict[str, Any]:
    """The stacked weights and ``w_out`` of a file with ``[[heads]]`` tables."""
    for name in _HEAD_KEYS:
        if name in data:
            raise ScenarioError(f"{name}: not allowed beside [[heads]] tables (each head holds its own)")
    for name in ("tokens", "embeddings", "heads", "w_out"):
        if name not in data:
            raise ScenarioError(
                f"{name}: missing; a multi-head scenario needs tokens, embeddings, [[heads]] tables "
                "(each with w_query, w_key and w_value) and w_out"
            )
    tables = data["heads"]
    if not isinstance(tables, list) or not tables or not all(isinstance(t, Mapping) for t in tables):
        hint = " (a number of heads goes with 'sentence')" if isinstance(tables, int) else ""
        raise ScenarioError(f"heads: expected [[heads]] tables with w_query, w_key and w_value, got {tables!r}{hint}")
    for h, table in enumerate(tables, start=1):
        for key in table:
            if key not in _HEAD_KEYS:
                hint = _suggest(str(key), _HEAD_KEYS)
                raise ScenarioError(f"heads: table {h} has an unknown key {_key_name(key)}{hint}")
        for key in _HEAD_KEYS:
            if key not in table:
                raise ScenarioError(f"heads: table {h} has no {key}; each head needs w_query, w_key and w_value")
    return {**{name: [table[name] for table in tables] for name in _HEAD_KEYS}, "w_out": data["w_out"]}


def _sentence_scenario(data: Mapping[str, Any]) -> Scenario:
    """The scenario of a mapping with a ``sentence`` (its keys are known to be valid names)."""
    for key in data:
        if key not in _SENTENCE_KEYS:
            raise ScenarioError(f"{_key_name(key)}: not allowed with 'sentence' (the numbers are drawn)")
    scenario = Scenario.from_sentence(
        data["sentence"],
        seed=data.get("seed", 0),
        d_model=data.get("d_model", 3),
        d_k=data.get("d_k", 2),
        d_v=data.get("d_v"),
        heads=data.get("heads", 1),
        query=data.get("query"),
        title=data.get("title"),
        precision=data.get("precision"),
    )
    return replace(scenario, scaled=data.get("scaled", True))


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario from a TOML file (UTF-8).

    Raises
    ------
    ScenarioError
        When the file is missing, unreadable, a directory, not UTF-8 or not valid TOML (with
        line and column), or describes an invalid scenario.
    """
    source = Path(path)
    try:
        raw = source.read_bytes()
    except FileNotFoundError:
        raise ScenarioError(f"scenario: no such file: {source}") from None
    except IsADirectoryError:
        raise ScenarioError(f"scenario: expected a TOML file, got a directory: {source}") from None
    except OSError as error:
        raise ScenarioError(f"scenario: cannot read {source}: {error.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ScenarioError(
            f"scenario: {source} is not UTF-8 text (byte {error.start + 1})"
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        if message.endswith("(at end of document)"):  # tomllib gives no line and column for these
            lines = text.split("\n")
            message = message[: -len(")")] + f", line {len(lines)}, column {len(lines[-1]) + 1})"
        raise ScenarioError(f"scenario: invalid TOML in {source}: {message}") from None
    return scenario_from_mapping(data)
