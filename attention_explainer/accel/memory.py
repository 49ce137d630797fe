"""Memory: freed frames kept by glibc's ``malloc`` for the next frame.

A frame is a few megabytes: each copy of one (the background, the frame for the encoder, its
conversion) was mapped fresh from the kernel and given back when freed, a page fault every
4 KiB, a tenth of a render's CPU in the kernel. Here freed memory is kept for the next frame
(``mallopt``: blocks up to 32 MiB come from the heap, which is not trimmed below 512 MiB).
:func:`attention_explainer.accel.disable` leaves this as it is: it changes where memory comes
from, not what is drawn.
"""

from __future__ import annotations

from .patching import Step

__all__ = ["patches"]


def _keep_freed_memory() -> None:
    """glibc's malloc keeps freed blocks up to 32 MiB for reuse instead of giving them back."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt if name else None
    except (OSError, AttributeError):  # not glibc: its own allocator, as it is
        return
    if mallopt is not None:
        m_trim_threshold, m_mmap_threshold = -1, -3  # malloc.h
        mallopt(m_mmap_threshold, 32 << 20)  # glibc's largest
        mallopt(m_trim_threshold, 512 << 20)


def _left_as_it_is() -> None:
    """Undoing changes nothing: the allocator's thresholds stay (what is drawn never depended on them)."""


def patches() -> list[Step]:
    return [Step("glibc keeps freed memory", _keep_freed_memory, _left_as_it_is)]
