"""attention-explainer: from a scenario to a lecture-ready bundle of clips, subtitles, slides,
stills and handout tables. The numbers come from :mod:`attention_math`, the pictures from the
Manim scenes in :mod:`scenes`; see ``attention-explainer --help``.
"""

__all__: list[str] = []
