"""What a bundle delivers besides its clips, each from the bundle's plan (:mod:`attention_explainer.plan`).

:mod:`~attention_explainer.outputs.page` the lecture page, :mod:`~attention_explainer.outputs.slides`
the HTML slide deck, :mod:`~attention_explainer.outputs.pptx` the PowerPoint deck,
:mod:`~attention_explainer.outputs.handout` the handout's tables and
walkthrough, :mod:`~attention_explainer.outputs.notebook` its notebook (both the lecture's own steps:
:mod:`~attention_explainer.outputs.lectures` finds them in each lecture's folder, made of
:mod:`~attention_explainer.outputs.steps`),
:mod:`~attention_explainer.outputs.subtitles` the WebVTT subtitles and the lecture's joined ones,
:mod:`~attention_explainer.outputs.narration` the narration (every caption with its time), and
:mod:`~attention_explainer.outputs.captions` the captions the runner burns into the frames.
None of them imports the bundle; importing this package imports none of them.
"""

__all__: list[str] = []
