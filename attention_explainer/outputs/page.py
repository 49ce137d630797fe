"""The lecture page, ``index.html``: the whole bundle on one page that works offline, from any folder.

At the top the scenario's title and numbers (tokens, sizes, the query's weights and context
vector); then the whole lecture and every clip as ``<video>`` with its WebVTT subtitles as a
``<track>``, its narration beside it (each line a button that plays from there) and its still;
the handout's tables as HTML; links to every file. Plain HTML and CSS and one small script of
its own; every link is relative and nothing loads from the network (a Content-Security-Policy
lets the page load only files beside it and run only its own script, by hash).

Browsers treat every ``file://`` page as a world of its own and refuse it its subtitle files;
the script then gives each ``<track>`` the same cues from the page itself (``data-vtt``, a
``data:`` URL), so a page opened from a USB stick shows its subtitles too.

User text (title, tokens, the captions that quote them) is HTML-escaped everywhere, and
invisible characters are shown as escapes (:func:`attention_explainer.escape.visible`); the
script only ever sets ``textContent``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import srt

from attention_math import Scenario, format_number
from scenes.registry import DEFAULT_LECTURE

from ..escape import visible
from .handout import handout_tables
from .lectures import lecture_steps
from .steps import QueryRow, Table
from .subtitles import to_webvtt

if TYPE_CHECKING:
    from ..plan import BundlePlan, SceneSpec
    from ..staging import Staging

__all__ = ["SCRIPT", "STYLE", "handout_section", "lecture_page", "scenario_summary", "scene_words"]

STYLE = """
body { font: 16px/1.45 "DejaVu Sans", system-ui, sans-serif; margin: 0 auto; max-width: 78rem;
  padding: 1rem 1.5rem 3rem; color: #1d2027; background: #fbfbfc; }
h1 { font-size: 1.7rem; margin: .5rem 0 .2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ccd; }
.facts { display: flex; flex-wrap: wrap; gap: .4rem 1.6rem; margin: .6rem 0; padding: 0; list-style: none; }
.token { font-family: "DejaVu Sans Mono", monospace; background: #e8ebf3; border-radius: .25rem; padding: 0 .3rem;
  unicode-bidi: isolate; }
.clip { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 1rem; align-items: start; }
video, img.still { width: 100%; height: auto; background: #0f1115; border-radius: .3rem; }
video { aspect-ratio: 16 / 9; }
ol.narration { margin: 0; padding-left: 0; list-style: none; max-height: 28rem; overflow-y: auto; }
ol.narration li { padding: .25rem .4rem; border-radius: .25rem; unicode-bidi: plaintext; }
ol.narration li.now { background: #fff1c7; }
button.cue { font: inherit; font-size: .8rem; border: 1px solid #aab; background: #fff; border-radius: .2rem;
  margin-right: .4rem; cursor: pointer; }
table { border-collapse: collapse; margin: .4rem 0 1.2rem; } caption { text-align: left; font-weight: bold; }
td, th { padding: .15rem .6rem; border-bottom: 1px solid #dde; } td.n { text-align: right;
  font-family: "DejaVu Sans Mono", monospace; }
th { unicode-bidi: isolate; } .tables { display: flex; flex-wrap: wrap; gap: 0 2rem; }
.weights h3 { font-size: 1rem; margin: .8rem 0 .3rem; }
.weights dl { display: flex; flex-wrap: wrap; margin: 0; }
.weights dl div { padding: .15rem .6rem; border-bottom: 1px solid #dde; text-align: center; }
.weights dl div.query { background: #fff1c7; }
.weights dt { font-weight: bold; unicode-bidi: isolate; } .weights dd { margin: 0;
  font-family: "DejaVu Sans Mono", monospace; }
.weights dl div.masked { color: #8a8f9c; background: #eef0f4; } .weights dd.note { font: italic .75rem sans-serif; }
p.lecture { margin: .8rem 0 0; color: #55607a; font-weight: bold; letter-spacing: .02em; }
p.formula code { font: 1.15rem "DejaVu Sans Mono", monospace; background: #eef1f8; padding: .2rem .5rem;
  border-radius: .25rem; } .vectors p { margin: .2rem 0; font-family: "DejaVu Sans Mono", monospace; }
@media (max-width: 50rem) { .clip { grid-template-columns: 1fr; } }
"""

SCRIPT = """
"use strict";
for (const track of document.querySelectorAll("track[data-vtt]")) {
  const fallback = () => {
    if (track.src.startsWith("data:")) return;
    track.src = "data:text/vtt;charset=utf-8," + encodeURIComponent(track.dataset.vtt);
  };
  track.addEventListener("error", fallback);
  if (track.readyState === 3) fallback();
}
for (const list of document.querySelectorAll("ol.narration[data-video]")) {
  const video = document.getElementById(list.dataset.video);
  if (!video) continue;
  const items = Array.from(list.querySelectorAll("li"));
  for (const item of items) {
    item.querySelector("button.cue").addEventListener("click", () => {
      video.currentTime = Number(item.dataset.start);
      video.play();
    });
  }
  video.addEventListener("timeupdate", () => {
    for (const item of items) {
      const now = video.currentTime >= Number(item.dataset.start) && video.currentTime < Number(item.dataset.end);
      item.classList.toggle("now", now);
    }
  });
}
"""


def _e(text: str) -> str:
    """User or file text for HTML: invisible characters as escapes, then HTML-escaped."""
    return html.escape(visible(text), quote=True)


def _hash_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _policy() -> str:
    """Load only files beside the page (and the subtitles' ``data:`` copies); run only our script."""
    return (
        "default-src 'none'; media-src 'self' file: data:; img-src 'self' file: data:; "
        f"style-src {_hash_source(STYLE)}; script-src {_hash_source(SCRIPT)}; "
        "base-uri 'none'; form-action 'none'"
    )


def scene_words(name: str) -> str:
    """A class name as the lecture says it (the page's and the PowerPoint deck's headings).

    >>> scene_words("ScaleAndSoftmax"), scene_words("KVCacheSteps")
    ('Scale and softmax', 'KV cache steps')
    """
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name).split()
    said = " ".join(word if word.isupper() and len(word) > 1 else word.lower() for word in words)
    return said[:1].upper() + said[1:]


def _weight_row(scenario: Scenario, row: QueryRow) -> str:
    """The query's weight under each key, wrapping (16 keys in one table row ran off a laptop's page)."""
    p = scenario.precision
    cells = []
    for j, (token, w, masked) in enumerate(zip(scenario.tokens, row.weights, row.masked, strict=True)):
        classes = " ".join(name for name, on in (("query", j == scenario.query), ("masked", masked)) if on)
        mark = f' class="{classes}"' if classes else ""
        note = '<dd class="note">masked</dd>' if masked else ""
        cells.append(f"<div{mark}><dt>{_e(token)}</dt><dd>{format_number(w, p)}</dd>{note}</div>")
    name, values = row.vector
    return (
        f'<section class="weights"><h3>{_e(row.heading)}</h3><dl>{"".join(cells)}</dl>'
        f"<p>{_e(name)} = ({', '.join(format_number(v, p) for v in values)})</p></section>"
    )


def scenario_summary(scenario: Scenario, lecture: str = DEFAULT_LECTURE) -> str:
    """The top of the page: the lecture's name, intro and formula; the scenario's tokens and sizes; the
    query's weights and vectors as the lecture computes them (its ``LectureSteps``' ``page``)."""
    summary = lecture_steps(lecture).page(scenario)
    p = scenario.precision
    tokens = " ".join(f'<span class="token">{_e(token)}</span>' for token in scenario.tokens)
    facts = [
        f"{scenario.n_tokens} tokens: {tokens}",
        f'query: token {scenario.query + 1}, <span class="token">{_e(scenario.query_token)}</span>',
        _e(summary.sizes) or f"d_in = {scenario.d_in}, d_k = {scenario.d_k}, d_v = {scenario.d_v}",
        f"{p} decimals{' (rounded)' if scenario.rounded else ''}, "
        f"{_e(summary.scaling) or ('scaled by √d_k' if scenario.scaled else 'not scaled')}",
        *(_e(fact) for fact in summary.facts),
    ]
    vectors = "".join(
        f"<p>{_e(name)} = ({', '.join(format_number(v, p) for v in values)})</p>" for name, values in summary.vectors
    )
    joined = f'<section class="vectors">{vectors}</section>' if vectors else ""
    return (
        f'<p class="intro">{_e(summary.intro)}</p><p class="formula"><code>{_e(summary.formula)}</code></p>'
        f'<ul class="facts">{"".join(f"<li>{fact}</li>" for fact in facts)}</ul>'
        f'{"".join(_weight_row(scenario, row) for row in summary.rows)}'
        f"{joined}"
    )


def _video(rel: str, vtt: str, video_id: str, subrip: str, poster: str) -> str:
    """A clip as ``<video>`` (``<img>`` for a gif) with its subtitles, the file's and the page's copy.

    Until it plays, a video shows ``poster`` (a summary still) rather than its first frame, which
    is the scene's title alone.
    """
    if rel.endswith(".gif"):
        return f'<img class="still" id="{video_id}" src="{_e(rel)}" alt="">'
    cues = _e(to_webvtt(subrip))
    return (
        f'<video id="{video_id}" controls preload="metadata" src="{_e(rel)}" poster="{_e(poster)}">'
        f'<track kind="subtitles" srclang="en" label="English" default src="{_e(vtt)}" data-vtt="{cues}">'
        f'Your browser plays no video: <a href="{_e(rel)}">{_e(rel)}</a></video>'
    )


def _narration(subrip: str, video_id: str) -> str:
    """The clip's captions beside it, each a button that plays the clip from there."""
    items = []
    for cue in srt.parse(subrip):
        start, end = cue.start.total_seconds(), cue.end.total_seconds()
        minutes, seconds = divmod(start, 60)
        items.append(
            f'<li data-start="{start:.3f}" data-end="{end:.3f}"><button class="cue" type="button">'
            f"{int(minutes):02d}:{seconds:04.1f}</button>{_e(cue.content)}</li>"
        )
    return f'<ol class="narration" data-video="{video_id}">{"".join(items)}</ol>'


def _clip_section(plan: BundlePlan, staging: Staging, spec: SceneSpec, duration: float) -> str:
    subrip = staging.current(f"{spec.stem}.srt").read_text(encoding="utf-8")
    video_id = f"clip-{spec.stem}"
    still = f"stills/{spec.stem}.png"
    return (
        f'<section id="{spec.stem}"><h2>{spec.number}. {_e(scene_words(spec.name))}</h2>'
        f'<div class="clip"><div>{_video(plan.clip(spec), f"{spec.stem}.vtt", video_id, subrip, still)}'
        f'<p><a href="{_e(plan.clip(spec))}">{_e(plan.clip(spec))}</a> ({duration:.1f} s) · '
        f'<a href="{spec.stem}.srt">{spec.stem}.srt</a> · <a href="{spec.stem}.vtt">{spec.stem}.vtt</a> · '
        f'<a href="{still}">still</a></p></div>{_narration(subrip, video_id)}</div>'
        f'<a href="{still}"><img class="still" src="{still}" alt="the last frame of scene {spec.number}"></a>'
        "</section>"
    )


def _lecture_section(plan: BundlePlan, staging: Staging) -> str:
    lecture = f"lecture.{plan.settings.extension}"
    subrip = staging.current("lecture.srt").read_text(encoding="utf-8")
    # the contact sheet once it has rows of scenes (three a row); one row is a strip that shows them small
    poster = "stills/contact-sheet.png" if len(plan.chosen) > 3 else f"stills/{plan.chosen[-1].stem}.png"
    return (
        '<section id="lecture"><h2>The whole lecture</h2>'
        f'<div class="clip"><div>{_video(lecture, "lecture.vtt", "clip-lecture", subrip, poster)}'
        f'<p><a href="{lecture}">{lecture}</a> · <a href="lecture.srt">lecture.srt</a> · '
        '<a href="lecture.vtt">lecture.vtt</a> · <a href="narration.md">narration.md</a> · '
        '<a href="stills/contact-sheet.png">contact sheet</a></p></div>'
        f"{_narration(subrip, 'clip-lecture')}</div></section>"
    )


def _matrix_table(table: Table, precision: int) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in ["", *table.columns])
    body = "".join(
        f"<tr><th>{_e(label)}</th>"
        + "".join(f'<td class="n">{table.shown(float(v), precision)}</td>' for v in row)
        + "</tr>"
        for label, row in zip(table.rows, table.values, strict=True)
    )
    return f"<table><caption>{_e(table.caption)}</caption><tr>{head}</tr>{body}</table>"


def handout_section(scenario: Scenario, lecture: str) -> str:
    """Every table of the lecture's handout (the registry's, as the handout writes them), with links."""
    tables = []
    for table in handout_tables(scenario, lecture):
        links = f' (<a href="handout/{table.stem}.csv">CSV</a>, <a href="handout/{table.stem}.tex">LaTeX</a>)'
        tables.append(f"<div>{_matrix_table(table, scenario.precision)}{links}</div>")
    walkthrough = (
        'the <a href="handout/walkthrough.md">walkthrough</a> works one query by hand, and '
        if lecture_steps(lecture).walkthrough
        else ""
    )
    return (
        '<section id="handout"><h2>The handout</h2><p>Every step at the lecture\'s precision; '
        f'{walkthrough}the <a href="handout/notebook.ipynb">notebook</a> computes every step in numpy.</p>'
        f'<div class="tables">{"".join(tables)}</div></section>'
    )


def _files_section(files: Sequence[dict[str, Any]]) -> str:
    def row(entry: dict[str, Any]) -> str:
        rel, kind = _e(str(entry["path"])), _e(str(entry["kind"]))
        return f'<tr><td><a href="{rel}">{rel}</a></td><td>{kind}</td><td class="n">{entry["bytes"]:,}</td></tr>'

    main = [row(e) for e in files if e["kind"] not in {"deck-asset", "deck-library"}]
    deck = [row(e) for e in files if e["kind"] in {"deck-asset", "deck-library"}]
    extra = f"<details><summary>the deck's {len(deck)} files</summary><table>{''.join(deck)}</table></details>"
    return (
        '<section id="files"><h2>Every file</h2><table><tr><th>file</th><th>kind</th><th>bytes</th></tr>'
        f'{"".join(main)}<tr><td><a href="manifest.json">manifest.json</a></td><td>manifest</td><td></td></tr>'
        f"</table>{extra if deck else ''}</section>"
    )


def lecture_page(
    plan: BundlePlan, staging: Staging, files: Sequence[dict[str, Any]], durations: dict[str, float]
) -> str:
    """The lecture page of the bundle being staged.

    Parameters
    ----------
    plan, staging
        The build: its scenario, settings and scenes, and the files as the new bundle has them.
    files
        The manifest's entries of every file but the page itself (the page links to each).
    durations
        Each scene's clip length in seconds, by class name.

    Returns
    -------
    str
        The HTML of ``index.html``.
    """
    title = _e(plan.scenario.title)
    lecture = _e(lecture_steps(plan.lecture).page(plan.scenario).lecture)
    deck = any(entry["kind"] == "deck" for entry in files)
    links = ['<a href="#lecture">the lecture</a>']
    links += [f'<a href="#{s.stem}">{s.number}. {_e(scene_words(s.name))}</a>' for s in plan.chosen]
    links += ['<a href="slides.html">the slide deck</a>'] if deck else []
    links += ['<a href="lecture.pptx">the PowerPoint deck</a>'] if any(e["kind"] == "pptx" for e in files) else []
    links += ['<a href="#handout">handout</a>', '<a href="handout/notebook.ipynb">notebook</a>']
    links += ['<a href="#files">every file</a>']
    clips = "".join(_clip_section(plan, staging, spec, durations[spec.name]) for spec in plan.chosen)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_policy()}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title} · {lecture}</title><style>{STYLE}</style></head>\n<body><header>"
        f'<p class="lecture">{lecture}</p><h1>{title}</h1><nav>{" · ".join(links)}</nav>'
        f"{scenario_summary(plan.scenario, plan.lecture)}</header>\n"
        f"<main>{_lecture_section(plan, staging)}{clips}{handout_section(plan.scenario, plan.lecture)}"
        f"{_files_section(files)}</main>\n<script>{SCRIPT}</script></body></html>\n"
    )

