"""Faster versions of manim's hot paths: the same frames, drawn and encoded with less CPU.

The bundle's manim processes (:mod:`attention_explainer.runner`) install them; a plain
``manim render scenes/x.py X`` runs manim as it is. Profiled on the default lecture (bench/),
a frame's drawing and animating spends most of its Python time in the first three, called for
every mobject of every frame; they return exactly what manim's own do:

``Mobject.get_family``
    manim flattens the family level by level, removing duplicates at each level (a set and
    two list reversals per mobject, for every mobject of the tree). Here the tree is walked
    once and duplicates removed once, keeping each mobject's last place as manim does: a
    mobject's last place in the whole list is also its last place in its own branch, so
    removing them level by level or once gives the same list.
``Camera.set_cairo_context_path``
    a glyph's outline handed to Cairo curve by curve, after a dozen small numpy calls that find
    its subpaths, for each glyph of each frame, though most glyphs keep their points from frame
    to frame (a fade, a colour change, a moving neighbour). Here the path is written once as
    Cairo's own path data (the same moves, curves and closes, the same doubles, split and
    closed by manim's rule) and handed to ``cairo_append_path``, which makes it with the very
    calls manim's make one by one; the data are kept by the points' bytes (a bounded table), so
    a glyph that did not change costs one call, wherever the camera is. Where pycairo's context
    cannot be reached that way (checked first), the same data are made into the path with
    pycairo's calls, one each, and kept by ``copy_path``, keyed by the context's matrix too.
``Camera.type_or_raise``
    the kind of drawing a mobject takes, found once per type of mobject rather than for each
    mobject of each frame.
``Camera.display_vectorized``
    the same calls on the Cairo context in the same order (path, background stroke, fill,
    stroke), with the Python around them trimmed: a stroke of width 0 (every glyph's) skipped
    before the call instead of inside it, a plain fill's colour read as four floats at once.
    A frame of 240 glyphs draws in about 7 ms, not 10. A mobject faded out but left in the
    scene (a transparent fill, each stroke transparent or of width 0) is not drawn at all:
    nothing it paints changes a pixel, yet its path was made and filled each frame
    (WeightedSum keeps a table's words at opacity 0 for its last 200 frames: a seventh of its
    CPU at -qh).
``Transform.interpolate_mobject``
    every frame of a Transform (a fade, ``.animate``, a move, an indication) interpolated each
    submobject's points and seven colour fields with a dozen small numpy operations, and walked
    three families to pair them. Here the pairs are taken once, on the first frame after
    ``begin``, their starts and ends laid end to end in two arrays, and each frame is one
    ``(1 - alpha) * start + alpha * end`` of them all (the same operations on the same doubles,
    element by element) into one buffer the submobjects hold views of: 240 glyphs take 0.8 ms a
    frame, not 16.9. manim's loop
    runs wherever anything differs: a lag between submobjects, a path other than straight, a
    mobject that interpolates its own way, a family changed since, the last frame (manim copies
    the target's colours there).
``SceneFileWriter.open_partial_movie_stream``
    clips are encoded with x264's ``veryfast`` preset in one thread, at manim's quality (crf 23),
    searching motion in a diamond with one subpixel refinement (a quarter less of x264's time,
    files 4 % larger, 0.3 dB):
    the bundle renders a scene per core already, and x264's own threads only fought the renders
    for them. A tenth less CPU for a -ql scene and a quarter for a -qh one, files no larger (a
    -qh scene: 1.8 MB against 2.1 MB), frames that differ from manim's by half a level on
    average (41 dB apart; neither shows an artefact the other lacks).
``_PartialMovieEncodeJob._encode_and_write_frame``
    each frame was copied into a new video frame before the encoder turned it into YUV, and a
    frame shown for many frames (every ``wait``) was copied and turned into YUV once per frame.
    Here the conversion reads the frame's own memory, and a held frame is turned into YUV once
    and given to the encoder each time. For 4:2:0 video the colour of each 2 × 2 block is their
    average (swscale's ``AREA``; manim's bilinear default filters more): the same brightness
    to the bit, colours that come back closer to the frame's (38.1 against 37.6 dB). For x264,
    only the rows that differ from the frame before are converted (found by ``memcmp``, 16 rows
    at a time), into the frame the encoder was given before (x264 copies what it is given), with
    swscale's contexts kept rather than made for every frame: the same bytes as converting each
    whole frame (tested), in 2.8 ms instead of 5.2 for a -qh frame of the lecture.
``SceneFileWriter``'s partial movies
    a scene's plays go into one stream, one file, rather than a partial movie per play (a
    keyframe, an encoder opened and drained, a file joined for each of the default lecture's
    169 plays): :mod:`attention_explainer.one_stream`. The same frames; clips 18 % smaller at -qh.
``CairoRenderer.render``
    each frame drawn was copied for the encoder (``get_frame``, 8 MB at 1080p) and the next
    drawn into the same array. Here the drawn array goes to the encoder as it is; it stays the
    camera's frame (whatever reads the frame after a play reads it), but the next frame is drawn
    into another array, lent back once the encoder is done with it: a copy less per moving
    frame, the same frames (the test slows the encoder down so drawing runs ahead, and reads
    the frame the camera holds at the end). Drawing that runs ahead waits for one of four
    arrays to be let go rather than take more (it took up to 32: a -qh render's peak memory
    was 1.1 GB, now 0.75; each new array first took the play's still frame whole).
``CairoRenderer.save_static_frame_data``, ``CairoRenderer.update_frame``
    manim draws every mobject after the first moving one each frame, moving or not. Still
    mobjects drawn after moving ones go into the play's still frame when their boxes meet
    nothing drawn each frame before them, checked again every frame
    (:mod:`attention_explainer.still_on_top`): a fifth less drawing in Scores and MatrixForm.
``Camera.capture_mobjects``
    each frame began with the still frame copied whole into the array drawn in. Here the rows
    drawn over are remembered, and only they are copied back when the same still frame comes
    again (:mod:`attention_explainer.background_rows`).
glibc's ``malloc``
    a frame is a few megabytes: each copy of one (the background, the frame for the encoder, its
    conversion) was mapped fresh from the kernel and given back when freed, a page fault every
    4 KiB, a tenth of a render's CPU in the kernel. Here freed memory is kept for the next frame
    (``mallopt``: blocks up to 32 MiB come from the heap, which is not trimmed below 512 MiB).
    :func:`uninstall` leaves this as it is: it changes where memory comes from, not what is drawn.
``scene_file_writer.convert_audio``
    a clip's sound (the narration) is encoded for the video at its own sample rate and channels:
    manim's made 48 kHz stereo of the voice's 22.05 kHz mono, three times the work for the same
    sound (2.3 s of CPU for half a minute of speech, here).

:func:`install` is idempotent; :func:`uninstall` puts manim's own back (for the tests that
compare the two).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from attention_explainer import background_rows, one_stream, still_on_top

__all__ = ["install", "installed", "uninstall"]

_PATHS_KEPT = 20_000  # about 30 MB at most; cleared whole when full (a scene's glyphs, many times over)
_ORIGINALS: dict[str, Callable[..., Any]] = {}


def _fast_get_family(self: Any, recurse: bool = True) -> list[Any]:
    """:meth:`manim.Mobject.get_family`, walking the tree once."""
    family: list[Any] = []
    stack = [self]
    while stack:
        mob = stack.pop()
        family.append(mob)
        subs = mob.submobjects
        if subs:
            stack.extend(reversed(subs))
    if len(family) == len({id(mob) for mob in family}):
        return family
    kept: list[Any] = []
    seen: set[Any] = set()  # by the mobjects' own hash and equality, as manim's does
    for mob in reversed(family):
        if mob not in seen:
            seen.add(mob)
            kept.append(mob)
    kept.reverse()
    return kept


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


def _kinds_remembered(original: Callable[..., Any]) -> Callable[..., Any]:
    """``Camera.type_or_raise``: which drawing function a mobject's type takes, found once per
    type (manim rebuilt its table of them and tried each kind in turn for every mobject of
    every frame); the table itself is still manim's, made by its first call on each camera."""
    kinds: dict[type, type] = {}

    def type_or_raise(self: Any, mobject: Any) -> type:
        kind = kinds.get(type(mobject))
        if kind is None or "display_funcs" not in self.__dict__:
            kind = kinds[type(mobject)] = original(self, mobject)
        return kind

    return type_or_raise


def _fused_display(original: Callable[..., Any]) -> Callable[..., Any]:
    """``Camera.display_vectorized``: manim's calls on the context, in its order (the path, the
    background stroke, the fill, the stroke), with a stroke of width 0 skipped before a call
    rather than inside it and a plain fill's colour read as floats in one call; manim's own
    where the camera or the mobject gets colours or widths its own way."""
    from manim import Camera, VMobject

    camera_parts = ("apply_fill", "apply_stroke", "get_fill_rgbas", "get_stroke_rgbas", "set_cairo_context_color")
    own: dict[type, bool] = {}  # does the camera's (the mobject's) type use manim's own parts?

    def plain(kind: type, parts: Sequence[str], base: type) -> bool:
        known = own.get(kind)
        if known is None:
            known = own[kind] = all(getattr(kind, part) is getattr(base, part) for part in parts)
        return known

    def unseen_strokes(camera: Any, vmobject: Any) -> bool:  # both strokes of width 0 or wholly transparent
        return all(vmobject.get_stroke_width(background) == 0
                   or not camera.get_stroke_rgbas(vmobject, background=background)[:, 3].any()
                   for background in (True, False))

    def display_vectorized(self: Any, vmobject: Any, ctx: Any) -> Any:
        if not (plain(type(self), camera_parts, Camera)
                and plain(type(vmobject), ("get_fill_rgbas", "get_stroke_width"), VMobject)):
            return original(self, vmobject, ctx)
        rgbas = vmobject.get_fill_rgbas()
        single = len(rgbas) == 1
        if single:
            red, green, blue, alpha = rgbas[0].tolist()
            if alpha == 0 and unseen_strokes(self, vmobject):
                return self  # faded out but still in the scene: every paint would leave the frame as it is
        self.set_cairo_context_path(ctx, vmobject)
        if vmobject.get_stroke_width(True) != 0:
            self.apply_stroke(ctx, vmobject, background=True)
        if single:  # manim's set_cairo_context_color: blue, green and red swapped for Cairo
            ctx.set_source_rgba(blue, green, red, alpha)
        else:
            self.set_cairo_context_color(ctx, rgbas, vmobject)
        ctx.fill_preserve()
        if vmobject.get_stroke_width() != 0:
            self.apply_stroke(ctx, vmobject)
        return self

    return display_vectorized


_COLOUR_FIELDS = (
    "fill_rgbas", "stroke_rgbas", "background_stroke_rgbas", "stroke_width", "background_stroke_width",
    "sheen_direction", "sheen_factor",
)  # what VMobject.interpolate_color interpolates, in its order


class _Interpolation:
    """A Transform's (submobject, start, end) triples as two flat arrays: each frame one
    interpolation of them all, ``(1 - alpha) * start + alpha * end`` element by element (the
    operations manim's ``interpolate`` makes on each small array: the same doubles), written
    into one buffer that each submobject's points and colours are views of (made once), and
    its widths floats read from it. A submobject holds the latest frame's values, as it holds
    a new array of them with manim's own loop."""

    def __init__(self, family: list[Any], fields: list[tuple[Any, str, int, int, Any]], start: Any, end: Any) -> None:
        self.family, self.start, self.end = family, start, end
        self.now, self.part = np.empty_like(start), np.empty_like(start)
        self.arrays = [(sub, name, self.now[lo:hi].reshape(shape)) for sub, name, lo, hi, shape in fields
                       if shape is not None]
        self.floats = [(sub, name) for sub, name, _, _, shape in fields if shape is None]
        self.at = np.array([lo for _, _, lo, _, shape in fields if shape is None], dtype=np.intp)

    @classmethod
    def of(cls, animation: Any) -> _Interpolation | None:
        """The batch of ``animation``'s families, or None where manim's own loop must run."""
        from manim import Mobject, VMobject
        from manim.animation.animation import Animation
        from manim.animation.transform import Transform
        from manim.utils.bezier import interpolate

        kind = type(animation)
        if (kind.interpolate_submobject is not Transform.interpolate_submobject
                or kind.get_sub_alpha is not Animation.get_sub_alpha or animation.path_func is not interpolate):
            return None
        triples = list(animation.get_all_families_zipped())
        if not triples or (animation.lag_ratio != 0 and len(triples) > 1):
            return None
        fields, starts, ends, at = [], [], [], 0
        for sub, a, b in triples:
            for mob in (sub, a, b):
                if (not isinstance(mob, VMobject) or type(mob).interpolate is not Mobject.interpolate
                        or type(mob).interpolate_color is not VMobject.interpolate_color):
                    return None
            for name in ("points", *_COLOUR_FIELDS):
                x, y = getattr(a, name), getattr(b, name)
                if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
                    if x.dtype != np.float64 or y.dtype != np.float64 or x.shape != y.shape:
                        return None
                    shape = x.shape
                elif type(x) in (float, int, np.float64) and type(y) in (float, int, np.float64):
                    shape = None
                else:
                    return None
                size = 1 if shape is None else x.size
                fields.append((sub, name, at, at + size, shape))
                starts.append(np.ravel(x))
                ends.append(np.ravel(y))
                at += size
        family = [sub for sub, _, _ in triples]
        return cls(family, fields, np.concatenate(starts).astype(float), np.concatenate(ends).astype(float))

    def apply(self, alpha: float) -> None:
        np.multiply(1 - alpha, self.start, out=self.now)
        np.multiply(alpha, self.end, out=self.part)
        np.add(self.now, self.part, out=self.now)
        for sub, name, view in self.arrays:
            setattr(sub, name, view)  # again: something may have replaced it since
        for (sub, name), value in zip(self.floats, self.now[self.at].tolist(), strict=True):
            setattr(sub, name, value)


def _same(these: Sequence[Any], those: Sequence[Any]) -> bool:
    """The same objects, in the same order?"""
    return len(these) == len(those) and all(a is b for a, b in zip(these, those, strict=True))


def _batched_transforms(original: Callable[..., Any]) -> Callable[..., Any]:
    """``Transform.interpolate_mobject``: one interpolation of every submobject's points and
    colours (kept per animation), where manim's would loop over them with the same arithmetic;
    manim's own loop wherever anything differs from that (see :meth:`_Interpolation.of`)."""

    def interpolate_mobject(self: Any, alpha: float) -> None:
        # made on the first frame after ``begin`` (which interpolates once, and may then still
        # change its copies: FadeTransform fits them to each other); made again if begun again
        sources = tuple(self.get_all_mobjects())  # the objects, not their ids: never a reused id
        kept = self.__dict__.get("_speedups_batch")
        if kept is None or not _same(kept[0], sources):
            self.__dict__["_speedups_batch"] = (sources, None)
            original(self, alpha)
            return
        batch = kept[1]
        if batch is None:
            batch = _Interpolation.of(self) or False
            self.__dict__["_speedups_batch"] = (sources, batch)
        if batch is False:
            original(self, alpha)
            return
        sub_alpha = self.get_sub_alpha(alpha, 0, len(batch.family))  # with no lag, every submobject's
        if sub_alpha == 1.0 or not _same(self.mobject.family_members_with_points(), batch.family):
            original(self, alpha)  # the end (manim copies the target's colours there), or a changed family
            return
        batch.apply(sub_alpha)

    return interpolate_mobject


def _quick_encoding(original: Callable[..., Any]) -> Callable[..., Any]:
    def open_stream(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        job = getattr(self, "_current_encode_job", None)
        if job is not None and job.stream.codec_context.name == "libx264":
            context = job.stream.codec_context
            context.thread_count = 1
            # diamond motion search, one subpixel refinement: flat shapes moving, a quarter quicker
            context.options = {**context.options, "preset": "veryfast", "x264-params": "me=dia:subme=1"}
        return result

    return open_stream


_BAND = 16  # rows compared at a time: a macroblock's height (even, as 4:2:0 needs)
_RUN = 16  # changed rows are converted in runs of a multiple of this (each height keeps its swscale context;
# 16 rather than 64 converts a seventh less time at -qh)
_NEAR = 4  # rows around a change that its conversion reaches (swscale reads one past each block's two)
_NEAR_COLUMNS = 4  # columns likewise (swscale's colour sample averages its own two, tested with none; four to be safe)
_COLUMNS = 64  # a band's columns are converted in a multiple of this (each width keeps its swscale context)


class _Reformatters:
    """swscale contexts kept for reuse, by size and format (PyAV's ``VideoFrame.reformat`` makes a
    new one for every frame: a third of a -qh frame's conversion). Taken out while in use, so
    encode threads running at once never share one."""

    def __init__(self) -> None:
        import threading

        self.lock = threading.Lock()
        self.free: dict[tuple[int, int, str], list[Any]] = {}

    def convert(self, frame: Any, width: int, height: int, pix_fmt: str) -> Any:
        from av.video.reformatter import VideoReformatter

        key = (width, height, pix_fmt)
        with self.lock:
            kept = self.free.get(key)
            reformatter = kept.pop() if kept else VideoReformatter()
        try:
            return reformatter.reformat(frame, width, height, pix_fmt, interpolation="AREA", threads=1)
        finally:
            with self.lock:
                self.free.setdefault(key, []).append(reformatter)


_REFORMATTERS = _Reformatters()


def _memcmp() -> Callable[[int, int, int], int]:
    import ctypes

    compare = ctypes.CDLL(None).memcmp
    compare.argtypes, compare.restype = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t], ctypes.c_int
    return compare


def changed_runs(
    previous: Any, frame: Any, compare: Callable[[int, int, int], int], within: Any = None
) -> list[tuple[int, int]]:
    """The rows of ``frame`` that differ from ``previous`` (same shape, C-contiguous), as runs
    ``(first, end)``: compared ``_BAND`` rows at a time (only blocks that hold a row of the mask
    ``within``, if given: the others are known to be equal), each run widened to a multiple of
    ``_RUN`` rows (within the frame), overlapping runs merged. Even bounds for an even height."""

    height, row = frame.shape[0], frame.strides[0]
    old, new = previous.ctypes.data, frame.ctypes.data
    tops: Sequence[int] = range(0, height, _BAND)
    if within is not None:  # the blocks that hold a row that may differ
        tops = [int(t) for t in np.flatnonzero(np.logical_or.reduceat(within, np.arange(0, height, _BAND))) * _BAND]
    runs: list[tuple[int, int]] = []
    for top in tops:
        rows = min(_BAND, height - top)
        if compare(old + top * row, new + top * row, rows * row) == 0:
            continue
        if runs and top <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(runs[-1][1], top + rows))
        else:
            runs.append((top, top + rows))
    widened: list[tuple[int, int]] = []
    for first, end in runs:
        length = -(-(end - first) // _RUN) * _RUN
        first, end = (first, first + length) if first + length <= height else (max(0, height - length), height)
        if widened and first <= widened[-1][1]:
            widened[-1] = (widened[-1][0], max(end, widened[-1][1]))
        else:
            widened.append((first, end))
    return widened


class _Converter:
    """Frames turned into 4:2:0 (each 2 × 2 block's colour averaged) for one clip's encoder: the
    first whole, each next one only where its rows differ from the frame before, written into
    the frame the encoder is given again (x264 copies what it is given). The bytes are those of
    converting the whole frame: swscale's colour rows read one row past their block, so the
    rows written reach ``_NEAR`` rows past the change and are converted with ``_NEAR`` more
    around them (tested against whole conversions). Where two frames say which rows were drawn
    over their common still frame (:func:`background_rows.may_differ`), only those are compared
    (comparing all of a -qh frame read 16 MB per frame moving), and of the rows that differ only
    the columns drawn over in either frame (:func:`background_rows.columns_drawn`) are converted,
    with ``_NEAR_COLUMNS`` columns around them as for rows (in the lecture a changed band's
    drawings span half the frame's width: half of each band's conversion)."""

    def __init__(self, width: int, height: int) -> None:
        self.size = (width, height)
        self.compare = _memcmp()
        self.previous: Any = None
        self.converted: Any = None
        self.planes: list[Any] = []

    def _keep(self, converted: Any) -> None:
        self.converted = converted
        self.planes = [np.frombuffer(plane, np.uint8).reshape(plane.height, plane.line_size)[:, : plane.width]
                       for plane in converted.planes]

    def convert(self, frame: Any) -> Any:
        import av

        width, height = self.size
        previous, self.previous = self.previous, frame  # kept as it is: manim hands over a fresh copy each time
        same_memory = previous is not None and previous.ctypes.data == frame.ctypes.data  # changed in place?
        whole = previous is None or same_memory or previous.shape != frame.shape
        # only the rows drawn over in either frame, where both say so, can differ
        within = None if whole else background_rows.may_differ(previous, frame)
        runs = [(0, height)] if whole else changed_runs(previous, frame, self.compare, within)
        for changed_first, changed_end in runs:
            first, end = max(0, changed_first - _NEAR), min(height, changed_end + _NEAR)  # the rows written
            top, bottom = max(0, first - _NEAR), min(height, end + _NEAR)  # the rows converted
            drawn = None if within is None else background_rows.columns_drawn(previous, frame, top, bottom)
            left, right, start, stop = _columns(drawn, width)  # written, then converted
            band = _REFORMATTERS.convert(av.VideoFrame.from_numpy_buffer(frame[top:bottom, start:stop], format="rgba"),
                                         stop - start, bottom - top, "yuv420p")
            if bottom - top == height and stop - start == width:
                self._keep(band)
                continue
            for k, (plane, kept) in enumerate(zip(band.planes, self.planes, strict=True)):
                rows = np.frombuffer(plane, np.uint8).reshape(plane.height, plane.line_size)[:, : plane.width]
                step = 1 if k == 0 else 2
                kept[first // step : end // step, left // step : right // step] = rows[
                    (first - top) // step : (end - top) // step, (left - start) // step : (right - start) // step]
        return self.converted


def _columns(drawn: tuple[int, int] | None, width: int) -> tuple[int, int, int, int]:
    """The columns of a band to write, ``left`` to ``right``, and to convert, ``start`` to
    ``stop``, around the columns ``drawn`` over (``None`` or nothing drawn: all of them): even
    bounds, ``_NEAR_COLUMNS`` past the drawing, then as many again, widened to a multiple of
    ``_COLUMNS`` within the frame."""
    if drawn is None or drawn[0] >= drawn[1] or width % 2:
        return 0, width, 0, width
    left = max(0, (drawn[0] - _NEAR_COLUMNS) // 2 * 2)
    right = min(width, -(-(drawn[1] + _NEAR_COLUMNS) // 2) * 2)
    start, stop = max(0, left - _NEAR_COLUMNS), min(width, right + _NEAR_COLUMNS)
    length = min(width, -(-(stop - start) // _COLUMNS) * _COLUMNS)
    start, stop = (start, start + length) if start + length <= width else (width - length, width)
    return left, right, start, stop


def _frames_given_without_copies(original: Callable[..., Any]) -> Callable[..., Any]:
    def encode_and_write(self: Any, frame: Any, num_frames: int) -> None:
        import av

        context = self.stream.codec_context
        if context.pix_fmt is None or not frame.flags.c_contiguous:
            original(self, frame, num_frames)
            _ENCODED[0] += num_frames
            return
        size = (context.width, context.height)
        if (context.pix_fmt == "yuv420p" and context.name == "libx264" and frame.shape[:2] == size[::-1]
                and frame.shape[0] % 2 == 0 and frame.shape[2] == 4):
            converter = self.__dict__.get("_speedups_converter")
            if converter is None:
                converter = self.__dict__["_speedups_converter"] = _Converter(*size)
            given = converter.convert(frame)
        else:
            # the frame's own memory, not a copy of it (the encoder reads it before this returns)
            given = av.VideoFrame.from_numpy_buffer(frame, format="rgba")
            if context.pix_fmt == "yuv420p":  # each 2 × 2 block's colour averaged: a third quicker, closer
                given = given.reformat(*size, "yuv420p", interpolation="AREA", threads=context.thread_count)
            elif num_frames > 1:  # the reformat the encoder would make of each copy (av.video.codeccontext), once
                given = given.reformat(*size, context.pix_fmt, threads=context.thread_count)
        for _ in range(num_frames):
            given.pts = None  # numbered by the encoder, as each fresh copy was
            for packet in self.stream.encode(given):
                self.container.mux(packet)
            _ENCODED[0] += 1

    return encode_and_write


_ENCODED = [0]  # frames this process's encoders were given (only they add): drawing waits while it grows


class _Frames:
    """The arrays a camera draws its frames into, lent to the encoder in turn (see
    :func:`_frames_handed_over`). Each array lives as long as the camera, so the Cairo context
    manim keeps for an array, by its ``id``, never outlives it; an array is lent as a view of
    it, and is free again once nobody holds that view (the encoder drops it once the frame after
    it is converted)."""

    MOST = 32  # more frames than this waiting for the encoder: manim's copy instead
    # Past this many arrays, drawing waits for the encoder to free one rather than take another:
    # every array the camera draws in first takes each play's still frame whole (8 MB at 1080p,
    # where an array drawn in before takes back only the rows drawn over), and 32 of them
    # cycled through fall out of the processor's cache. Waiting costs no CPU: the encoder, and
    # the bundle's other render, use it.
    FEW = 4
    PATIENCE = 2.0  # seconds; an encoder that frees no array in this long is not waited for again

    def __init__(self) -> None:
        import threading

        self.arrays: list[Any] = []
        self.lent: list[Callable[[], Any]] = []  # a weak reference to each array's view, while lent
        self.released = threading.Event()  # set whenever the encoder lets go of a view
        self.patient = True

    def _free(self, but: Any) -> Any:
        """A free array like ``but``, other than it, or None."""
        return next((a for a, view in zip(self.arrays, self.lent, strict=True)
                     if a is not but and view() is None and a.shape == but.shape and a.dtype == but.dtype), None)

    def can_lend(self, drawn: Any) -> bool:
        """Is there an array to draw the next frame in, once ``drawn`` is lent?"""
        return self._free(drawn) is not None or len(self.arrays) < self.MOST

    def lend(self, drawn: Any, view: Any) -> Any:
        """``view``, a view of ``drawn``, for the encoder; ``drawn`` is not drawn in again while it is held."""
        import weakref

        if not any(a is drawn for a in self.arrays):
            self.arrays.append(drawn)
            self.lent.append(_nobody)
        self.lent[next(k for k, a in enumerate(self.arrays) if a is drawn)] = weakref.ref(view, self._let_go)
        return view

    def _let_go(self, _view: Any) -> None:
        self.released.set()  # in whichever thread dropped the view: the encoder's, mostly

    def _freed(self, like: Any) -> Any:
        """A free array like ``like``, waited for while the encoder works through the frames it
        holds; ``None`` (and no more waiting) if for :attr:`PATIENCE` seconds it frees none and
        encodes no frame (a long wait's frame, encoded again and again, is held all along)."""
        import time

        deadline, encoded = time.monotonic() + self.PATIENCE, _ENCODED[0]
        while True:
            self.released.clear()  # before looking: a view let go after this wakes the wait
            spare = self._free(like)
            if spare is not None:
                return spare
            left = deadline - time.monotonic()
            if left > 0 and self.released.wait(left):
                continue
            if _ENCODED[0] == encoded:
                self.patient = False
                return None
            deadline, encoded = time.monotonic() + self.PATIENCE, _ENCODED[0]  # the encoder is at work

    def is_lent(self, array: Any) -> bool:
        return any(a is array and view() is not None for a, view in zip(self.arrays, self.lent, strict=True))

    def spare(self, lent: Any) -> Any:
        """A free array like ``lent`` to draw in instead: waited for once :attr:`FEW` are made, else made."""

        spare = self._free(lent)
        if spare is None and self.patient and len(self.arrays) >= self.FEW:
            spare = self._freed(lent)
        if spare is None:
            spare = np.empty_like(lent)
            self.arrays.append(spare)
            self.lent.append(_nobody)
        return spare


def _nobody() -> None:
    return None


def _frames_handed_over() -> Callable[..., Any]:
    """``CairoRenderer.render``: the frame just drawn goes to the encoder as it is, where manim's
    ``get_frame`` copied it (8 MB at 1080p). The camera keeps it as its frame (whoever reads the
    frame after a play reads it), but draws the next frame into another array
    (:func:`_drawn_elsewhere_while_lent`)."""

    def render(self: Any, scene: Any, time: float, moving_mobjects: Any = None) -> None:
        self.update_frame(scene, moving_mobjects)
        camera = self.camera
        frames = camera.__dict__.get("_speedups_frames")
        if frames is None:
            frames = camera.__dict__["_speedups_frames"] = _Frames()
        drawn = camera.pixel_array
        if not isinstance(drawn, np.ndarray) or not drawn.flags.c_contiguous or not frames.can_lend(drawn):
            self.add_frame(self.get_frame())  # manim's own: a copy
            return
        self.add_frame(frames.lend(drawn, background_rows.lent(camera, drawn)))

    return render


def _drawn_elsewhere_while_lent(original: Callable[..., Any]) -> Callable[..., Any]:
    """``Camera.set_pixel_array``, with which every frame starts (the background, written over
    the whole array): while the encoder holds the camera's array, the camera takes a free one
    and the background is written there instead, only its rows drawn over since that array last
    had the same background where they are known (:mod:`attention_explainer.background_rows`)."""

    def set_pixel_array(self: Any, pixel_array: Any, convert_from_floats: bool = False) -> None:
        frames = self.__dict__.get("_speedups_frames")
        current = self.__dict__.get("pixel_array")
        if frames is not None and current is not None and frames.is_lent(current):
            self.pixel_array = frames.spare(current)
        if current is None or not background_rows.restore(self, pixel_array, convert_from_floats):
            original(self, pixel_array, convert_from_floats)
        background_rows.given(self, pixel_array)

    return set_pixel_array


def _convert_audio_as_it_is(input_path: Any, output_path: Any, codec_name: str) -> None:
    """manim's ``convert_audio``, with the output at the input's sample rate and channel layout."""
    import av

    with av.open(input_path) as source, av.open(output_path, "w") as target:
        given = source.streams.audio[0]
        layout = {1: "mono", 2: "stereo"}.get(given.channels, given.layout.name)  # a WAV may name no layout
        stream: Any = target.add_stream(codec_name, rate=given.rate, layout=layout)
        for frame in source.decode(given):
            for packet in stream.encode(frame):
                target.mux(packet)
        for packet in stream.encode():
            target.mux(packet)


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


def installed() -> bool:
    """Are the fast paths in place?"""
    return bool(_ORIGINALS)


def install() -> None:
    """Put the fast paths in place of manim's (a second call changes nothing)."""
    if _ORIGINALS:
        return
    from manim import Camera, Mobject
    from manim.scene import scene_file_writer
    from manim.scene.scene_file_writer import SceneFileWriter

    _ORIGINALS["get_family"] = Mobject.get_family
    _ORIGINALS["path"] = Camera.set_cairo_context_path
    Mobject.get_family = _fast_get_family  # type: ignore[method-assign]
    Camera.set_cairo_context_path = _remembered_paths()  # type: ignore[method-assign]
    _ORIGINALS["kind"] = Camera.type_or_raise
    Camera.type_or_raise = _kinds_remembered(_ORIGINALS["kind"])  # type: ignore[method-assign]
    _ORIGINALS["display"] = Camera.display_vectorized
    Camera.display_vectorized = _fused_display(_ORIGINALS["display"])  # type: ignore[method-assign]
    _ORIGINALS["stream"] = SceneFileWriter.open_partial_movie_stream
    SceneFileWriter.open_partial_movie_stream = _quick_encoding(_ORIGINALS["stream"])  # type: ignore[method-assign]
    job = scene_file_writer._PartialMovieEncodeJob
    _ORIGINALS["held"] = job._encode_and_write_frame
    job._encode_and_write_frame = _frames_given_without_copies(_ORIGINALS["held"])  # type: ignore[method-assign]
    _ORIGINALS["audio"] = scene_file_writer.convert_audio
    scene_file_writer.convert_audio = _convert_audio_as_it_is
    from manim.renderer.cairo_renderer import CairoRenderer

    _ORIGINALS["render"] = CairoRenderer.render
    CairoRenderer.render = _frames_handed_over()  # type: ignore[method-assign]
    _ORIGINALS["pixels"] = Camera.set_pixel_array
    Camera.set_pixel_array = _drawn_elsewhere_while_lent(_ORIGINALS["pixels"])  # type: ignore[method-assign]
    from manim.animation.animation import Animation
    from manim.animation.transform import Transform

    _ORIGINALS["transform"] = Transform.interpolate_mobject
    Transform.interpolate_mobject = _batched_transforms(Animation.interpolate_mobject)  # type: ignore[method-assign]
    still_on_top.install()
    _ORIGINALS["still"] = still_on_top.uninstall
    background_rows.install()
    _ORIGINALS["rows"] = background_rows.uninstall
    one_stream.install()  # after _quick_encoding, which opens the scene's stream
    _ORIGINALS["one_stream"] = one_stream.uninstall
    _keep_freed_memory()


def uninstall() -> None:
    """Put manim's own back."""
    if not _ORIGINALS:
        return
    from manim import Camera, Mobject
    from manim.scene import scene_file_writer
    from manim.scene.scene_file_writer import SceneFileWriter

    _ORIGINALS.pop("one_stream")()  # first: it wraps the stream opener put back below
    Mobject.get_family = _ORIGINALS.pop("get_family")  # type: ignore[method-assign]
    Camera.set_cairo_context_path = _ORIGINALS.pop("path")  # type: ignore[method-assign]
    Camera.display_vectorized = _ORIGINALS.pop("display")  # type: ignore[method-assign]
    Camera.type_or_raise = _ORIGINALS.pop("kind")  # type: ignore[method-assign]
    SceneFileWriter.open_partial_movie_stream = _ORIGINALS.pop("stream")  # type: ignore[method-assign]
    scene_file_writer.convert_audio = _ORIGINALS.pop("audio")
    from manim.renderer.cairo_renderer import CairoRenderer

    CairoRenderer.render = _ORIGINALS.pop("render")  # type: ignore[method-assign]
    Camera.set_pixel_array = _ORIGINALS.pop("pixels")  # type: ignore[method-assign]
    scene_file_writer._PartialMovieEncodeJob._encode_and_write_frame = _ORIGINALS.pop("held")  # type: ignore[method-assign]
    from manim.animation.transform import Transform

    _ORIGINALS.pop("transform")
    del Transform.interpolate_mobject  # inherited from Animation again
    _ORIGINALS.pop("still")()
    _ORIGINALS.pop("rows")()
