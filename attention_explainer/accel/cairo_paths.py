"""Cairo paths: ``Camera.set_cairo_context_path`` handing Cairo a glyph's whole path in one call.

manim hands a glyph's outline to Cairo curve by curve, after a dozen small numpy calls that find
its subpaths, for each glyph of each frame, though most glyphs keep their points from frame to
frame (a fade, a colour change, a moving neighbour). Here the path is written once as Cairo's
own path data (the same moves, curves and closes, the same doubles, split and closed by manim's
rule) and handed to ``cairo_append_path``, which makes it with the very calls manim's make one
by one; the data are kept by the points' bytes (a bounded table), so a glyph that did not change
costs one call, wherever the camera is. New points are laid out by the pattern of subpaths they
share with earlier ones (a moving glyph keeps its pattern: half the time). Where pycairo's
context cannot be reached that way (checked first), the same data are made into the path with
pycairo's calls, one each, and kept by ``copy_path``, keyed by the context's matrix too.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from .patching import Patch

__all__ = ["patches"]

_PATHS_KEPT = 20_000  # about 30 MB at most; cleared whole when full (a scene's glyphs, many times over)


def _header(kind: int, length: int) -> float:
    """A ``cairo_path_data_t`` header (``{int type; int length}``) as the double with its bytes."""
    return float(struct.unpack("d", struct.pack("ii", kind, length))[0])


_MOVE_TO, _CURVE_TO, _CLOSE_PATH = _header(0, 2), _header(2, 4), _header(3, 1)


def _path_data(points: Any, tolerance: float) -> Any:
    """The path manim's ``set_cairo_context_path`` makes of finite ``points`` (cubic curves, as
    Cairo's renderer always has them), as Cairo's
    path data (``cairo_path_data_t``, two doubles an element: a header, or a point): a move to
    each subpath's start, its curves, a close where it ends where it began.

    Subpaths split and close by ``VMobject.consider_points_equals_2d``: a curve's end and the
    next one's start exactly equal join (one numpy comparison for all), and only the pairs that
    differ are compared within the tolerance, in plain floats. Where the subpaths are, and which
    close, is kept by its pattern (a glyph keeps its pattern as it moves): the data is then its
    headers copied and the points put in by one gather, at less than half the time of laying
    it out again.
    """
    n = len(points)
    xy = points[:, :2]
    same = xy[3 : n - 1 : 4] == xy[4:n:4]  # each curve's end and the next one's start, for k in range(4, n, 4)
    joined = same[:, 0] & same[:, 1]
    if not joined.all():
        for k in np.flatnonzero(~joined).tolist():
            if _near(xy[4 * k + 3].tolist(), xy[4 * k + 4].tolist(), tolerance):
                joined[k] = True
    key = (n, joined.tobytes())
    subpaths = _SUBPATHS.get(key)
    if subpaths is None:
        if len(_SUBPATHS) >= _PATTERNS_KEPT:
            _SUBPATHS.clear()
        bounds = np.concatenate(([0], np.flatnonzero(~joined) * 4 + 4, [n]))
        first, end = bounds[:-1], bounds[1:]
        kept = end - first >= 4
        subpaths = _SUBPATHS[key] = (first[kept].tolist(), (end[kept] - 1).tolist(), {})
    firsts, lasts, layouts = subpaths
    closed = tuple(_near(xy[a].tolist(), xy[b].tolist(), tolerance) for a, b in zip(firsts, lasts, strict=True))
    layout = layouts.get(closed)
    if layout is None:
        layout = layouts[closed] = _layout(firsts, lasts, closed, points.shape[1])
    headers, rows, sources = layout
    data = headers.copy()
    data.ravel()[rows] = points.ravel()[sources]
    return data


def _near(p: list[float], q: list[float], tolerance: float) -> bool:
    """``consider_points_equals_2d(p, q)``, in plain floats."""
    (x0, y0), (x1, y1) = p, q
    return (x0 == x1 or abs(x0 - x1) <= tolerance + 1.0e-5 * abs(x1)) and (
        y0 == y1 or abs(y0 - y1) <= tolerance + 1.0e-5 * abs(y1))


def _layout(firsts: list[int], lasts: list[int], closed: tuple[bool, ...], width: int) -> tuple[Any, Any, Any]:
    """Path data with its headers in place (points left 0), the flat indices of its point
    doubles, and of the points' doubles they come from (rows of ``width``): a move to each
    subpath's first point, each curve's three other points after a curve header, a close."""
    headers: list[tuple[int, float]] = []
    rows: list[int] = []
    sources: list[int] = []
    at = 0
    for first, last, closes in zip(firsts, lasts, closed, strict=True):
        headers.append((at, _MOVE_TO))
        rows.append(at + 1)
        sources.append(first)
        at += 2
        for curve in range((last + 1 - first) // 4):
            headers.append((at, _CURVE_TO))
            rows += [at + 1, at + 2, at + 3]
            sources += [first + 4 * curve + 1, first + 4 * curve + 2, first + 4 * curve + 3]
            at += 4
        if closes:
            headers.append((at, _CLOSE_PATH))
            at += 1
    data = np.zeros((at, 2))
    for row, header in headers:
        data[row, 0] = header
    flat_rows = (np.array(rows, dtype=np.intp)[:, None] * 2 + np.arange(2)).ravel()
    flat_sources = (np.array(sources, dtype=np.intp)[:, None] * width + np.arange(2)).ravel()
    return data, flat_rows, flat_sources


_SUBPATHS: dict[tuple[int, bytes], tuple[list[int], list[int], dict[tuple[bool, ...], tuple[Any, Any, Any]]]] = {}
_PATTERNS_KEPT = 4096  # a scene has a few hundred; cleared whole when full


def _cairo_path(self: Any, ctx: Any, vmobject: Any) -> Any:
    """manim's ``Camera.set_cairo_context_path`` through pycairo's own calls: the moves, curves
    and closes of :func:`_path_data`, one call each (for a context ``cairo_append_path`` cannot
    reach; a move starts a new subpath as manim's ``new_sub_path`` did)."""
    points = self.transform_points_pre_display(vmobject, vmobject.points)
    if len(points) == 0:
        return self
    ctx.new_path()
    data = _path_data(points, vmobject.tolerance_for_point_equality).tolist()
    at = 0
    while at < len(data):
        kind = data[at][0]
        if kind == _MOVE_TO:
            ctx.move_to(*data[at + 1])
            at += 2
        elif kind == _CURVE_TO:
            ctx.curve_to(*data[at + 1], *data[at + 2], *data[at + 3])
            at += 4
        else:
            ctx.close_path()
            at += 1
    return self


def _cairo_appender() -> Callable[[Any, int, int], None] | None:
    """``append(ctx, address, length)``: Cairo's ``cairo_append_path`` of path data (as
    :func:`_path_data` makes, ``length`` elements at ``address``) on a pycairo
    context, which makes the path with the very calls manim's make one by one (``cairo_move_to``,
    ``cairo_curve_to``, ``cairo_close_path``, the same doubles); None where this pycairo's
    context cannot be reached, checked on a context of its own first. A Cairo error shows at
    pycairo's next call on the context (pycairo checks the status after each)."""
    import ctypes

    import cairo

    try:  # the symbols are looked up through pycairo's own module: the libcairo it uses
        lib = ctypes.CDLL(cairo._cairo.__file__)  # type: ignore[attr-defined]  # pycairo's extension module
        append, line_width = lib.cairo_append_path, lib.cairo_get_line_width
    except (OSError, AttributeError):
        return None

    class _Path(ctypes.Structure):  # cairo_path_t
        _fields_ = [("status", ctypes.c_int), ("data", ctypes.c_void_p), ("num_data", ctypes.c_int)]

    append.argtypes, append.restype = [ctypes.c_void_p, ctypes.POINTER(_Path)], None
    line_width.argtypes, line_width.restype = [ctypes.c_void_p], ctypes.c_double
    field = ctypes.c_void_p.from_address
    offset = object.__basicsize__  # py3cairo.h: a PycairoContext is PyObject_HEAD, then its cairo_t *
    path = _Path(0, None, 0)
    given = ctypes.byref(path)

    def append_data(ctx: Any, address: int, length: int) -> None:
        path.data, path.num_data = address, length
        append(field(id(ctx) + offset).value, given)

    probe = cairo.Context(cairo.ImageSurface(cairo.FORMAT_ARGB32, 2, 2))
    probe.set_line_width(3.375)
    if line_width(field(id(probe) + offset).value) != 3.375:
        return None
    return append_data


def _remembered_paths() -> Callable[..., Any]:
    import cairo
    from manim import Camera

    shown_as_they_are = Camera.transform_points_pre_display  # points, or a point if any is not finite
    append = _cairo_appender()
    table: dict[tuple[object, ...], Any] = {}

    def set_path(self: Any, ctx: Any, vmobject: Any) -> Any:
        points = vmobject.points
        if type(self).transform_points_pre_display is not shown_as_they_are:  # a camera that moves points
            points = self.transform_points_pre_display(vmobject, points)
        if len(points) == 0:
            return self
        if append is not None and type(ctx) is cairo.Context:
            # the path in user space: the same data whatever the matrix (a moving camera)
            key: tuple[object, ...] = (points.tobytes(), points.shape, vmobject.tolerance_for_point_equality)
            kept = table.get(key)
            if kept is None:
                if len(table) >= _PATHS_KEPT:
                    table.clear()
                shown = points if np.isfinite(points).all() else points[:0]  # manim draws no path then
                data = _path_data(shown, vmobject.tolerance_for_point_equality)
                kept = table[key] = (data, data.ctypes.data, len(data))  # the data kept alive with its address
            ctx.new_path()
            append(ctx, kept[1], kept[2])
            return self
        matrix = ctx.get_matrix()  # a copied path is in user space, made from the device's: keyed by the matrix
        key = (points.tobytes(), points.shape, *matrix, vmobject.tolerance_for_point_equality)
        path = table.get(key)
        if path is None:
            _cairo_path(self, ctx, vmobject)
            if len(table) >= _PATHS_KEPT:
                table.clear()
            table[key] = ctx.copy_path()
        else:
            ctx.new_path()
            ctx.append_path(path)
        return self

    return set_path



def patches() -> list[Patch]:
    """Paths as Cairo's path data, kept by their points, in place of manim's curve by curve."""
    return [Patch("manim.camera.camera:Camera", "set_cairo_context_path", lambda _: _remembered_paths(),
                  ("self", "ctx", "vmobject"))]
