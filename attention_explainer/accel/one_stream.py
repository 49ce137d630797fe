"""One encoder for a whole scene: every play's frames go into one stream, one file.

Manim writes each play (each animation, each wait) into a partial movie of its own, then joins
them into the scene's clip. Each partial movie opens an encoder, starts on a keyframe, drains the
encoder before the next play may start, and is read back to be joined: the default lecture
makes 169 of them. Here the scene's first play opens the stream and the later plays go on
writing into it; the stream is closed once, when the scene finishes, and manim's join copies
that one file into the clip (with the sound, if any). The frames given to the encoder are the
same, in the same order; the clip has x264's own keyframes (every 250 frames at most) rather
than one at each play: at -qh 18 % smaller (Scores, MatrixForm); the bench's -qh lecture
peaked at 476 MiB in its largest process, 841 before.

Left to manim: a render with manim's cache (its cache is the partial movies), a scene that
makes slides (manim-slides reads one partial movie per slide), a render that saves sections (a
video per section), and a stream opened on a path someone chose. An aborted render discards the
open stream as manim discards an aborted partial movie, whether ``construct`` failed or what came
after it (``tear_down``, a hook before the clip is written).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .patching import Patch
from .versions import segment_encoder

__all__ = ["patches"]

_ALLOWED = "_one_stream_allowed"  # set on a file writer whose scene may use one stream
_KEPT = "_one_stream_job"  # the scene's open encode job, on its file writer, between plays


def _makes_slides(scene: Any) -> bool:
    """Is ``scene`` a manim-slides slide (without importing manim-slides)?"""
    return any(kind.__module__.startswith("manim_slides") for kind in type(scene).__mro__)


def _init_scene(original: Callable[..., Any]) -> Callable[..., Any]:
    def init_scene(self: Any, scene: Any, *args: Any, **kwargs: Any) -> None:  # 0.22 passes the writer's settings
        original(self, scene, *args, **kwargs)
        self.file_writer.__dict__[_ALLOWED] = not _makes_slides(scene)

    return init_scene


def _kept(writer: Any) -> Any:
    return writer.__dict__.get(_KEPT)


def _add_partial_movie_file(original: Callable[..., Any]) -> Callable[..., Any]:
    def add_partial_movie_file(self: Any, hash_animation: str | None) -> None:
        # once the stream is open, a play adds no file of its own (manim's mark for "none": None)
        original(self, None if _kept(self) is not None else hash_animation)

    return add_partial_movie_file


def _allowed(writer: Any, file_path: Any) -> bool:
    from manim import config

    # manim's cache is partial movies: a cached play writes none, so one stream needs it off
    output = getattr(writer, "output_spec", None)  # manim 0.22's; 0.21 reads its config
    sections = config.save_sections if output is None else output.save_sections
    return bool(writer.__dict__.get(_ALLOWED, False) and file_path is None and config.disable_caching and not sections)


def _open(original: Callable[..., Any]) -> Callable[..., Any]:
    def open_partial_movie_stream(self: Any, file_path: Any = None) -> None:
        allowed = _allowed(self, file_path)
        job = _kept(self)
        if job is None or not allowed:
            original(self, file_path)
            if allowed:
                self.__dict__[_KEPT] = self._current_encode_job
            return
        self._current_encode_job = job  # the frames of this play follow the last play's
        self.partial_movie_file_path = job.path

    return open_partial_movie_stream


def _open_by_index(original: Callable[..., Any]) -> Callable[..., Any]:
    """manim 0.22's ``open_partial_movie_stream(*, animation_index, file_path=None)``, as :func:`_open`."""

    def open_partial_movie_stream(self: Any, *, animation_index: int, file_path: Any = None) -> None:
        allowed = _allowed(self, file_path)
        job = _kept(self)
        if job is None or not allowed:
            original(self, animation_index=animation_index, file_path=file_path)
            if allowed:
                self.__dict__[_KEPT] = self._current_encode_job
            return
        self._current_encode_job = job  # the frames of this play follow the last play's

    return open_partial_movie_stream


def _close(original: Callable[..., Any]) -> Callable[..., Any]:
    def close_partial_movie_stream(self: Any) -> None:
        job = _kept(self)
        if job is None or self._current_encode_job is not job:
            original(self)
            return
        self._current_encode_job = None  # kept open for the next play; sealed by finish

    return close_partial_movie_stream


def _finish(original: Callable[..., Any]) -> Callable[..., Any]:
    def finish(self: Any) -> None:
        job = _kept(self)
        if job is not None:  # sealed as manim seals a partial movie (before letting go of it), joined with the others
            job.seal()
            self._inflight_encode_jobs.append(job)
            self._inflight_by_path[str(job.path)] = job
            del self.__dict__[_KEPT]
        original(self)

    return finish


def _discard(writer: Any) -> None:
    """Seal the writer's open stream, if any, wait for its encoder and delete its file (an aborted render)."""
    job = _kept(writer)
    if job is None:
        return
    getattr(job, "abort", job.seal)()  # manim 0.22's job discards its segment when aborted; 0.21's is sealed
    del writer.__dict__[_KEPT]
    job.thread.join()
    Path(job.path).unlink(missing_ok=True)


def _abort(original: Callable[..., Any]) -> Callable[..., Any]:
    def abort_encode_jobs(self: Any, reraise_encoder_failures: bool = False) -> None:
        job = _kept(self)
        if job is not None and self._current_encode_job in (None, job):
            self._current_encode_job = job  # manim seals it, waits for it, deletes its file
            del self.__dict__[_KEPT]
        _discard(self)  # kept beside another open stream (never, as opened here): sealed here
        original(self, reraise_encoder_failures)

    return abort_encode_jobs


def _render(original: Callable[..., Any]) -> Callable[..., Any]:
    """``Scene.render``: manim aborts the encoders when ``construct`` fails; a failure after it
    (``tear_down``, a hook before ``finish``) would leave the open stream's encoder waiting for
    frames, and the process waiting for it at exit."""

    def render(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(self, *args, **kwargs)
        except BaseException:
            writer = getattr(getattr(self, "renderer", None), "file_writer", None)
            if writer is not None:
                _discard(writer)
            raise

    return render


def patches() -> list[Patch]:
    """One stream per scene; after anything else that wraps ``SceneFileWriter.open_partial_movie_stream``
    (:mod:`.encoding`), which it calls for the first play."""
    writer = "manim.scene.scene_file_writer:SceneFileWriter"
    init: tuple[str, ...]
    if segment_encoder():  # manim 0.22 (.versions)
        init = ("self", "scene", "session_spec", "file_writer_settings")
        opening = Patch(writer, "open_partial_movie_stream", _open_by_index, ("self", "animation_index", "file_path"))
    else:
        init = ("self", "scene")
        opening = Patch(writer, "open_partial_movie_stream", _open, ("self", "file_path"))
    return [
        Patch("manim.renderer.cairo_renderer:CairoRenderer", "init_scene", _init_scene, init),
        Patch("manim.scene.scene:Scene", "render", _render, ("self", "preview")),
        Patch(writer, "add_partial_movie_file", _add_partial_movie_file, ("self", "hash_animation")),
        opening,
        Patch(writer, "close_partial_movie_stream", _close, ("self",)),
        Patch(writer, "finish", _finish, ("self",)),
        Patch(writer, "abort_encode_jobs", _abort, ("self", "reraise_encoder_failures")),
    ]
