"""Encoding: x264's settings, frames converted to YUV from their own memory, the voice at its own rate.

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
    whole frame (tested), in 2.8 ms instead of 5.2 for a -qh frame of the lecture. Where two
    frames say which rows they drew over their common still frame (:mod:`.background_rows`), only
    those rows are compared, and in them only the columns either frame drew over are converted.
``scene_file_writer.convert_audio``
    a clip's sound (the narration) is encoded for the video at its own sample rate and channels:
    manim's made 48 kHz stereo of the voice's 22.05 kHz mono, three times the work for the same
    sound (2.3 s of CPU for half a minute of speech, here).

A scene's plays going into one stream rather than a partial movie each is :mod:`.one_stream`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import background_rows
from .patching import Patch
from .versions import segment_encoder

__all__ = ["changed_runs", "frames_encoded", "patches"]

_WRITER = "manim.scene.scene_file_writer"


def _quick_encoding(original: Callable[..., Any]) -> Callable[..., Any]:
    def open_stream(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        job = getattr(self, "_current_encode_job", None)
        if job is not None and job.stream.codec_context.name == "libx264":
            _set_quick(job.stream.codec_context)
        return result

    return open_stream


def _set_quick(context: Any) -> None:
    """x264 in one thread, ``veryfast``, diamond motion search, one subpixel refinement: flat
    shapes moving, a quarter quicker."""
    context.thread_count = 1
    context.options = {**context.options, "preset": "veryfast", "x264-params": "me=dia:subme=1"}


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


def _given(context: Any, frame: Any, num_frames: int, kept: dict[str, Any]) -> Any:
    """What the encoder of ``context`` is given for ``frame``, shown ``num_frames`` times: converted
    to 4:2:0 by the clip's :class:`_Converter` (kept in ``kept``, the encoder's ``__dict__``), or
    the frame's own memory, reformatted once."""
    import av

    size = (context.width, context.height)
    if (context.pix_fmt == "yuv420p" and context.name == "libx264" and frame.shape[:2] == size[::-1]
            and frame.shape[0] % 2 == 0 and frame.shape[2] == 4):
        converter = kept.get("_accel_converter")
        if converter is None:
            converter = kept["_accel_converter"] = _Converter(*size)
        return converter.convert(frame)
    # the frame's own memory, not a copy of it (the encoder reads it before this returns)
    given = av.VideoFrame.from_numpy_buffer(frame, format="rgba")
    if context.pix_fmt == "yuv420p":  # each 2 × 2 block's colour averaged: a third quicker, closer
        given = given.reformat(*size, "yuv420p", interpolation="AREA", threads=context.thread_count)
    elif num_frames > 1:  # the reformat the encoder would make of each copy (av.video.codeccontext), once
        given = given.reformat(*size, context.pix_fmt, threads=context.thread_count)
    return given


def _frames_given_without_copies(original: Callable[..., Any]) -> Callable[..., Any]:
    def encode_and_write(self: Any, frame: Any, num_frames: int) -> None:
        context = self.stream.codec_context
        if context.pix_fmt is None or not frame.flags.c_contiguous:
            original(self, frame, num_frames)
            _ENCODED[0] += num_frames
            return
        given = _given(context, frame, num_frames, self.__dict__)
        for _ in range(num_frames):
            given.pts = None  # numbered by the encoder, as each fresh copy was
            for packet in self.stream.encode(given):
                self.container.mux(packet)
            _ENCODED[0] += 1

    return encode_and_write


_ENCODED = [0]  # frames this process's encoders were given (only they add): drawing waits while it grows


def frames_encoded() -> int:
    """How many frames this process's encoders were given so far (:mod:`.frame_pool` waits while it grows)."""
    return _ENCODED[0]


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


def _quick_segments(original: Callable[..., Any]) -> Callable[..., Any]:
    """manim 0.22's ``SceneFileWriter._create_segment_encoder``: the segment's x264 set as
    :func:`_quick_encoding` sets it (the stream is opened at its first frame, after this)."""

    def create_segment_encoder(self: Any, target: Any) -> Any:
        encoder = original(self, target)
        stream = getattr(encoder, "_stream", None)
        if stream is not None and stream.codec_context.name == "libx264":
            _set_quick(stream.codec_context)
        return encoder

    return create_segment_encoder


def _segments_given_without_copies(original: Callable[..., Any]) -> Callable[..., Any]:
    """manim 0.22's ``VideoSegmentEncoder.write_frame``: the frames given as :func:`_frames_given_without_copies`
    gives them, numbered as manim numbers them (consecutive pts in the segment's frame time)."""
    from fractions import Fraction

    def write_frame(self: Any, pixels: Any, *, repeat: int = 1) -> None:
        self._validate_frame(pixels, repeat)  # manim's checks first: a C-contiguous uint8 RGBA frame of its size
        rate = self.spec.frame_rate
        time_base = Fraction(rate.denominator, rate.numerator)
        context = self._stream.codec_context
        if context.pix_fmt is None:
            original(self, pixels, repeat=repeat)
            _ENCODED[0] += repeat
            return
        try:
            given = _given(context, pixels, repeat, self.__dict__)
            for _ in range(repeat):
                given.pts, given.time_base = self._next_pts, time_base
                self._next_pts += 1
                for packet in self._stream.encode(given):
                    self._container.mux(packet)
                _ENCODED[0] += 1
        except BaseException as error:
            raise self._operation_error("encode", error) from error

    return write_frame


def patches() -> list[Patch]:
    """x264's settings, frames converted from their own memory, the sound at its own rate (manim 0.21's
    encode job or 0.22's segment encoder, as installed: :mod:`.versions`)."""
    audio = Patch(_WRITER, "convert_audio", lambda _: _convert_audio_as_it_is,
                  ("input_path", "output_path", "codec_name"))
    if segment_encoder():
        return [
            Patch(f"{_WRITER}:SceneFileWriter", "_create_segment_encoder", _quick_segments, ("self", "target")),
            Patch("manim.scene.video_segment_encoder:VideoSegmentEncoder", "write_frame",
                  _segments_given_without_copies, ("self", "pixels", "repeat")),
            audio,
        ]
    return [
        Patch(f"{_WRITER}:SceneFileWriter", "open_partial_movie_stream", _quick_encoding, ("self", "file_path")),
        Patch(f"{_WRITER}:_PartialMovieEncodeJob", "_encode_and_write_frame", _frames_given_without_copies,
              ("self", "frame", "num_frames")),
        audio,
    ]
