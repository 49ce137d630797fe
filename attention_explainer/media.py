"""Video work with PyAV (no system ffmpeg): probe, join, last frame, contact sheet."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
from PIL import Image, ImageDraw, ImageFont

__all__ = ["VideoInfo", "contact_sheet", "join_videos", "last_frame", "probe"]


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


def probe(path: Path) -> VideoInfo:
    """Duration (s), size, frame rate, codec and whether frames carry alpha."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        if stream.duration is not None and stream.time_base is not None:
            duration = float(stream.duration * stream.time_base)
        elif container.duration is not None:
            duration = container.duration / av.time_base
        else:
            duration = 0.0
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
        )


def join_videos(clips: Sequence[Path], output: Path) -> None:
    """Join clips of one format end to end, without re-encoding (packets are copied).

    All clips must share codec, size and frame rate (they come from one render settings).
    Timestamps are shifted so each clip starts where the previous one ended.
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
            offset = 0  # in the output stream's time base
            for clip in clips:
                with av.open(str(clip)) as source:
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
                    offset = end


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
    """A grid of labelled stills, one per scene, as a PNG."""
    images = [(label, Image.open(path).convert("RGB")) for label, path in stills]
    if not images:
        raise ValueError("contact_sheet: no stills")
    ratio = images[0][1].height / images[0][1].width
    cell_w, cell_h, caption_h, pad = width, round(width * ratio), 28, 12
    rows = -(-len(images) // columns)
    sheet = Image.new("RGB", (pad + columns * (cell_w + pad), pad + rows * (cell_h + caption_h + pad)), "#0F1115")
    draw = ImageDraw.Draw(sheet)
    font = _font(18)
    for n, (label, image) in enumerate(images):
        x = pad + (n % columns) * (cell_w + pad)
        y = pad + (n // columns) * (cell_h + caption_h + pad)
        sheet.paste(image.resize((cell_w, cell_h)), (x, y))
        draw.text((x, y + cell_h + 4), label, fill="#ECEFF4", font=font)
    sheet.save(output)


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for name in ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default()
