"""The visual kit of the explainer: one module per visual idea, shared by every scene.

- :mod:`scenes.kit.palette`: a colour per role (query, key, value, weight, ...), dim levels.
- :mod:`scenes.kit.text`: Pango text in the project's font, token shortening and escaping,
  right-to-left tokens, token labels.
- :mod:`scenes.kit.layout`: the safe area under the header and above the subtitles, fitting.
- :mod:`scenes.kit.grids`: number grids in brackets, outlines of rows and columns.
- :mod:`scenes.kit.heatmap`: token × token grids, heat colours, row sums, focus on a row.
- :mod:`scenes.kit.mask`: the causal mask's staircase over a token grid's future keys.
- :mod:`scenes.kit.blocks`: matrices in column blocks, one per head, in the heads' colours; cut and regrouped.
- :mod:`scenes.kit.vectors`: planes, arrows and label placement.
- :mod:`scenes.kit.formula`: the corner formula softmax(Q Kᵀ/√d_k) V and formula titles.
- :mod:`scenes.kit.motion`: numbers flying from where they are made to where they are used.

Nothing here knows a scenario or a trace: scenes pass in the numbers they recorded.
"""
