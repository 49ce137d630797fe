"""The lecture's scenarios, by name.

The lecture's own have one-decimal inputs, so each product can be checked by hand;
``your-journey`` is the example of Raschka's book, with the 4-decimal weights PyTorch prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ._errors import ScenarioError
from .scenario import Scenario
from .training import train_attention

__all__ = ["DEFAULT_PRESET", "PRESETS", "preset"]

_IDENTITY_3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]

RAW_DOT_PRODUCT = Scenario(
    title="Why raw dot products fail",
    tokens=("it", "dog", "ball"),
    embeddings=[[0.5, 0.5, 0.1], [0.9, 0.1, 0.1], [0.1, 0.9, 0.1]],
    w_query=_IDENTITY_3,
    w_key=[[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0]],
    w_value=_IDENTITY_3,
    query=0,
)
"""Part 1 of the lecture: "it" ties with "dog" and "ball" until the keys are projected.

The raw dot products ``X Xᵀ`` give it·dog = it·ball = 0.51. Only the keys are transformed,
by ``W_K = diag(1, 2, 1)`` (``W_Q`` and ``W_V`` are the identity): dog → (0.9, 0.2, 0.1),
ball → (0.1, 1.8, 0.1), and the scores of "it" become 0.56 and 0.96.
"""

DOG_CHASED_BALL = Scenario(
    title="The dog chased the ball",
    tokens=("The", "dog", "chased", "the", "ball"),
    embeddings=[
        [0.2, 0.7, 0.8],
        [0.2, 0.9, 0.6],
        [0.2, 0.8, 1.0],
        [0.0, 0.2, 1.0],
        [0.7, 0.6, 0.9],
    ],
    w_query=[[0.7, 0.8], [0.1, 0.7], [0.2, 0.8]],
    w_key=[[0.8, 0.6], [0.0, 0.9], [0.7, 0.8]],
    w_value=[[-0.8, -1.0], [-1.0, -0.2], [0.7, 1.0]],
    query=4,
)
"""Part 2 of the lecture, the default: the context vector for "ball" (token 5).

It reproduces the slide: q5·k1, q5·k2, q5·k3 = 2.89, 2.82, 3.42 and, after ÷√2 and a softmax,
the weights 0.17, 0.16, 0.25, 0.10, 0.31. The numbers were found, not tuned by hand:
``tools/find_default_preset.py`` draws one-decimal ``W_Q``, ``W_K`` and the embedding of
"ball" from a seeded generator, scans every one-decimal embedding in [0, 1]³ for rows whose
score rounds to each slide value (computed exactly in integers), keeps the first set whose five
weights round to the slide's, and then picks a ``W_V`` whose five values fan out over the upper
half of the 2-d value plane so the weighted sum can be drawn tip to tail.
"""

SOFTMAX_SATURATION = Scenario(
    title="Why we divide by the square root of d_k",
    tokens=("small", "large"),
    embeddings=[[1.0, 0.0], [0.0, 1.0]],
    w_query=[[5.0, 6.0], [500.0, 505.0]],
    w_key=[[1.0, 0.0], [0.0, 1.0]],
    w_value=[[1.0, 0.0], [0.0, 1.0]],
    query=1,
    precision=3,
    scaled=False,
)
"""Part 3 of the lecture: unscaled, large scores saturate the softmax.

``X`` and ``W_K`` are the identity, so the score rows are the rows of ``W_Q``: the query
"small" scores (5, 6) and gets weights (0.27, 0.73); the query "large" scores (500, 505) and
gets (0.007, 0.993). Scaling is off, to show the softmax of the raw scores.
"""

YOUR_JOURNEY = Scenario(
    title="Your journey starts with one step",
    tokens=("Your", "journey", "starts", "with", "one", "step"),
    embeddings=[
        [0.43, 0.15, 0.89],
        [0.55, 0.87, 0.66],
        [0.57, 0.85, 0.64],
        [0.22, 0.58, 0.33],
        [0.77, 0.25, 0.10],
        [0.05, 0.80, 0.55],
    ],
    w_query=[[0.2961, 0.5166], [0.2517, 0.6886], [0.0740, 0.8665]],
    w_key=[[0.1366, 0.1025], [0.1841, 0.7264], [0.3153, 0.6871]],
    w_value=[[0.0756, 0.1966], [0.3164, 0.4017], [0.1186, 0.8274]],
    query=1,
)
"""Sebastian Raschka, *Build a Large Language Model (From Scratch)*, chapter 3: "journey" (token 2).

The six 3-d embeddings are the book's. ``W_Q``, ``W_K`` and ``W_V`` (3 × 2) are what the book
makes and PyTorch prints at 4 decimals: ``torch.manual_seed(123)``, then
``torch.nn.Parameter(torch.rand(3, 2))`` three times, for W_query, W_key and W_value in that
order. They were computed here with torch 2.13.0 (CPU) and rounded to 4 decimals (the values
above are exactly those roundings). The weights of "journey", ``softmax(q2 · k_j / √2)``, are
the book's 0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820 and its context vector
(0.3061, 0.8210); from the rounded weights, ``q2`` comes out 0.4307 (the book, from float32
weights, prints 0.4306) and two scores differ from the book's in the fourth decimal.

The inputs' products have 6 decimals, so at the precision shown (4) the scenario is
:attr:`~attention_math.Scenario.rounded`.
"""

TWO_HEADS = Scenario(
    title="The dog chased the ball (two heads)",
    tokens=DOG_CHASED_BALL.tokens,
    embeddings=DOG_CHASED_BALL.embeddings,
    w_query=[
        [[0.7, -0.3], [0.8, 0.5], [0.9, -0.3]],
        [[0.2, 0.9], [-0.6, 0.8], [-0.7, 0.6]],
    ],
    w_key=[
        [[-0.3, 0.5], [0.9, -0.6], [-0.3, 0.8]],
        [[-0.2, -1.0], [-0.6, 0.8], [-1.0, 0.8]],
    ],
    w_value=[
        [[0.7, -0.6], [-0.9, -0.4], [-0.5, 0.8]],
        [[-0.8, -0.1], [0.7, -0.4], [-0.3, -0.5]],
    ],
    w_out=[[0.4, 0.3, -0.3], [1.0, -0.1, -0.6], [0.7, -0.7, 0.8], [0.2, -0.8, -1.0]],
    query=4,
)
"""Multi-head attention: the sentence of ``dog-chased-ball`` through two heads (d_k = d_v = 2).

For "ball" (token 5), head 1 attends most to "dog" (weights 0.22, 0.30, 0.22, 0.12, 0.15) and
head 2 most to "chased" (0.20, 0.19, 0.31, 0.18, 0.12): two heads, two relations read from the
same embeddings. ``W_O`` (4 × 3) takes the heads' z side by side back to 3 dimensions. The
numbers were found, not tuned by hand: ``tools/find_two_heads_preset.py`` draws one-decimal
``W_Q`` and ``W_K`` from a seeded generator until one pair puts "dog" on top and another
"chased", each by a clear margin (the top weight at least 0.3 and 0.06 above the rest), then
draws the values and ``W_O``.
"""

MASKED_DOG = Scenario(
    title="The dog chased the ball (masked)",
    tokens=DOG_CHASED_BALL.tokens,
    embeddings=DOG_CHASED_BALL.embeddings,
    w_query=DOG_CHASED_BALL.w_query,
    w_key=DOG_CHASED_BALL.w_key,
    w_value=DOG_CHASED_BALL.w_value,
    query=2,
)
"""Masked (causal) self-attention: the numbers of ``dog-chased-ball``, the query "chased" (token 3).

A middle token, because the mask changes its row: "ball", the last token, could already see
every token before it, so its weights are the same masked or not. "chased" loses "the" and
"ball": unmasked its weights are 0.18, 0.18, 0.25, 0.12, 0.28; masked they are 0.30, 0.29,
0.41, 0, 0 (its three past weights of the full softmax add up to 0.60, and each divided by that
sum gives the same). Its context vector moves from (−0.32, 0.41) to (−0.38, 0.46).
"""

LEARNED = train_attention(seed=0).scenario()
"""Where W comes from: the ``W_Q`` and ``W_K`` that gradient descent learned (:func:`train_attention`, seed 0,
its default 60 steps at learning rate 1.0), for the sentence's four words that matter, "dog, ball, it, it".

The query is the second "it" (the ball: it was not caught); its weights are 0.00, 0.97, 0.01, 0.03. The
learned numbers have many decimals, so the scenario shows 2 and says it is rounded.

>>> LEARNED.query_token, LEARNED.query_step().weights.round(2)
('it', array([0.  , 0.97, 0.01, 0.03]))
"""


ROPE_DOG = Scenario(
    title="The dog chased the ball (RoPE)",
    tokens=DOG_CHASED_BALL.tokens,
    embeddings=DOG_CHASED_BALL.embeddings,
    w_query=[[0.7, 0.8, 0.5, -0.5], [0.1, 0.7, -0.3, 0.9], [0.2, 0.8, 0.7, 0.6]],
    w_key=[[0.8, 0.6, -0.4, -1.0], [0.0, 0.9, -0.4, 0.4], [0.7, 0.8, 1.0, 0.8]],
    w_value=DOG_CHASED_BALL.w_value,
    query=4,
)
"""Rotary position embeddings (lecture 10): ``dog-chased-ball`` with ``d_k = 4``, two pairs to turn.

RoPE needs an even ``d_k``; with 4 there is a fast pair (dimensions 1 and 2, θ = 1 radian per
position) and a slow one (3 and 4, θ = 0.01). The first two columns of ``W_Q`` and ``W_K`` are
``dog-chased-ball``'s; the last two were drawn with one decimal from [−1, 1] by
``numpy.random.default_rng(10)`` (``round(rng.uniform(-1, 1, (3, 2)), 1)`` for ``W_Q``'s, then for
``W_K``'s; the 229th such draw) as the first whose weights for "ball" have a different top key with
RoPE than without, each by at least 0.04, and whose scaled scores and weights, with RoPE and without, all
stand at least 0.00005 from a rounding boundary of the 2 decimals shown.

Without positions "ball" (token 5) spreads its weight evenly, 0.18, 0.15, 0.27, 0.16, 0.23, most on
"chased"; with RoPE (positions 0 to 4, base 10000) its weights are 0.05, 0.03, 0.06, 0.23, 0.64: most
on itself and its neighbour "the", whose keys turn least away from its query. Its scaled scores go
from 1.88, 1.71, 2.28, 1.78, 2.11 to −0.42, −1.09, −0.25, 1.08, 2.11 (its own score is kept: a query
and a key at one position turn by one angle).
"""


LATENT_DOG = Scenario(
    title="The dog chased the ball (latent attention)",
    tokens=DOG_CHASED_BALL.tokens,
    embeddings=DOG_CHASED_BALL.embeddings,
    w_query=DOG_CHASED_BALL.w_query,
    w_key=DOG_CHASED_BALL.w_key,
    w_value=DOG_CHASED_BALL.w_value,
    query=4,
)
"""Multi-head latent attention (lecture 12, DeepSeek-V2's MLA): ``dog-chased-ball``'s sentence and embeddings,
the query "ball" (token 5).

The lecture's own weights are not the scenario's ``W_Q``, ``W_K``, ``W_V`` (kept for the other lectures' scenes)
but drawn from a seed for the embeddings' width (:func:`~attention_math.latent_weights`, the lecture's
``LATENT_SETUP``): its latent ``c_KV`` has 2 numbers a token, each of its 2 heads a 2-number content key and
value, and one 2-number RoPE key for both heads. A decoder keeps 4 numbers a token where multi-head attention
with these heads would keep 8.
"""


_SHARED_KEYS = ([[-0.2, 0.8], [1.0, -0.4], [-0.8, 0.2]], [[-0.8, 0.8], [0.8, 0.9], [0.8, 0.4]])
_SHARED_VALUES = ([[0.7, -0.6], [-0.9, -0.4], [-0.5, 0.8]], [[-0.8, -0.1], [0.7, -0.4], [-0.3, -0.5]])

GROUPED_DOG = Scenario(
    title="The dog chased the ball (grouped-query)",
    tokens=DOG_CHASED_BALL.tokens,
    embeddings=DOG_CHASED_BALL.embeddings,
    w_query=[
        [[0.6, -0.1], [0.5, 0.0], [0.8, -0.9]],
        [[0.0, 0.6], [0.7, 1.0], [-0.6, 1.0]],
        [[-0.9, -0.9], [-0.6, -1.0], [0.2, -0.7]],
        [[-0.6, 0.9], [-0.3, 0.8], [-0.8, -0.5]],
    ],
    # heads 1 and 2 share one W_K and W_V, heads 3 and 4 another: two key/value heads
    w_key=[_SHARED_KEYS[0], _SHARED_KEYS[0], _SHARED_KEYS[1], _SHARED_KEYS[1]],
    w_value=[_SHARED_VALUES[0], _SHARED_VALUES[0], _SHARED_VALUES[1], _SHARED_VALUES[1]],
    w_out=[[0.5, -0.5, 1.0], [-0.1, 0.0, 0.0], [0.2, 0.1, 0.0], [1.0, 0.6, 0.6],
           [0.4, 0.3, -0.3], [1.0, -0.1, -0.6], [0.7, -0.7, 0.8], [0.2, -0.8, -1.0]],
    query=4,
)
"""Grouped-query attention and the KV cache: ``dog-chased-ball`` through four query heads that share two
key/value heads (d_k = d_v = 2), heads 1 and 2 one ``W_K`` and ``W_V``, heads 3 and 4 the other.

The shared heads still attend differently: for "ball" (token 5), head 1 attends most to "dog" (weights
0.22, 0.34, 0.21, 0.11, 0.12) and head 2, over the very same keys, most to "ball" itself (0.17, 0.14,
0.17, 0.20, 0.32); in the other group head 3 most to "the" (0.18, 0.16, 0.13, 0.38, 0.15) and head 4 to
"ball" (0.18, 0.19, 0.16, 0.15, 0.31). A cache keeps 2 keys and 2 values per token, not 4. ``W_O``
(8 × 3) takes the four heads' z back to 3 dimensions. The numbers were found, not tuned by hand:
``tools/find_grouped_preset.py`` draws each group's one-decimal ``W_K`` from a seeded generator, then
``W_Q`` until two make "ball" attend clearly (top weight at least 0.3 and 0.06 above the rest) to two
different tokens over that ``W_K``; then each group's ``W_V`` and ``W_O``.
"""

PRESETS: Mapping[str, Scenario] = MappingProxyType(
    {
        "dog-chased-ball": DOG_CHASED_BALL,
        "grouped-dog": GROUPED_DOG,
        "latent-dog": LATENT_DOG,
        "learned": LEARNED,
        "masked-dog": MASKED_DOG,
        "raw-dot-product": RAW_DOT_PRODUCT,
        "rope-dog": ROPE_DOG,
        "softmax-saturation": SOFTMAX_SATURATION,
        "two-heads": TWO_HEADS,
        "your-journey": YOUR_JOURNEY,
    }
)
"""Every preset by name; read-only."""

DEFAULT_PRESET = "dog-chased-ball"
"""The preset used when nothing else is asked for."""


def preset(name: str) -> Scenario:
    """The preset scenario called ``name``.

    Examples
    --------
    >>> preset("raw-dot-product").trace().scores[0].round(2)
    array([0.76, 0.56, 0.96])
    """
    try:
        return PRESETS[name]
    except (KeyError, TypeError):
        known = ", ".join(sorted(PRESETS))
        raise ScenarioError(f"preset: unknown name {name!r}; expected one of {known}") from None
