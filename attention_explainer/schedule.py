"""In which order the bundle hands its renders to its threads, so that the last one ends soonest.

The bundle's threads each take the next render of one queue as they come free. Handing them the
longest first (LPT) can leave one core alone at the end with a long scene: measured at -qh, the
lecture's nine scenes of 24 to 41 s ended 23 s apart (one core idle for a sixth of the render),
where a split of them into two lists of 133 s each existed. For two threads and a dozen renders
or fewer, every split is tried (a few hundred), each turned into the queue that gives each thread
its own list, longest first, and the queue that ends soonest by the expected costs is kept (LPT's
own among them, so never worse by them); for more threads or renders, LPT.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .plan import BundleSettings, SceneSpec

__all__ = ["expected_cost", "finish_time", "start_order"]

MOST_SPLIT = 12
"""Up to this many renders, two threads try every split (2^11 queues at most)."""


def finish_time(order: Sequence[int], costs: Sequence[float], workers: int) -> float:
    """When the last render of ``order`` ends, each of ``workers`` threads taking the next as it comes free.

    >>> finish_time([0, 1, 2], [3.0, 2.0, 2.0], 2)
    4.0
    """
    clocks = [0.0] * max(1, workers)
    for i in order:
        free = clocks.index(min(clocks))
        clocks[free] += costs[i]
    return max(clocks)


def start_order(costs: Sequence[float], workers: int) -> list[int]:
    """The queue (indices of ``costs``) whose renders end soonest by their expected costs.

    >>> costs = [41, 40, 28, 28, 27.5, 26.5, 26, 25, 24]
    >>> finish_time(sorted(range(9), key=lambda i: -costs[i]), costs, 2)  # longest first
    144.5
    >>> order = start_order(costs, 2)
    >>> order, finish_time(order, costs, 2)
    ([0, 3, 4, 1, 5, 2, 6, 7, 8], 133.0)
    """
    longest_first = sorted(range(len(costs)), key=lambda i: -costs[i])
    if workers != 2 or not 2 < len(costs) <= MOST_SPLIT:
        return longest_first
    best, best_time = longest_first, finish_time(longest_first, costs, workers)
    first, *rest = longest_first  # the longest on the first list: a split and its mirror are one
    for mask in range(1 << len(rest)):
        mine = [first, *(i for bit, i in enumerate(rest) if mask >> bit & 1)]
        theirs = [i for bit, i in enumerate(rest) if not mask >> bit & 1]
        order = _queue([mine, theirs], costs)
        ends = finish_time(order, costs, workers)
        if ends < best_time - 1e-9:
            best, best_time = order, ends
    return best


def _queue(lists: Sequence[list[int]], costs: Sequence[float]) -> list[int]:
    """The queue in which each thread, as it comes free, takes the next of its own list (each longest
    first; a thread whose list is done takes from the other)."""
    lists = [sorted(own, key=lambda i: -costs[i]) for own in lists]
    clocks, order = [0.0] * len(lists), []
    while any(lists):
        free = clocks.index(min(clocks))
        source = lists[free] or next(own for own in lists if own)
        order.append(source.pop(0))
        clocks[free] += costs[order[-1]]
    return order


def expected_cost(spec: SceneSpec, old_scenes: dict[str, Any], settings: BundleSettings) -> float:
    """Seconds the scene's render will take: its last render at this quality, else a rough
    order measured here (at -ql MatrixForm takes 2.4 times Scores, at -qh 1.5 times)."""
    old = old_scenes.get(spec.name, {})
    if isinstance(old.get("render_s"), (int, float)) and old.get("quality") == settings.quality:
        return float(old["render_s"])
    from scenes.registry import render_cost

    return render_cost(spec.name, settings.quality)
