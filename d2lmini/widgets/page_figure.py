"""One figure (layout) of a declaration as the page draws it (``PageFigure``): its background, its
colorbar's sprites per scale end, its registered artists' styles and looks (``page_artists``), and
its dark variant, drawn again under ``d2lmini.dark.drawn_dark`` (``PageFigure.dark``)."""

from matplotlib.backends.backend_agg import RendererAgg

from ..dark import DARK_BACKGROUND, TEXT_CONTRAST, contrast, drawn_dark, mirrored
from .figure import SCALE_TOPS, BlitFigure
from .page_artists import PAGE_DPI, data_url, kind_of, page_colour, rounded


def _dark_look_colours(colours):
    """[[colour, its colour on the dark page], ...] for the colours that states give a text standing on
    the page: kept where it reaches ``TEXT_CONTRAST`` on the dark background, else ``mirrored``."""
    pairs = []
    for colour in colours:
        rgba = (*[channel / 255 for channel in colour[:3]], colour[3])
        dark = rgba if contrast(rgba, DARK_BACKGROUND) >= TEXT_CONTRAST else mirrored(rgba)
        pairs.append([colour, page_colour(dark)])
    return pairs


class PageFigure:
    """One layout of a declaration: its background, colorbar and registered artists, for the page."""

    def __init__(self, declaration, layout, sprites):
        self.blit = BlitFigure(declaration.figsize_for(layout), layout)
        self.view = declaration.build(self.blit)
        self.blit.prepare()  # lays the figure out once and draws the background, as the kernel does
        self.width, self.height = self.blit.canvas.get_width_height(physical=True)
        self.sprites = sprites
        self.kinds = [kind_of(artist) for artist in self.blit.artists]
        # Read as built, before any update: a look that differs from its style says so (a text's colour).
        self.styles = [style(artist, self) for artist, (style, _) in zip(self.blit.artists, self.kinds)]
        self.look_colours = [[] for _ in self.blit.artists]  # per artist, the colours its states give a text

    def fixed_parts(self):
        """What never changes, JSON-ready (the page data's ``figures[layout]``): the background, the
        artists' styles, the colorbar per scale end; and the same for a dark page (``dark``)."""
        blit = self.blit
        css_width, css_height = blit.css_size
        return {"background": self._background(), "width": self.width, "height": self.height,
                "css_width": css_width, "css_height": css_height,
                "artists": [{**style, "axes": self._axes(artist)} for artist, style in zip(blit.artists, self.styles)],
                "colorbar": self._colorbar(), "dark": self._dark()}

    def _background(self):
        """The background as drawn now, without the colorbar (the page paints it), as a data URL."""
        return data_url(self.blit.background_rgba())

    def _dark(self):
        """What a dark page draws instead (``drawn_dark`` on this figure): the background, the colorbar's
        sprites, and each artist's style where it differs from the light one. A text is read as built (its
        style's colour, and a letter where the last state left it empty), so that ``drawn_dark`` judges it
        where it stands; the colours its states gave it get their dark colours (``_dark_look_colours``)."""
        blit = self.blit
        texts = [(artist, artist.get_text(), artist.get_color(), style) for artist, style
                 in zip(blit.artists, self.styles) if style["kind"] == "text"]
        blit.forget()  # the kept pictures are the light page's
        try:
            for artist, text, _, style in texts:
                artist.set_color([channel / 255 for channel in style["colour"][:3]] + [style["colour"][3]])
                artist.set_text(text if text.strip() else "M")
            with drawn_dark(blit.figure):
                blit.figure.set_canvas(blit.canvas)  # the blit draws on its own canvas; drawn_dark puts it back
                background = self._background()
                styles = [style(artist, self) for artist, (style, _) in zip(blit.artists, self.kinds)]
                colorbar = self._colorbar()
        finally:
            for artist, text, colour, _ in texts:
                artist.set_text(text)
                artist.set_color(colour)
            blit.forget()  # the next render draws the light background again
        artists = []
        for light, dark, seen in zip(self.styles, styles, self.look_colours):
            changed = {key: value for key, value in dark.items() if value != light[key]}
            if light["kind"] == "text" and light["stroke"]:
                changed = {}  # a halo keeps the text readable on any colour: drawn as on the light page
            elif "colour" in changed and seen:
                changed["look_colours"] = _dark_look_colours(seen)
            artists.append(changed)
        return {"background": background, "artists": artists,
                "colorbar": None if colorbar is None else {"ends": colorbar["ends"]}}

    def _axes(self, artist):
        """[left, top, width, height] of the artist's axes in canvas pixels and [x0, x1, y0, y1], its
        limits, so that a page script maps data to pixels as the axes do (linear axes only)."""
        ax = artist.axes
        if ax is None:
            return None
        if ax.get_xscale() != "linear" or ax.get_yscale() != "linear":
            raise ValueError(f"the page maps data to pixels on linear axes only, got {ax.get_xscale()}/"
                             f"{ax.get_yscale()} axes")
        x0, y0, x1, y1 = ax.bbox.extents
        return rounded([x0, self.height - y1, x1 - x0, y1 - y0], 4) + [*ax.get_xlim(), *ax.get_ylim()]

    def _colorbar(self):
        """The colorbar's box in canvas pixels and, per scale end, its ticks and labels as a sprite."""
        blit = self.blit
        if blit.colorbar_axes is None:
            return None
        x0, y0, x1, y1 = blit.colorbar_axes.bbox.extents
        box = rounded([x0, self.height - y1, x1 - x0, y1 - y0])
        ends = {}
        # The page paints the gradient itself: hide it (a QuadMesh that the colorbar makes anew
        # for each end, among the axes' collections) and the axes' white patch under it while
        # Agg draws the ticks and labels.
        try:
            for top in SCALE_TOPS:
                blit.norm.vmax = top
                blit.colorbar_axes.draw(RendererAgg(self.width, self.height, PAGE_DPI))  # lays the ticks out
                gradient = [(c, c.get_visible()) for c in (*blit.colorbar_axes.collections, blit.colorbar_axes.patch)]
                for collection, _ in gradient:
                    collection.set_visible(False)
                ends[f"{top:g}"] = self.sprites.draw(blit.colorbar_axes, self.width, self.height)
                for collection, visible in gradient:
                    collection.set_visible(visible)
        finally:
            blit.norm.vmax = 1.0
        return {"box": box, "ends": ends}

    def looks(self):
        """The look of every registered artist now (after ``update``), JSON-ready."""
        looks = [look(artist, self, style) if artist.get_visible() else None
                 for artist, style, (_, look) in zip(self.blit.artists, self.styles, self.kinds)]
        for seen, look in zip(self.look_colours, looks):
            if look is not None and "colour" in look and look["colour"] not in seen:
                seen.append(look["colour"])
        return looks

