"""A trained model's attention, head by head: the 12 heads of a layer and one head token by token."""

import base64
from dataclasses import dataclass, replace

import numpy as np
import torch
from matplotlib import rcParams
from matplotlib.collections import LineCollection
from matplotlib.patches import Rectangle

from .._checks import check_choice
from ..i18n import N_, _
from ..plotting import CMAP, describe_weights
from ..pretrained import EXAMPLE_SENTENCES, CachedMiniLM, chapter_model
from .declaration import Choice, Declaration, IntSlider, Result, Row, options
from .explorer import Explorer
from .export import Recipe
from .figure import DPI, PIXEL_RATIO

__all__ = ["HeadView", "explore_head_view"]

MAX_TOKENS = 40  # beyond this the token labels no longer fit the picture
LINE_FLOOR = 0.02  # the token view leaves out the lines of smaller weights
# What compute, describe, choices and the view say, which the page script says too (HeadView.script_words).
EVERY_TOKEN = N_("every token")
TOKEN = N_("token {query} ({token!r})")
CAPTION = N_("layer {layer}, head {head}: where {who} looks, in {sentence!r}")
SUMMARY = N_("Layer {layer}, head {head}: {summary}")
MAP_TITLE = N_("layer {layer}, head {head}")  # the heatmap's
ALL_TOKENS = N_("all tokens")  # the query menu's first option


def figure_size(num_tokens):
    """The figure of a sentence of ``num_tokens``: the heatmap's side grows with it. In steps of
    1/40 inch, so that the picture is a whole number of CSS pixels at DPI 80 (and the PNG, at
    PIXEL_RATIO 2, exactly twice that)."""
    height = round(max(3.4, 0.17 * num_tokens + 1.6) * 40) / 40
    return 6.2 + height, height


@dataclass(frozen=True)
class HeadViewSettings:
    sentence: str = EXAMPLE_SENTENCES[0]
    layer: int = 3
    head: int = 1
    query: object = "all"  # "all", or the index of one token


@dataclass(frozen=True)
class HeadViewResult(Result):
    """``weights`` are the layer's heads (heads, T, T)."""

    head_map: torch.Tensor  # (T, T): the head chosen, row i = where token i looks
    lines: torch.Tensor  # (T, T): head_map, or its query row alone
    layer: int
    head: int
    query: object
    tokens: list


class HeadView(Declaration):
    """all-MiniLM-L6-v2's attention over one sentence: a layer's 12 heads as thumbnails, the head
    chosen as a labelled heatmap (rows = queries, columns = keys), and the same weights as lines
    from each token on the left to the tokens it attends to on the right (width and colour =
    weight; weights under 2% are left out). A query menu keeps one token's lines.

    ``model`` is anything with ``sentences``, ``tokenize(text)`` and ``attention(text)``:
    ``chapter_model()`` by default, the live model when it is installed (then the sentence box
    takes any text: type it and press Enter) or the cached example sentences otherwise.
    Each sentence has a figure of its own (its token labels), its layout, built when the
    sentence is first shown; the attention maps of a sentence are asked of the model once, so
    moving the layer or the head only redraws.
    """

    chapter = 9
    title = N_("Head view explorer")
    Settings = HeadViewSettings
    rows = (Row(("sentence",)), Row(("layer", "head", "query")))
    filename = "head_view.png"
    repr_controls = ("sentence", "layer", "head")
    # 5 sentences × 72 heads × (T + 1) queries: 5,544 states (one sentence's 1,224 stored took 2 MB),
    # so the page computes them from the cached maps.
    page_script = "head_view.js"
    script_words = {"every token": EVERY_TOKEN, "token": TOKEN, "caption": CAPTION, "summary": SUMMARY,
                    "title": MAP_TITLE, "all tokens": ALL_TOKENS}
    page_note = N_("The page offers the chapter's example sentences. To look at a sentence of your own, run the "
                   "chapter with the model installed: its sentence box takes any text.")

    def __init__(self, model=None):
        self.model = chapter_model() if model is None else model
        self.examples = tuple(self.model.sentences)
        self._read = {}  # sentence -> (its tokens, its (layers, heads, T, T) attention), as the model gave them
        num_layers, num_heads = self.attention(self.examples[0])[1].shape[:2]
        if getattr(self.model, "live", True):  # any sentence: a box with the examples as suggestions
            sentence = Choice("sentence", N_("sentence"), options(self.examples), style="combobox", free_text=True,
                              tooltip=N_("type a sentence, then press Enter"))
        else:  # the cached examples only
            sentence = Choice("sentence", N_("sentence"), options(self.examples))
        self.controls = (
            sentence,
            IntSlider("layer", N_("layer"), 0, num_layers - 1),
            IntSlider("head", N_("head"), 0, num_heads - 1),
            # The labels name the sentence's tokens (``choices``).
            Choice("query", N_("query"), ((ALL_TOKENS, "all"), *((str(i), i) for i in range(MAX_TOKENS)))),
        )

    @classmethod
    def for_page(cls):
        """The cached example sentences, with no model: the page is built offline, in seconds."""
        return cls(CachedMiniLM())

    def attention(self, sentence):
        """(tokens, (layers, heads, T, T) attention) of ``sentence``, asked of the model once."""
        if sentence not in self._read:
            tokens = self.model.tokenize(sentence)
            if len(tokens) > MAX_TOKENS:
                raise ValueError(f"sentence has {len(tokens)} tokens, and the explorer draws at most {MAX_TOKENS}: "
                                 f"try a shorter one")
            self._read[sentence] = tokens, self.model.attention(sentence)
        return self._read[sentence]

    def checked_settings(self, **values):
        """``Settings``, checked: a sentence given by the model first (its error says how to try
        any sentence, or that it has too many tokens), then each control, then the query
        against the sentence's tokens."""
        if "sentence" in values:
            self.attention(values["sentence"])
        settings = super().checked_settings(**values)
        check_choice(settings.query, "query", list(self.choices(settings)["query"]))
        return settings

    def all_layouts(self):
        # None drawn ahead: preparing the example sentences in idle time kept the kernel busy
        # for seconds after a cell ran, and the first slider moves waited for it.
        return {}

    def figsize_for(self, layout):
        return figure_size(len(self.attention(layout)[0]))

    def page_layouts(self):
        """Every example sentence's figure (the kernel builds each as it is first shown)."""
        return self.examples

    def page_values(self):
        """The query menu's values up to the longest example's last token (a sentence's own: ``choices``)."""
        longest = max(len(self.attention(sentence)[0]) for sentence in self.examples)
        return {"query": ("all", *range(longest))}

    def page_data(self):
        """Per example sentence its tokens and its maps (layers, heads, T, T) as the cache stores them:
        float16, little-endian, in base64 (a third of the size of the numbers written out); the
        line floor, the canvas pixels per point (the lines' widths) and the title's pad in pixels."""
        point = DPI * PIXEL_RATIO / 72
        sentences = {}
        for sentence in self.examples:
            tokens, maps = self.attention(sentence)
            half = maps.half().numpy().astype("<f2")  # exact: the maps are float16 values
            sentences[sentence] = {"tokens": tokens, "shape": list(maps.shape),
                                   "maps": base64.b64encode(half.tobytes()).decode("ascii")}
        return {"sentences": sentences, "line_floor": LINE_FLOOR, "point": point,
                "title_pad": rcParams["axes.titlepad"] * point}

    def adjust(self, settings, changed):
        if changed == "sentence":  # a sentence the explorer cannot show fails here, the query menu untouched
            self.attention(settings.sentence)
            return replace(settings, query="all")
        return settings

    def choices(self, settings):
        tokens = self.attention(settings.sentence)[0]
        return {"query": {"all": ALL_TOKENS, **{i: f"{i}: {token}" for i, token in enumerate(tokens)}}}

    def compute(self, settings):
        sentence, layer, head, query = settings.sentence, settings.layer, settings.head, settings.query
        tokens, maps = self.attention(sentence)  # maps: (layers, heads, T, T)
        head_map = maps[layer, head]  # (T, T): row i = where token i looks
        lines = head_map if query == "all" else torch.zeros_like(head_map).index_copy_(
            0, torch.tensor([query]), head_map[query:query + 1])
        who = _(EVERY_TOKEN) if query == "all" else _(TOKEN).format(query=query, token=tokens[query])
        caption = _(CAPTION).format(layer=layer, head=head, who=who, sentence=sentence)
        return HeadViewResult(maps[layer], caption,
                              layout=sentence, head_map=head_map, lines=lines, layer=layer, head=head, query=query,
                              tokens=tokens)

    def build(self, blit):
        tokens, maps = self.attention(blit.layout)
        return SentenceView(blit, tokens, maps.shape[1])

    def describe(self, result):
        """The head chosen, token by token (or the query chosen alone)."""
        tokens, query = result.tokens, result.query
        summary = describe_weights(result.head_map, query_labels=tokens, key_labels=tokens,
                                   queries=None if query == "all" else [query])
        return _(SUMMARY).format(layer=result.layer, head=result.head, summary=summary)

    def recipe(self, result):
        inputs = {"tokens": result.tokens, "head": result.head, "layer": result.layer}
        return Recipe(inputs, """
            # (heads, queries, keys): every head of the layer, as the model gave them
            weights = torch.from_numpy(saved["weights"])
            tokens = saved["tokens"].tolist()
        """, rebuilt=False, why="they come from a trained model, which is not saved",
            drawn='weights[int(saved["head"])]', titles=[f"layer {result.layer}, head {result.head}"],
            draw="""
            fig.axes[0].set_xticks(range(len(tokens)), tokens, rotation=90, fontsize="small")
            fig.axes[0].set_yticks(range(len(tokens)), tokens, fontsize="small")
        """)


class SentenceView:
    """One sentence's figure: the thumbnails of a layer's heads (the one chosen framed), the head
    chosen with the tokens, and its weights as lines from query to key."""

    def __init__(self, blit, tokens, num_heads):
        T = len(tokens)
        figure = blit.figure
        columns = figure.add_gridspec(1, 3, width_ratios=(3.4, figure.get_figheight() - 0.6, 2.2))
        thumbs = columns[0].subgridspec(-(-num_heads // 4), 4)
        self.thumbnails, self.frames = [], []
        for h in range(num_heads):
            ax = figure.add_subplot(thumbs[h // 4, h % 4])
            self.thumbnails.append(blit.heatmap(ax, T, T, xlabel="", ylabel=""))
            ax.set(xticks=[], yticks=[])
            ax.set_box_aspect(1)
            ax.set_title(_("head {h}").format(h=h), fontsize="small", pad=2)
            frame = Rectangle((0, 0), 1, 1, transform=ax.transAxes, fill=False, edgecolor="black", linewidth=2.5,
                              clip_on=False, visible=False)
            ax.add_patch(frame)
            self.frames.append(blit.animate(frame))

        ax_map = figure.add_subplot(columns[1])
        self.heatmap = blit.heatmap(ax_map, T, T, xlabel=_("Keys (attended to)"), ylabel=_("Queries (attending)"))
        ax_map.set_xticks(range(T), tokens, rotation=90, fontsize="small")
        ax_map.set_yticks(range(T), tokens, fontsize="small")
        # A placeholder title, so that a layout made before the first update leaves room for it (the page's).
        self.map_title = blit.animate(ax_map.set_title(_(MAP_TITLE).format(layer=0, head=0)))

        ax_lines = figure.add_subplot(columns[2])
        # No frame, no ticks (set_axis_off would leave the spines undrawn, and so stale, which the
        # figure would take for a change hidden by the kept background).
        ax_lines.spines[:].set_visible(False)
        ax_lines.patch.set_visible(False)
        ax_lines.set(xticks=[], yticks=[])
        ax_lines.set(xlim=(-0.05, 1.05), ylim=(T - 0.5, -1.5))
        for i, token in enumerate(tokens):  # queries on the left, keys on the right
            ax_lines.text(-0.04, i, token, ha="right", va="center", fontsize="small")
            ax_lines.text(1.04, i, token, ha="left", va="center", fontsize="small")
        ax_lines.text(0, -1.2, _("query"), ha="right", fontsize="small", style="italic")
        ax_lines.text(1, -1.2, _("key"), ha="left", fontsize="small", style="italic")
        rows, cols = np.meshgrid(np.arange(T), np.arange(T), indexing="ij")  # one segment per (query, key)
        self.segments = np.stack([np.stack([np.zeros(T * T), rows.ravel()], -1),
                                  np.stack([np.ones(T * T), cols.ravel()], -1)], axis=1)  # (T*T, 2 points, xy)
        self.lines = blit.animate(ax_lines.add_collection(LineCollection(self.segments, cmap=CMAP, norm=blit.norm)))
        blit.colorbar([ax_map, ax_lines])

    def update(self, result):
        for h, (thumbnail, frame) in enumerate(zip(self.thumbnails, self.frames)):
            thumbnail.set_array(result.weights[h].numpy())
            frame.set_visible(h == result.head)
        self.heatmap.set_array(result.head_map.numpy())
        self.map_title.set_text(_(MAP_TITLE).format(layer=result.layer, head=result.head))
        # One segment per (query, key) pair that carries at least LINE_FLOOR of the weight: the
        # others would be hairlines in near-white, and drawing them (and compressing their
        # antialiased pixels) took most of an update.
        weights = result.lines.flatten().numpy()
        keep = weights >= LINE_FLOOR
        self.lines.set_segments(self.segments[keep])
        self.lines.set_array(weights[keep])
        self.lines.set_linewidths(4 * weights[keep])


def explore_head_view(model=None, sentence=None, layer=3, head=1):
    """all-MiniLM-L6-v2's attention: a sentence, a layer and a head; 12 thumbnails and a token view."""
    declaration = HeadView(model)
    sentence = declaration.examples[0] if sentence is None else sentence
    explorer = Explorer(declaration, declaration.checked_settings(sentence=sentence, layer=layer, head=head))
    explorer.controls["sentence"].layout.width = "95%"  # the whole sentence shows, in the menu too
    return explorer
