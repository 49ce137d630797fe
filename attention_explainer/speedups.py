"""Faster versions of manim's hot paths: the same frames, drawn and encoded with less CPU.

The bundle's manim processes (:mod:`attention_explainer.runner`) install them; a plain
``manim render scenes/x.py X`` runs manim as it is. Profiled on the default lecture (bench/),
a frame's drawing spends most of its Python time in the first two, called for every mobject of
every frame; they return exactly what manim's own do:

``Mobject.get_family``
    manim flattens the family level by level, removing duplicates at each level (a set and
    two list reversals per mobject, for every mobject of the tree). Here the tree is walked
    once and duplicates removed once, keeping each mobject's last place as manim does: a
    mobject's last place in the whole list is also its last place in its own branch, so
    removing them level by level or once gives the same list.
``Camera.set_cairo_context_path``
    a glyph's outline handed to Cairo curve by curve, after a dozen small numpy calls that find
    its subpaths, for each glyph of each frame, though most glyphs keep their points from frame
    to frame (a fade, a colour change, a moving neighbour). Here the path Cairo made is kept by
    the points' bytes (as the mobject has them, where the camera shows points as they are), the
    context's matrix and the options it depends on (a bounded table), and handed back whole
    (``append_path``): the same path, in one call. A path not kept yet is made with the same
    Cairo calls as manim's, found with fewer numpy calls (a third quicker).
``SceneFileWriter.open_partial_movie_stream``
    clips are encoded with x264's ``veryfast`` preset in one thread, at manim's quality (crf 23):
    the bundle renders a scene per core already, and x264's own threads only fought the renders
    for them. A tenth less CPU for a -ql scene and a quarter for a -qh one, files no larger (a
    -qh scene: 1.8 MB against 2.1 MB), frames that differ from manim's by half a level on
    average (41 dB apart; neither shows an artefact the other lacks).
``_PartialMovieEncodeJob._encode_and_write_frame``
    a frame shown for many frames (every ``wait``) was turned from RGBA into the encoder's YUV
    once per frame; here once, and the same YUV frame is given to the encoder each time (the
    same bytes in the file).
``scene_file_writer.convert_audio``
    a clip's sound (the narration) is encoded for the video at its own sample rate and channels:
    manim's made 48 kHz stereo of the voice's 22.05 kHz mono, three times the work for the same
    sound (2.3 s of CPU for half a minute of speech, here).

:func:`install` is idempotent; :func:`uninstall` puts manim's own back (for the tests that
compare the two).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

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


def _cairo_path(self: Any, ctx: Any, vmobject: Any) -> Any:
    """manim's ``Camera.set_cairo_context_path``, making the same Cairo calls with fewer numpy
    ones: the subpaths found by manim's rule in one pass, the curves read from a list."""
    import numpy as np

    points = self.transform_points_pre_display(vmobject, vmobject.points)
    n = len(points)
    if n == 0:
        return self
    nppcc = vmobject.n_points_per_cubic_curve
    ctx.new_path()
    if n < nppcc:
        return self
    xy = points[:, :2]
    # where a curve's end anchor is not (close to) the next curve's start: manim's rule, vectorized
    if n > nppcc:
        ends = xy[nppcc - 1 : n - 1 : nppcc]
        starts = xy[nppcc::nppcc]
        m = min(len(ends), len(starts))
        ends, starts = ends[:m], starts[:m]
        with np.errstate(invalid="ignore"):
            diffs = np.abs(ends - starts)
            close = diffs <= vmobject.tolerance_for_point_equality + 1.0e-5 * np.abs(starts)
            if not np.isfinite(diffs).all():
                close &= np.isfinite(diffs)
                close |= ends == starts
        splits = (np.flatnonzero(~(close[:, 0] & close[:, 1])) + 1) * nppcc
        bounds = [0, *splits.tolist(), n]
    else:
        bounds = [0, n]
    flat = xy.ravel().tolist()
    move, curve, sub, close_path = ctx.move_to, ctx.curve_to, ctx.new_sub_path, ctx.close_path
    equal = vmobject.consider_points_equals_2d
    for start, end in itertools.pairwise(bounds):
        if end - start < nppcc:
            continue
        sub()
        move(flat[2 * start], flat[2 * start + 1])
        for i in range(start, end - nppcc + 1, nppcc):
            b = 2 * i + 2
            curve(flat[b], flat[b + 1], flat[b + 2], flat[b + 3], flat[b + 4], flat[b + 5])
        if equal(points[start], points[end - 1]):
            close_path()
    return self


def _remembered_paths() -> Callable[..., Any]:
    import cairo

    table: dict[tuple[object, ...], cairo.Path] = {}

    from manim import Camera

    shown_as_they_are = Camera.transform_points_pre_display  # points, or a point if any is not finite

    def set_path(self: Any, ctx: Any, vmobject: Any) -> Any:
        points = vmobject.points
        if type(self).transform_points_pre_display is not shown_as_they_are:  # a camera that moves points
            points = self.transform_points_pre_display(vmobject, points)
        if len(points) == 0:
            return self
        matrix = ctx.get_matrix()  # the path is kept in user space; the matrix keeps it exact to the pixel
        key: tuple[object, ...] = (
            points.tobytes(), points.shape, matrix.xx, matrix.yx, matrix.xy, matrix.yy, matrix.x0, matrix.y0,
            vmobject.tolerance_for_point_equality, vmobject.n_points_per_cubic_curve,
        )
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


def _quick_encoding(original: Callable[..., Any]) -> Callable[..., Any]:
    def open_stream(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        job = getattr(self, "_current_encode_job", None)
        if job is not None and job.stream.codec_context.name == "libx264":
            context = job.stream.codec_context
            context.thread_count = 1
            context.options = {**context.options, "preset": "veryfast"}
        return result

    return open_stream


def _held_frames_converted_once(original: Callable[..., Any]) -> Callable[..., Any]:
    def encode_and_write(self: Any, frame: Any, num_frames: int) -> None:
        import av

        context = self.stream.codec_context
        if num_frames < 2 or context.pix_fmt is None:
            original(self, frame, num_frames)
            return
        # the reformat the encoder would make of each copy (av.video.codeccontext), made once
        shown = av.VideoFrame.from_ndarray(frame, format="rgba").reformat(
            context.width, context.height, context.pix_fmt, threads=context.thread_count
        )
        for _ in range(num_frames):
            shown.pts = None  # numbered by the encoder, as each fresh copy was
            for packet in self.stream.encode(shown):
                self.container.mux(packet)

    return encode_and_write


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
    _ORIGINALS["stream"] = SceneFileWriter.open_partial_movie_stream
    SceneFileWriter.open_partial_movie_stream = _quick_encoding(_ORIGINALS["stream"])  # type: ignore[method-assign]
    job = scene_file_writer._PartialMovieEncodeJob
    _ORIGINALS["held"] = job._encode_and_write_frame
    job._encode_and_write_frame = _held_frames_converted_once(_ORIGINALS["held"])  # type: ignore[method-assign]
    _ORIGINALS["audio"] = scene_file_writer.convert_audio
    scene_file_writer.convert_audio = _convert_audio_as_it_is


def uninstall() -> None:
    """Put manim's own back."""
    if not _ORIGINALS:
        return
    from manim import Camera, Mobject
    from manim.scene import scene_file_writer
    from manim.scene.scene_file_writer import SceneFileWriter

    Mobject.get_family = _ORIGINALS.pop("get_family")  # type: ignore[method-assign]
    Camera.set_cairo_context_path = _ORIGINALS.pop("path")  # type: ignore[method-assign]
    SceneFileWriter.open_partial_movie_stream = _ORIGINALS.pop("stream")  # type: ignore[method-assign]
    scene_file_writer.convert_audio = _ORIGINALS.pop("audio")
    scene_file_writer._PartialMovieEncodeJob._encode_and_write_frame = _ORIGINALS.pop("held")  # type: ignore[method-assign]
