"""Video work with PyAV (no system ffmpeg): probe, join (pictures and sound), last frame, contact sheet."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
from PIL import Image, ImageDraw, ImageFont

__all__ = ["VideoInfo", "caption_font", "contact_sheet", "join_videos", "last_frame", "probe"]


_ALPHA_FORMATS = {"rgba", "bgra", "argb", "abgr", "ya8", "gbrap"}


@dataclass(frozen=True)
class VideoInfo:
    """What a player needs to know about a clip."""

    duration: float
    width: int
    height: int
    fps: float
    codec: str
    has_alpha: bool
    audio_duration: float | None = None  # seconds of sound; None: the clip has no sound track


def _stream_seconds(stream: Any, container: Any) -> float:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return float(container.duration / av.time_base)
    return 0.0


def probe(path: Path) -> VideoInfo:
    """Duration (s), size, frame rate, codec, whether frames carry alpha, and the sound's length."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        duration = _stream_seconds(stream, container)
        sound = container.streams.audio[0] if container.streams.audio else None
        audio_duration = _stream_seconds(sound, container) if sound is not None else None
        rate = stream.base_rate or stream.guessed_rate or stream.average_rate or Fraction(0)
        codec = stream.codec_context
        pix_fmt = codec.pix_fmt or ""
        # VP9 keeps alpha in a side channel flagged by the container; others in the pixel format.
        # (a copied track also keeps the flag as a tag, read back as "ALPHA_MODE")
        tags = {key.lower(): value for key, value in stream.metadata.items()}
        alpha = tags.get("alpha_mode") == "1" or pix_fmt.startswith("yuva") or pix_fmt in _ALPHA_FORMATS
        return VideoInfo(
            duration=duration,
            width=codec.width,
            height=codec.height,
            fps=float(rate),
            codec=codec.name,
            has_alpha=bool(alpha),
            audio_duration=audio_duration,
        )


def join_videos(clips: Sequence[Path], output: Path) -> None:
    """Join clips of one format end to end: pictures copied, sound joined into one track.

    All clips must share codec, size and frame rate (they come from one render settings). The
    video packets are copied without re-encoding, their timestamps shifted so each clip starts
    where the previous one ended. When every clip has sound (a narrated bundle), the sound is
    decoded and encoded again as one track in which each clip's sound starts with its pictures
    and lasts exactly as long (padded with silence or cut), so the lecture never drifts.
    """
    if not clips:
        raise ValueError("join_videos: no clips")
    with av.open(str(clips[0])) as first:
        template = first.streams.video[0]
        with av.open(str(output), "w", format=_container_format(output)) as out:
            out_stream = out.add_stream_from_template(template)
            if template.metadata.get("alpha_mode"):
                # WebM flags VP9's alpha in the track's tags, which the template leaves out:
                # without it players drop the alpha the packets carry.
                out_stream.metadata["alpha_mode"] = template.metadata["alpha_mode"]
            sound = _SoundTrack(out, first.streams.audio[0]) if all(_has_sound(clip) for clip in clips) else None
            offset = 0  # in the output stream's time base
            for clip in clips:
                with av.open(str(clip)) as source:
                    offset = _copy_pictures(source, out, out_stream, offset)
                if sound is not None:
                    with av.open(str(clip)) as source:  # read again: demuxing the pictures read it to the end
                        sound.add(source, until=float(offset * (out_stream.time_base or Fraction(1))))
            if sound is not None:
                sound.close()


def _has_sound(clip: Path) -> bool:
    with av.open(str(clip)) as container:
        return bool(container.streams.audio)


def _copy_pictures(source: Any, out: Any, out_stream: Any, offset: int) -> int:
    """Copy ``source``'s video packets into ``out`` from ``offset`` on; return where they end."""
    stream = source.streams.video[0]
    end = offset
    for packet in source.demux(stream):
        if packet.dts is None:
            continue
        shift = _rescale(offset, out_stream.time_base, stream.time_base)
        pts, dts, length = packet.pts, packet.dts, packet.duration or 0
        packet.pts = None if pts is None else pts + shift
        packet.dts = dts + shift
        packet.stream = out_stream
        out.mux(packet)
        stop = (pts if pts is not None else dts) + length
        end = max(end, offset + _rescale(stop, stream.time_base, out_stream.time_base))
    return end


_ENCODERS = {"vorbis": "libvorbis", "opus": "libopus"}  # decoder name -> the encoder PyAV has


class _SoundTrack:
    """One sound track built from the clips' sound, sample-exact at each clip's start."""

    def __init__(self, out: Any, template: Any) -> None:
        context = template.codec_context
        self.rate = int(context.sample_rate)
        self.layout = context.layout.name
        self.stream = out.add_stream(_ENCODERS.get(context.name, context.name), rate=self.rate)
        self.stream.codec_context.layout = self.layout
        self.out = out
        self.chunk = self.stream.codec_context.frame_size or 1024
        self.planar = av.AudioResampler(format="fltp", layout=self.layout, rate=self.rate)
        self.encoder_format = self.stream.codec_context.format.name
        self.pending = np.zeros((len(context.layout.channels), 0), dtype=np.float32)
        self.placed = 0  # samples placed so far (given to the encoder or pending)
        self.encoded = 0  # samples given to the encoder

    def add(self, source: Any, until: float) -> None:
        """Add ``source``'s sound, padded or cut to end at ``until`` seconds of the lecture."""
        pieces: list[Any] = [self.pending[:, :0]]
        for frame in source.decode(source.streams.audio[0]):
            pieces += [f.to_ndarray() for f in self.planar.resample(frame)]
        pieces += [f.to_ndarray() for f in self.planar.resample(None)]
        samples = np.concatenate(pieces, axis=1).astype(np.float32)
        wanted = max(0, round(until * self.rate) - self.placed)
        samples = samples[:, :wanted]
        if samples.shape[1] < wanted:
            samples = np.pad(samples, ((0, 0), (0, wanted - samples.shape[1])))
        self.placed += wanted
        self.pending = np.concatenate([self.pending, samples], axis=1)
        while self.pending.shape[1] >= self.chunk:
            self._encode(self.pending[:, : self.chunk])
            self.pending = self.pending[:, self.chunk :]

    def close(self) -> None:
        """Encode what is left and flush the encoder."""
        if self.pending.shape[1]:
            self._encode(self.pending)
        for packet in self.stream.encode(None):
            self.out.mux(packet)

    def _encode(self, samples: np.ndarray) -> None:
        frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(samples), format="fltp", layout=self.layout)
        frame.sample_rate = self.rate
        frames = [frame]
        if self.encoder_format != "fltp":
            convert = av.AudioResampler(format=self.encoder_format, layout=self.layout, rate=self.rate)
            frames = [*convert.resample(frame), *convert.resample(None)]
        for piece in frames:
            piece.pts = self.encoded
            piece.time_base = Fraction(1, self.rate)
            self.encoded += piece.samples
            for packet in self.stream.encode(piece):
                self.out.mux(packet)


def _rescale(value: int, source: Fraction | None, target: Fraction | None) -> int:
    if source is None or target is None or source == target:
        return int(value)
    return round(value * source / target)


def _container_format(path: Path) -> str | None:
    return {".mp4": "mp4", ".mov": "mov", ".webm": "webm", ".gif": "gif"}.get(path.suffix.lower())


def last_frame(video: Path, png: Path) -> None:
    """Save the clip's last frame as a PNG (with alpha when the clip has it).

    Decoding starts at the keyframe before the last two seconds, not at the start: a 1080p60
    lecture decoded whole took longer than joining it.
    """
    last = _last_decoded(video, seek=True) or _last_decoded(video, seek=False)
    if last is None:
        raise ValueError(f"{video}: no frames")
    last.to_image().save(png)  # type: ignore[no-untyped-call]  # PyAV leaves it unannotated


def _last_decoded(video: Path, *, seek: bool) -> av.VideoFrame | None:
    last = None
    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        if seek:
            if not container.duration or container.duration <= _TAIL:
                return None  # short, or of unknown length: decode it all
            try:
                container.seek(container.duration - _TAIL, backward=True, any_frame=False)
            except av.error.FFmpegError:
                return None
        if stream.codec_context.name == "vp9":
            # libvpx-vp9 decodes the alpha plane that the native vp9 decoder drops.
            codec = av.CodecContext.create("libvpx-vp9", "r")
            codec.extradata = stream.codec_context.extradata
            for packet in container.demux(stream):
                for frame in codec.decode(packet):
                    last = frame
            try:
                for frame in codec.decode(None):  # flush the decoder's last frames
                    last = frame
            except EOFError:
                pass
        else:
            for frame in container.decode(stream):
                last = frame
    return last


_TAIL = 2_000_000  # two seconds, in av.time_base (microseconds)


def contact_sheet(stills: Sequence[tuple[str, Path]], output: Path, *, columns: int = 3, width: int = 480) -> None:
    """A grid of labelled stills, one per scene, as a PNG: ``columns`` stills of ``width`` pixels
    a row; fewer stills than ``columns`` share the same width between them (no empty tiles)."""
    images = [(label, Image.open(path).convert("RGB")) for label, path in stills]
    if not images:
        raise ValueError("contact_sheet: no stills")
    ratio = images[0][1].height / images[0][1].width
    pad = 12
    if len(images) < columns:  # one or two scenes: larger stills across the same width
        width = (columns * (width + pad) - pad - (len(images) - 1) * pad) // len(images)
        columns = len(images)
    cell_w, cell_h, caption_h = width, round(width * ratio), 28
    rows = -(-len(images) // columns)
    sheet = Image.new("RGB", (pad + columns * (cell_w + pad), pad + rows * (cell_h + caption_h + pad)), "#0F1115")
    draw = ImageDraw.Draw(sheet)
    font = caption_font(18)
    for n, (label, image) in enumerate(images):
        x = pad + (n % columns) * (cell_w + pad)
        y = pad + (n // columns) * (cell_h + caption_h + pad)
        sheet.paste(image.resize((cell_w, cell_h)), (x, y))
        draw.text((x, y + cell_h + 4), label, fill="#ECEFF4", font=font)
    sheet.save(output)


def caption_font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """DejaVu Sans at ``size`` pixels (Pillow's own font where it is missing): contact sheet, captions."""
    for name in ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default()
