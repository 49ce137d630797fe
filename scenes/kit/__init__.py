"""The visual kit of the explainer: one module per visual idea, shared by every scene.

- :mod:`scenes.kit.palette`: a colour per role (query, key, value, weight, ...), dim levels.
- :mod:`scenes.kit.text`: Pango text in the project's font, token shortening and escaping,
  right-to-left tokens, token labels.
- :mod:`scenes.kit.baselines`: a row's label, numbers and header standing on one baseline.
- :mod:`scenes.kit.layout`: the safe area under the header and above the subtitles, fitting.
- :mod:`scenes.kit.grids`: number grids in brackets, outlines of rows and columns.
- :mod:`scenes.kit.heatmap`: token × token grids, heat colours, row sums, focus on a row.
- :mod:`scenes.kit.mask`: the causal mask on a token grid: the staircase over the future, its
  greyed cells, the lower triangle of who reads whom.
- :mod:`scenes.kit.board`: a token grid fitted beside a panel of its own.
- :mod:`scenes.kit.composite`: a row joined from the heads' numbers (concat), each slot marked as its column
  and its head's.
- :mod:`scenes.kit.blocks`: matrices in column blocks, one per head, in the heads' colours; cut and regrouped.
- :mod:`scenes.kit.sequence`: a sentence as a row of token boxes written one at a time, and
  arrows from a token back to the tokens it may read.
- :mod:`scenes.kit.vectors`: planes and arrows.
- :mod:`scenes.kit.labels`: what labels keep off, and the one search that places them (variants: at a tip,
  near a point, by a dot with a leader line, an axis's name, an arrow's name).
- :mod:`scenes.kit.zoom`: a plane drawn (not filmed) at any scale: views, fitting, grid and axes, the
  close-up and pull-back between two views.
- :mod:`scenes.kit.formula`: the corner formula softmax(Q Kᵀ/√d_k) V and formula titles.
- :mod:`scenes.kit.motion`: numbers flying from where they are made to where they are used.
- :mod:`scenes.kit.stills`: what a play leaves alone drawn once, not every frame (its order in the scene).
- :mod:`scenes.kit.fades`: fades in place that change opacity only (no copy, no point moved), a group's cells
  refilled in one animation.

Nothing here knows a scenario or a trace: scenes pass in the numbers they recorded.
"""
