"""One colour per role in every scene (Okabe–Ito, colour-blind safe), always with a label too."""

from __future__ import annotations

__all__ = [
    "BACKGROUND",
    "CONTEXT",
    "DIM",
    "EMBEDDING",
    "FAINT",
    "HIGHLIGHT",
    "INK",
    "KEY",
    "MUTED",
    "QUERY",
    "VALUE",
    "WEIGHT",
]

QUERY = "#E69F00"  # orange: queries, q_i, W_Q
KEY = "#56B4E9"  # sky blue: keys, k_j, W_K
VALUE = "#009E73"  # bluish green: values, v_j, W_V
WEIGHT = "#F0E442"  # yellow: attention weights and scores turned into weights
HIGHLIGHT = "#D55E00"  # vermillion: "look here" (a glow, a mask)
EMBEDDING = "#CC79A7"  # reddish purple: input embeddings X
CONTEXT = "#FFFFFF"  # white: the context vector z
INK = "#ECEFF4"  # ordinary text
MUTED = "#9AA3AF"  # labels and shapes of matrices
BACKGROUND = "#0F1115"

DIM = 0.3  # opacity of what is not being explained
FAINT = 0.12  # opacity of what only keeps the viewer's bearings (a mask after its beat)
