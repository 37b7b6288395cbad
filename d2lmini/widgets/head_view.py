"""A trained model's attention, head by head: the 12 heads of a layer and one head token by token."""

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.collections import LineCollection
from matplotlib.patches import Rectangle

from ..plotting import CMAP, describe_weights
from ..pretrained import chapter_model
from .controls import WIDE, dropdown, int_slider
from .declaration import check_choice
from .export import Recipe
from .legacy import Explorer, Shown

MAX_TOKENS = 40  # beyond this the token labels no longer fit the picture
LINE_FLOOR = 0.02  # the token view leaves out the lines of smaller weights


class HeadViewExplorer(Explorer):
    """all-MiniLM-L6-v2's attention over one sentence: a layer's 12 heads as thumbnails, the head
    chosen as a labelled heatmap (rows = queries, columns = keys), and the same weights as lines
    from each token on the left to the tokens it attends to on the right (width and colour =
    weight; weights under 2% are left out). A query menu keeps one token's lines.

    ``model`` is anything with ``sentences``, ``tokenize(text)`` and ``attention(text)``:
    ``chapter_model()`` by default, the live model when it is installed (then the sentence box
    takes any text: type it and press Enter) or the cached example sentences otherwise.
    Each sentence has a figure of its own (its token labels), built when the sentence is first
    shown; the attention maps of a sentence are computed once, so moving the layer or the head
    only redraws.
    """

    repr_controls = ("sentence", "layer", "head")
    tokens = Shown()

    def __init__(self, model=None, sentence=None, layer=3, head=1, query="all"):
        self.model = chapter_model() if model is None else model
        examples = list(self.model.sentences)
        sentence = examples[0] if sentence is None else sentence
        self._maps = {}  # sentence -> (layers, heads, T, T), as the model gave it
        maps = self.maps(sentence)  # checks the sentence before any widget is made
        num_layers, num_heads = maps.shape[:2]
        if getattr(self.model, "live", True):  # any sentence: a box with the examples as suggestions
            if not isinstance(sentence, str):
                raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
            box = widgets.Combobox(value=sentence, options=examples, ensure_option=False, continuous_update=False,
                                   description="sentence", placeholder="type a sentence, then press Enter",
                                   layout=widgets.Layout(width="95%"))
        else:  # the cached examples only
            box = dropdown("sentence", sentence, examples, description="sentence",
                           layout=widgets.Layout(width="95%"))
        tokens = self.model.tokenize(sentence)
        check_choice(query, "query", self._query_values(tokens))
        controls = {
            "sentence": box,
            "layer": int_slider("layer", layer, 0, num_layers - 1, description="layer"),
            "head": int_slider("head", head, 0, num_heads - 1, description="head"),
            "query": dropdown("query", query, self._query_options(tokens), description="query", style=WIDE),
        }
        self.views = {}  # sentence -> the artists of its figure
        rows = [controls["sentence"], widgets.HBox([controls["layer"], controls["head"], controls["query"]])]
        # One layout, the sentence shown; each other sentence gets its own when first chosen (about
        # a second). Preparing them all in idle time kept the kernel busy for seconds after a cell
        # ran, and the first slider moves then waited for it.
        layouts = {sentence: self._figsize(len(tokens))}
        super().__init__(controls, rows, layouts=layouts, filename="head_view.png")

    def maps(self, sentence):
        """(layers, heads, T, T) attention of ``sentence``, asked of the model once."""
        if sentence not in self._maps:
            tokens = self.model.tokenize(sentence)
            if len(tokens) > MAX_TOKENS:
                raise ValueError(f"sentence has {len(tokens)} tokens, and the explorer draws at most {MAX_TOKENS}: "
                                 f"try a shorter one")
            self._maps[sentence] = self.model.attention(sentence)
        return self._maps[sentence]

    @staticmethod
    def _query_values(tokens):
        return ["all", *range(len(tokens))]

    @staticmethod
    def _query_options(tokens):
        return [("all tokens", "all"), *((f"{i}: {token}", i) for i, token in enumerate(tokens))]

    @staticmethod
    def _figsize(num_tokens):
        # In steps of 1/40 inch, so that the picture is a whole number of CSS pixels at DPI 80 (and the
        # PNG, at PIXEL_RATIO 2, exactly twice that).
        height = round(max(3.4, 0.17 * num_tokens + 1.6) * 40) / 40
        return 6.2 + height, height

    def build(self, plot):
        tokens = self.model.tokenize(plot.layout)
        num_layers, num_heads, T, _ = self.maps(plot.layout).shape
        figure = plot.figure
        columns = figure.add_gridspec(1, 3, width_ratios=(3.4, plot.figure.get_figheight() - 0.6, 2.2))
        grid_rows = -(-num_heads // 4)
        thumbs = columns[0].subgridspec(grid_rows, 4)
        thumbnails, frames = [], []
        for h in range(num_heads):
            ax = figure.add_subplot(thumbs[h // 4, h % 4])
            thumbnails.append(plot.heatmap(ax, T, T, xlabel="", ylabel=""))
            ax.set(xticks=[], yticks=[])
            ax.set_box_aspect(1)
            ax.set_title(f"head {h}", fontsize="small", pad=2)
            frame = Rectangle((0, 0), 1, 1, transform=ax.transAxes, fill=False, edgecolor="black", linewidth=2.5,
                              clip_on=False, visible=False)
            ax.add_patch(frame)
            frames.append(plot.animate(frame))

        ax_map = figure.add_subplot(columns[1])
        heatmap = plot.heatmap(ax_map, T, T, xlabel="Keys (attended to)", ylabel="Queries (attending)")
        ax_map.set_xticks(range(T), tokens, rotation=90, fontsize="small")
        ax_map.set_yticks(range(T), tokens, fontsize="small")
        map_title = plot.animate(ax_map.set_title(""))

        ax_lines = figure.add_subplot(columns[2])
        # No frame, no ticks (set_axis_off would leave the spines undrawn, and so stale, which the base
        # would take for a change hidden by the kept background).
        ax_lines.spines[:].set_visible(False)
        ax_lines.patch.set_visible(False)
        ax_lines.set(xticks=[], yticks=[])
        ax_lines.set(xlim=(-0.05, 1.05), ylim=(T - 0.5, -1.5))
        for i, token in enumerate(tokens):  # queries on the left, keys on the right
            ax_lines.text(-0.04, i, token, ha="right", va="center", fontsize="small")
            ax_lines.text(1.04, i, token, ha="left", va="center", fontsize="small")
        ax_lines.text(0, -1.2, "query", ha="right", fontsize="small", style="italic")
        ax_lines.text(1, -1.2, "key", ha="left", fontsize="small", style="italic")
        rows, cols = np.meshgrid(np.arange(T), np.arange(T), indexing="ij")  # one segment per (query, key)
        segments = np.stack([np.stack([np.zeros(T * T), rows.ravel()], -1),
                             np.stack([np.ones(T * T), cols.ravel()], -1)], axis=1)  # (T*T, 2 points, xy)
        lines = plot.animate(ax_lines.add_collection(LineCollection(segments, cmap=CMAP, norm=plot.norm)))
        plot.colorbar([ax_map, ax_lines])
        self.views[plot.layout] = {"thumbnails": thumbnails, "frames": frames,
                                   "heatmap": heatmap, "map_title": map_title, "lines": lines, "segments": segments}

    def sync_controls(self, owner):
        if owner is self.controls["sentence"]:
            self.maps(owner.value)  # a sentence the explorer cannot show fails here, the menu untouched
            query = self.controls["query"]
            query.options = self._query_options(self.model.tokenize(owner.value))
            query.value = "all"

    def compute(self, state):
        sentence, layer, head, query = state["sentence"], state["layer"], state["head"], state["query"]
        maps = self.maps(sentence)  # (layers, heads, T, T)
        tokens = self.model.tokenize(sentence)
        if sentence not in self.layouts:  # a sentence typed in: a figure of its own, built when first shown
            self.layouts[sentence] = self._figsize(len(tokens))
        head_map = maps[layer, head]  # (T, T): row i = where token i looks
        shown = head_map if query == "all" else torch.zeros_like(head_map).index_copy_(
            0, torch.tensor([query]), head_map[query:query + 1])
        who = "every token" if query == "all" else f"token {query} ({tokens[query]!r})"
        caption = f"layer {layer}, head {head}: where {who} looks, in {sentence!r}"
        return {"weights": maps[layer], "head_map": head_map, "lines": shown, "layer": layer, "head": head,
                "query": query, "tokens": tokens, "layout": sentence, "caption": caption}

    def draw(self, result):
        view = self.views[result["layout"]]
        for h, (thumbnail, frame) in enumerate(zip(view["thumbnails"], view["frames"])):
            thumbnail.set_array(result["weights"][h].numpy())
            frame.set_visible(h == result["head"])
        view["heatmap"].set_array(result["head_map"].numpy())
        view["map_title"].set_text(f"layer {result['layer']}, head {result['head']}")
        # One segment per (query, key) pair that carries at least LINE_FLOOR of the weight: the
        # others would be hairlines in near-white, and drawing them (and compressing their
        # antialiased pixels) took most of an update.
        weights = result["lines"].flatten().numpy()
        keep = weights >= LINE_FLOOR
        view["lines"].set_segments(view["segments"][keep])
        view["lines"].set_array(weights[keep])
        view["lines"].set_linewidths(4 * weights[keep])

    def describe(self, result):
        """The head chosen, token by token (or the query chosen alone)."""
        tokens, query = result["tokens"], result["query"]
        summary = describe_weights(result["head_map"], query_labels=tokens, key_labels=tokens,
                                   queries=None if query == "all" else [query])
        return f"Layer {result['layer']}, head {result['head']}: {summary}"

    def recipe(self, result):
        inputs = {"tokens": result["tokens"], "head": result["head"], "layer": result["layer"]}
        return Recipe(inputs, """
            # (heads, queries, keys): every head of the layer, as the model gave them
            weights = torch.from_numpy(saved["weights"])
            tokens = saved["tokens"].tolist()
        """, rebuilt=False, why="they come from a trained model, which is not saved",
            drawn='weights[int(saved["head"])]', titles=[f"layer {result['layer']}, head {result['head']}"],
            draw="""
            fig.axes[0].set_xticks(range(len(tokens)), tokens, rotation=90, fontsize="small")
            fig.axes[0].set_yticks(range(len(tokens)), tokens, fontsize="small")
        """)


def explore_head_view(model=None, sentence=None, layer=3, head=1):
    """all-MiniLM-L6-v2's attention: a sentence, a layer and a head; 12 thumbnails and a token view."""
    return HeadViewExplorer(model, sentence, layer, head)
