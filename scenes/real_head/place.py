"""Where the real head sits: the user's sentence as the model's tokens, the model's layers with the chosen one
lit, and that layer's heads with the chosen head lit: all-MiniLM-L6-v2's 6 layers of 12 heads of 32 numbers
(384 = 12 × 32), or SmolLM2-135M-Instruct's 30 layers of 9 query heads of 64 (576 = 9 × 64), three of which share
each of its 3 key/value heads.

Every number is a fact: the tokens' positions, the count of tokens, and the model's sizes and the
head's place from :class:`attention_math.minilm.ModelHead` or :class:`attention_math.smollm.SmolHead` (counted
from 1, as the lecture says).
"""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, Create, Line, RoundedRectangle, VGroup, VMobject

from attention_math.minilm import ModelHead
from scenes.facts import Fact, TokenPart, position, size
from scenes.kit.fades import fade_in
from scenes.kit.layout import HALF_WIDTH, TOP
from scenes.kit.palette import EMBEDDING, HIGHLIGHT, INK, KEY, MUTED, QUERY
from scenes.kit.text import SMALLEST_SIZE, token_text
from scenes.real_head.common import RealHeadScene

__all__ = ["RealHeadPlace"]

MODEL_NAME = "all-MiniLM-L6-v2"  # the model's own name, drawn as a name (its digits are not numbers)
DECODER_NAME = "SmolLM2-135M-Instruct"
CHIP_SIZE = 24
CHIP_GAP = 0.14
LINE_PITCH = 0.85  # between lines of token chips: a chip and its position under it
LAYERS_Y, HEADS_Y = -1.3, -2.6
DECODER_LAYERS_Y, DECODER_HEADS_Y = -0.7, -1.65  # higher: the heads' notes go under them (three lines)
SPECIAL = ("[CLS]", "[SEP]")


class RealHeadPlace(RealHeadScene):
    """The sentence as WordPieces, then the model's layers and the layer's heads, the chosen ones lit."""

    def construct(self) -> None:
        self.open_head()
        self.encoder = isinstance(self.head_found, ModelHead)
        name = MODEL_NAME if self.encoder else DECODER_NAME
        self.header("A real model: {}", parts=[TokenPart(name, len(name))])
        sentence, chips, count = self._tokens()
        told = ("WordPiece tokens: [CLS] first, [SEP] last, rarer words split into pieces marked ##." if self.encoder
                else "tokens of its own BPE: a space belongs to the word after it, every digit stands alone.")
        self.beat(
            f"{'MiniLM' if self.encoder else 'The model'} reads your sentence as {self.cite(size('n_tokens'))} {told}",
            fade_in(sentence), fade_in(chips), fade_in(count), wait=1.5,
        )
        layers, lit_layer, layer_note = self._layers()
        self.beat(
            f"Each token enters as {self.cite(Fact('place', 'd_model'))} numbers and passes "
            f"{self.cite(Fact('place', 'n_layers'))} layers; we open layer {self.cite(Fact('place', 'layer_number'))}.",
            fade_in(layers), fade_in(layer_note), Create(lit_layer), wait=1.2,
        )
        heads, lit_head, notes = self._heads(layers)
        self.chips, self.layers, self.lit_layer, self.heads, self.lit_head = chips, layers, lit_layer, heads, lit_head
        self.beat(
            f"Layer {self.cite(Fact('place', 'layer_number'))} has {self.cite(Fact('place', 'n_heads'))} heads of "
            f"{self.cite(Fact('place', 'd_head'))} numbers each; "
            f"this is head {self.cite(Fact('place', 'head_number'))}.",
            fade_in(heads), Create(lit_head), fade_in(notes[:2]), wait=1.5,
        )
        if not self.encoder:
            self._shared(heads, notes[2:])
        self.beat(
            f"Next: what head {self.cite(Fact('place', 'head_number'))} computes for "
            f"'{self.scenario.query_token}', and what it looks at.",
            wait=1.5,
        )

    # -- the sentence and its tokens ------------------------------------------------------------
    def _tokens(self) -> tuple[VMobject, VGroup, VMobject]:
        """The sentence as typed, then a chip per WordPiece (its position under it), wrapped in lines."""
        sentence = token_text(self.head_found.sentence, limit=64, size=24,
                              color=MUTED)
        sentence.move_to((0, TOP - 0.3, 0)).to_edge(LEFT, buff=0.4)
        chips = VGroup()
        for j, token in enumerate(self.scenario.tokens):
            special = token in SPECIAL and self.encoder
            word = token_text(token, size=CHIP_SIZE, color=MUTED if special else EMBEDDING)
            box = RoundedRectangle(width=word.width + 0.24, height=0.5, corner_radius=0.08, stroke_width=2,
                                   color=MUTED if special else EMBEDDING).move_to(word)
            number = self.label("{}", position(j), size=SMALLEST_SIZE, color=MUTED).next_to(box, DOWN, buff=0.08)
            chips.add(VGroup(box, word, number))
        x, y, width = -HALF_WIDTH + 0.1, sentence.get_bottom()[1] - 0.55, 2 * HALF_WIDTH - 0.2
        for chip in chips:
            if x + chip.width > -HALF_WIDTH + 0.1 + width:
                x, y = -HALF_WIDTH + 0.1, y - LINE_PITCH
            chip.shift((x - chip.get_left()[0], y - chip[0].get_top()[1], 0))  # the boxes' tops on one line
            x += chip.width + CHIP_GAP
        count = self.label("{} WordPiece tokens" if self.encoder else "{} tokens", size("n_tokens"), size=SMALLEST_SIZE,
                           color=INK)
        count.next_to(sentence, RIGHT, buff=0.5)
        if count.get_right()[0] > HALF_WIDTH:
            count.next_to(sentence, DOWN, buff=0.08, aligned_edge=LEFT)
        return sentence, chips, count

    # -- the model's layers, and the layer's heads ---------------------------------------------------
    def _layers(self) -> tuple[VGroup, RoundedRectangle, VGroup]:
        """A box per layer in a row ("layer 1" … "layer 6"; thirty narrow boxes numbered 1 … 30, their note
        under them); the chosen one outlined; the input's size beside them."""
        found = self.head_found
        wide = found.n_layers <= 6
        width, template = (1.3, "layer {}") if wide else (0.36, "{}")
        boxes = VGroup()
        for k in range(found.n_layers):
            number = Fact("place", "layer_number") if k == found.layer else position(k, "layer")  # the same digit
            name = self.label(template, number, size=SMALLEST_SIZE, color=INK)
            box = RoundedRectangle(width=width, height=0.55, corner_radius=0.08, stroke_width=2, color=MUTED)
            boxes.add(VGroup(box, name.move_to(box)))
        y = LAYERS_Y if self.encoder else DECODER_LAYERS_Y
        boxes.arrange(RIGHT, buff=0.18 if wide else 0.05).move_to((0, y, 0)).to_edge(LEFT, buff=0.4)
        lit = RoundedRectangle(width=width + 0.12, height=0.67, corner_radius=0.1, stroke_width=4, color=HIGHLIGHT)
        lit.move_to(boxes[found.layer])
        note = VGroup(
            self.label("{} layers", Fact("place", "n_layers"), size=SMALLEST_SIZE, color=MUTED),
            self.label("each token: d = {} numbers", Fact("place", "d_model"), size=SMALLEST_SIZE, color=MUTED),
        ).arrange(DOWN if wide else RIGHT, buff=0.1 if wide else 0.5, aligned_edge=LEFT if wide else DOWN)
        if wide:
            note.next_to(boxes, RIGHT, buff=0.35)
        else:
            note.next_to(boxes, UP, buff=0.15, aligned_edge=LEFT)
        return boxes, lit, note

    def _heads(self, layers: VGroup) -> tuple[VGroup, RoundedRectangle, VGroup]:
        """The chosen layer's twelve heads as numbered boxes; the chosen head outlined; what it owns."""
        found = self.head_found
        boxes = VGroup()
        for k in range(found.n_heads):
            box = RoundedRectangle(width=0.48, height=0.5, corner_radius=0.06, stroke_width=2,
                                   color=QUERY if k == found.head else MUTED)
            number = Fact("place", "head_number") if k == found.head else position(k, "head")
            boxes.add(VGroup(box, self.label("{}", number, size=SMALLEST_SIZE, color=INK).move_to(box)))
        y = HEADS_Y if self.encoder else DECODER_HEADS_Y
        boxes.arrange(RIGHT, buff=0.08).move_to((0, y, 0)).to_edge(LEFT, buff=0.4)
        links = VGroup(*(Line(layers[found.layer].get_corner(DOWN + side), boxes[end].get_corner(UP + side),
                              stroke_width=1.5, color=MUTED) for side, end in ((LEFT, 0), (RIGHT, -1))))
        lit = RoundedRectangle(width=0.58, height=0.6, corner_radius=0.08, stroke_width=4, color=HIGHLIGHT)
        lit.move_to(boxes[found.head])
        notes = VGroup(
            self.label("d = {} = {} heads × {}", Fact("place", "d_model"), Fact("place", "n_heads"),
                       Fact("place", "d_head"), size=SMALLEST_SIZE, color=MUTED),
            self.label("head {}: columns {} to {} of each W" if self.encoder else "head {}: columns {} to {} of W_Q",
                       Fact("place", "head_number"), Fact("place", "first_column"), Fact("place", "last_column"),
                       size=SMALLEST_SIZE, color=QUERY),
        )
        if not self.encoder:
            notes.add(self.label("keys, values: head {} of {}, columns {} to {} of W_K, W_V",
                                 Fact("place", "kv_head_number"), Fact("place", "n_kv_heads"),
                                 Fact("place", "kv_first_column"), Fact("place", "kv_last_column"),
                                 size=SMALLEST_SIZE, color=KEY))
        notes.arrange(DOWN, buff=0.1 if self.encoder else 0.08, aligned_edge=LEFT)
        if self.encoder:
            notes.next_to(boxes, RIGHT, buff=0.35)
        else:  # under the heads, clear of the lines from the layer (which may be the last, far right)
            notes.next_to(boxes, DOWN, buff=0.28, aligned_edge=LEFT)
        return VGroup(links, boxes), lit, notes

    def _shared(self, heads: VGroup, note: VMobject) -> None:
        """SmolLM2's grouped queries: the heads that read this head's keys and values, underlined as one group."""
        found = self.head_found
        assert not isinstance(found, ModelHead)
        group = found.sharing_heads
        boxes = heads[1]
        line = Line(boxes[group[0]].get_corner(DOWN + LEFT), boxes[group[-1]].get_corner(DOWN + RIGHT),
                    stroke_width=5, color=KEY).shift(DOWN * 0.1)
        self.beat(
            f"Heads {self.cite(position(group[0], 'head'))} to {self.cite(position(group[-1], 'head'))} share one "
            f"key/value head, {self.cite(Fact('place', 'kv_head_number'))} of {self.cite(Fact('place', 'n_kv_heads'))}:"
            " grouped-query attention, one cache for three heads.",
            Create(line), fade_in(note), wait=1.5,
        )
