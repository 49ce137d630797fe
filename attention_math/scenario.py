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
from typing import Any

import numpy as np
import numpy.typing as npt

from ._core import AttentionTrace, FloatArray, QueryStep, self_attention
from ._errors import ScenarioError

__all__ = [
    "MAX_RANDOM_SIZE",
    "Scenario",
    "load_scenario",
    "resolve_query",
    "scenario_from_mapping",
    "scenario_to_toml",
]

MAX_RANDOM_SIZE = 64
"""Largest ``d_model`` and ``d_k`` a sentence scenario may ask for."""

_MAX_PRECISION = 6
_MATRIX_FIELDS = ("embeddings", "w_query", "w_key", "w_value")
_EXPLICIT_KEYS = ("title", "tokens", *_MATRIX_FIELDS, "query", "precision", "scaled")
_SENTENCE_KEYS = ("title", "sentence", "seed", "d_model", "d_k", "query", "precision", "scaled")
_ALL_KEYS = tuple(dict.fromkeys(_EXPLICIT_KEYS + _SENTENCE_KEYS))


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
    """One explainer: tokens, their embeddings, the three weight matrices and the query.

    Parameters
    ----------
    title
        Shown on screen and in file names (as a slug).
    tokens
        One string per row of ``embeddings``, shown literally.
    embeddings
        ``X``, ``n × d_in``.
    w_query, w_key
        ``d_in × d_k``.
    w_value
        ``d_in × d_v``.
    query
        The 0-based row of the token to explain; ``None`` means the last token. (Files and
        the command line count from 1: see :func:`resolve_query`.)
    precision
        Decimals shown in walkthroughs and handouts, 0 to 6 (the scenes draw 0 to 3:
        ``scenes.base.SCENE_LIMITS``).
    scaled
        Divide scores by ``√d_k`` (turned off only to show softmax saturation).

    Raises
    ------
    ScenarioError
        Naming the field and what was expected, for any invalid input.

    Examples
    --------
    >>> s = Scenario("toy", ["a", "b"], [[1, 0], [0, 1]], [[1], [0]], [[1], [1]], [[1], [2]])
    >>> s.query, s.query_token, s.d_k
    (1, 'b', 1)
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
    _trace: AttentionTrace = field(init=False, repr=False, compare=False)

    def __init__(
        self,
        title: str,
        tokens: Sequence[str],
        embeddings: npt.ArrayLike,
        w_query: npt.ArrayLike,
        w_key: npt.ArrayLike,
        w_value: npt.ArrayLike,
        query: int | None = None,
        precision: int = 2,
        scaled: bool = True,
    ) -> None:
        if not isinstance(title, str):
            raise ScenarioError(f"title: expected text, got {title!r}")
        if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
            raise ScenarioError(f"tokens: expected a list of strings, got {tokens!r}")
        checked_tokens = tuple(tokens)
        for position, token in enumerate(checked_tokens, start=1):
            if not isinstance(token, str) or not token.strip():
                raise ScenarioError(
                    f"tokens: expected non-blank text for token {position}, got {token!r}"
                )
        given = {"embeddings": embeddings, "w_query": w_query, "w_key": w_key, "w_value": w_value}
        matrices = {name: _matrix(name, value) for name, value in given.items()}
        n = matrices["embeddings"].shape[0]
        if len(checked_tokens) != n:
            raise ScenarioError(
                f"tokens: expected one token per row of embeddings ({n}), got {len(checked_tokens)}"
            )
        row = n - 1 if query is None else query
        if isinstance(row, (bool, np.bool_)) or not isinstance(row, (int, np.integer)):
            raise ScenarioError(f"query: expected a 0-based token index, got {row!r}")
        if not 0 <= row < n:
            raise ScenarioError(f"query: expected a 0-based token index from 0 to {n - 1}, got {row}")
        if not isinstance(scaled, (bool, np.bool_)):
            raise ScenarioError(f"scaled: expected true or false, got {scaled!r}")
        # self_attention checks the shapes against each other and catches overflow.
        trace = self_attention(
            matrices["embeddings"], matrices["w_query"], matrices["w_key"], matrices["w_value"],
            scaled=bool(scaled),
        )
        set_ = object.__setattr__  # the dataclass is frozen; this is its constructor
        set_(self, "title", title)
        set_(self, "tokens", checked_tokens)
        for name, matrix in matrices.items():
            set_(self, name, matrix)
        set_(self, "query", int(row))
        set_(self, "precision", _whole_number("precision", precision, 0, _MAX_PRECISION))
        set_(self, "scaled", bool(scaled))
        set_(self, "_trace", trace)

    @classmethod
    def from_sentence(
        cls,
        sentence: str,
        *,
        seed: int = 0,
        d_model: int = 3,
        d_k: int = 2,
        query: int | str | None = None,
        title: str | None = None,
        precision: int = 2,
    ) -> Scenario:
        """A scenario whose tokens are the sentence's words and whose numbers are drawn.

        Tokens are the whitespace-separated words, kept exactly as typed. Embeddings
        (``n × d_model``) and the three weight matrices (``d_model × d_k``) are drawn
        uniformly from [-1, 1] by ``numpy.random.default_rng(seed)`` and rounded to one
        decimal, so every product can be checked by hand; the same seed gives the same numbers.

        Parameters
        ----------
        sentence
            The text to tokenize.
        seed
            Seed of the random generator (0 or more).
        d_model, d_k
            Embedding size and query/key/value size, 1 to ``MAX_RANDOM_SIZE``.
        query
            A token number counted from 1, or a token's text; default the last token.
        title
            Default: the sentence.
        precision
            Decimals shown.

        Examples
        --------
        >>> s = Scenario.from_sentence("the cat sat", seed=1)
        >>> s.tokens, s.embeddings.shape, s.w_value.shape
        (('the', 'cat', 'sat'), (3, 3), (3, 2))
        >>> bool(np.all(s.embeddings == Scenario.from_sentence("the cat sat", seed=1).embeddings))
        True
        """
        if not isinstance(sentence, str) or not sentence.split():
            raise ScenarioError(f"sentence: expected text with at least one word, got {sentence!r}")
        seed = _whole_number("seed", seed, 0, 2**63 - 1)
        d_model = _whole_number("d_model", d_model, 1, MAX_RANDOM_SIZE)
        d_k = _whole_number("d_k", d_k, 1, MAX_RANDOM_SIZE)
        tokens = tuple(sentence.split())
        embeddings, w_query, w_key, w_value = _drawn_matrices(len(tokens), d_model, d_k, seed)
        return cls(
            title=" ".join(tokens) if title is None else title,
            tokens=tokens,
            embeddings=embeddings,
            w_query=w_query,
            w_key=w_key,
            w_value=w_value,
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
        """Query/key size (columns of ``W_Q`` and ``W_K``)."""
        return int(self.w_key.shape[1])

    @property
    def d_v(self) -> int:
        """Value size (columns of ``W_V``)."""
        return int(self.w_value.shape[1])

    @property
    def query_token(self) -> str:
        """The text of the query token."""
        return self.tokens[self.query]

    def trace(self, *, causal: bool = False) -> AttentionTrace:
        """Every intermediate of attention for this scenario (masked when ``causal``)."""
        if not causal:
            return self._trace
        return self_attention(
            self.embeddings, self.w_query, self.w_key, self.w_value,
            scaled=self.scaled, causal=True,
        )

    def query_step(self) -> QueryStep:
        """The term-by-term arithmetic of the scenario's query."""
        return self._trace.query_step(self.query)

    def simplified(self) -> Scenario:
        """The same tokens and embeddings with ``W_Q = W_K = W_V = I`` (``d_in × d_in``), unscaled.

        The simplified self-attention of the previous lecture, where ``X`` plays every role:
        the scores are the raw dot products ``X Xᵀ``, the weights ``softmax(X Xᵀ)`` (no
        ``√d_k``: that lecture had no scaling) and the context vectors ``weights @ X``. Title,
        query and precision are kept.

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
        return replace(self, w_query=identity, w_key=identity, w_value=identity, scaled=False)

    def with_query(self, spec: int | str) -> Scenario:
        """The same scenario explaining another token (number from 1, or its text)."""
        return replace(self, query=resolve_query(self.tokens, spec))

    def to_dict(self) -> dict[str, Any]:
        """Plain lists and numbers, as in a scenario file (``query`` counted from 1)."""
        return {
            "title": self.title,
            "tokens": list(self.tokens),
            **{name: getattr(self, name).tolist() for name in _MATRIX_FIELDS},
            "query": self.query + 1,
            "precision": self.precision,
            "scaled": self.scaled,
        }


def _drawn_matrices(n: int, d_model: int, d_k: int, seed: int) -> list[FloatArray]:
    """``X``, ``W_Q``, ``W_K``, ``W_V`` drawn in that order, uniform in [-1, 1], one decimal."""
    rng = np.random.default_rng(seed)
    shapes = ((n, d_model), (d_model, d_k), (d_model, d_k), (d_model, d_k))
    # + 0.0 turns -0.0 into 0.0, which prints more kindly.
    return [np.round(rng.uniform(-1.0, 1.0, size=shape), 1) + 0.0 for shape in shapes]


def _toml_value(value: Any) -> str:
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
            return "[\n" + "".join(f"  {_toml_value(row)},\n" for row in value) + "]"
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def scenario_to_toml(scenario: Scenario) -> str:
    """The scenario as a scenario file that :func:`load_scenario` reads back exactly.

    Examples
    --------
    >>> from attention_math import preset
    >>> s = preset("dog-chased-ball")
    >>> back = scenario_from_mapping(tomllib.loads(scenario_to_toml(s)))
    >>> bool(np.all(back.w_value == s.w_value)), back.tokens == s.tokens, back.query
    (True, True, 4)
    """
    return "".join(f"{key} = {_toml_value(value)}\n" for key, value in scenario.to_dict().items())


def _key_name(key: object) -> str:
    """A key as a message names it: as written when plain, else quoted and escaped (one line).

    >>> print(_key_name("sentense"), _key_name("a\\nb"), _key_name("two words"))
    sentense 'a\\nb' 'two words'
    """
    name = str(key)
    plain = bool(name) and name.isprintable() and not any(ch.isspace() for ch in name)
    return name if plain else repr(name)


def _suggest(key: str) -> str:
    close = difflib.get_close_matches(key, _ALL_KEYS, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def scenario_from_mapping(data: Mapping[str, Any]) -> Scenario:
    """Build a scenario from the keys of a scenario file (see README, "Scenario files").

    Either ``tokens`` with ``embeddings``, ``w_query``, ``w_key`` and ``w_value``, or a
    ``sentence`` with optional ``seed``, ``d_model`` and ``d_k``. Both take ``title``,
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
    if "sentence" in data:
        return _sentence_scenario(data)
    for key in data:
        if key not in _EXPLICIT_KEYS:
            raise ScenarioError(f"{_key_name(key)}: only allowed together with 'sentence'")
    missing = [key for key in ("tokens", *_MATRIX_FIELDS) if key not in data]
    if missing:
        raise ScenarioError(
            f"{missing[0]}: missing; a scenario needs tokens, embeddings, w_query, w_key and "
            "w_value (or a sentence)"
        )
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
        **{name: data[name] for name in _MATRIX_FIELDS},
        query=row,
        precision=data.get("precision", 2),
        scaled=data.get("scaled", True),
    )


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
        query=data.get("query"),
        title=data.get("title"),
        precision=data.get("precision", 2),
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
