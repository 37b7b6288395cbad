"""The page's shell: an explorer's declaration made into data that a web page draws with no kernel
and no network. This module is the build side; ``page_js/explorers.js`` is the page side, and
``page_js/<name>.js`` the scripts of the declarations that compute in the page (``page_script``).
This module writes the page's data and assets (``explorer_data``, ``write_assets``); its parts live beside it,
one concern each: ``page_figure`` (a figure's background, colorbar and dark variant),
``page_artists`` (the readers of each kind of registered artist, and the sprites), ``page_states``
(the stored states) and ``page_words`` (what the page says); ``png.page_png`` makes its pictures small.

For each figure (layout) of a declaration, ``explorer_data`` keeps what the kernel's shell keeps
(``figure.BlitFigure``):

* the **background**, drawn once by matplotlib without the registered artists and the colorbar,
  as PNG;
* the **colorbar** for every end of the colour scale (``SCALE_TOPS``): its ticks, tick labels and
  label drawn by Agg as a transparent sprite, over a gradient that the page paints from the colour
  map's own table;
* every **registered artist**'s kind and style (``page_artists.ARTISTS``), read once, as the figure is built:
  cells, lines, markers, bars and frames, texts, coloured segments, and sprites (an artist that only
  shows or hides, drawn once by Agg).

Then, for each state the page offers (``Declaration.page_states``), it runs the declaration's own
``compute`` and its view's ``update``, and reads back from the registered artists what moved: cell
values, line points, marker sizes, bar ends, texts (and their colour, where it is not the
style's), segments with their values and widths, in canvas pixels. The page
paints those over the background: the blitting idea carried to the page. Each distinct look of an
artist is stored once, so states that share it share its entry; captions and text summaries too.
A control whose options depend on the others (``Declaration.choices``) offers, among the stored
states, only the options valid with the others' values (``page_states.valid_options``).

Each figure also has a **dark** variant, for the site's dark mode: what depends on colours, drawn
again under ``d2lmini.dark.drawn_dark`` on the same figure (its background, colorbar sprites, and the
artists' styles where they differ). The states are shared by both modes. A colour that a state gives
a text (the red of a wrong symbol) follows its text: where ``drawn_dark`` recoloured the text's own
colour (it stands on the page), the state's colour is kept when it reaches ``TEXT_CONTRAST`` on the
dark background and is ``mirrored`` otherwise; where it kept it (over a heatmap's cell), it is kept.
A text with a halo (a stroke) is drawn to be read on any colour, and keeps its colours.

The page speaks the learner's language (``d2lmini.i18n``), the one set when the assets are written:
what the declarations say (labels, options, notes, captions, summaries) as the kernel's shell says it
(``say``), and every word of the page's scripts, which keep none of their own. Those are tables of
messages (``page_words.SHELL_WORDS``, ``plotting.SUMMARY_WORDS``, and each page script's: the
``script_words`` of the declarations it serves, ``page_words.script_words``) sent translated with the
language's number marks and plural rule (``colour_script``, ``explorer_data``), where ``D2L.say`` fills their
fields as Python's ``str.format`` does. Each explorer's name on the page is its declaration's ``title``.
"""


import itertools
import json
import shutil
from pathlib import Path

from ..i18n import _, current_language, marks
from ..plotting import CMAPS, SUMMARY_KEYS, SUMMARY_PANELS, SUMMARY_QUERIES, SUMMARY_WORDS
from .declaration import say
from .explorer import Explorer
from .figure import SCALE_TOPS
from .page_artists import colour_table
from .page_states import Interned, PageStates, offered_values, valid_options
from .page_words import SHELL_WORDS, plural_rule, said, said_spec, script_words, title

PAGE_JS = Path(__file__).with_name("page_js")  # the page side's scripts
MAX_STATES = 5000  # states one explorer's page may store; more need a coarser grid (page_values)


def colour_script():
    """A script that gives the page what d2lmini decides, so that no rule and no word has a second home
    in JavaScript: every colour map of the explorers' menu (its label and its ``colour_table``), the
    colour scale's choices (``Explorer.COLOUR_SCALES``) and its fitted ends (``SCALE_TOPS``), how many
    queries, keys and panels a text summary describes (``plotting.SUMMARY_*``) and its words; the
    shell's words (``SHELL_WORDS``), and the language's decimal and thousands marks and plural rule.
    Its labels and words are in the learner's language."""
    tables = {name: colour_table(name) for _, name in CMAPS}
    page_config = {"labels": {name: str(_(label)) for label, name in CMAPS},
                   "scales": [[str(_(label)), scale] for label, scale in Explorer.COLOUR_SCALES],
                   "tops": SCALE_TOPS,
                   "summary": {"queries": SUMMARY_QUERIES, "keys": SUMMARY_KEYS, "panels": SUMMARY_PANELS,
                               "words": said(SUMMARY_WORDS)},
                   "words": said(SHELL_WORDS), "marks": list(marks()), "plural": plural_rule()[0]}
    return (f"window.D2L_COLOUR_TABLES = {json.dumps(tables, separators=(',', ':'))};\n"
            f"window.D2L_SETTINGS = {json.dumps(page_config, ensure_ascii=False)};\n")



def explorer_data(declaration):
    """The page data of ``declaration``: its controls and figures, and either every offered state
    or, for a declaration with a ``page_script`` that computes in the page, the data it computes from
    and its script's words (``page_words.script_words``). What it says is in the learner's language."""
    offered = offered_values(declaration)
    states = [] if declaration.page_script else list(itertools.islice(declaration.page_states(offered),
                                                                       MAX_STATES + 1))
    if len(states) > MAX_STATES:
        raise ValueError(f"{declaration.name} offers more than {MAX_STATES} states on the page: offer coarser "
                         "grids in page_values or fewer states in page_states, or compute them in the page "
                         "(page_script)")
    drawing = PageStates(declaration)  # "page" is this module
    looks, strings, table = Interned(), Interned(), {}
    if declaration.page_script:  # every figure, at the default settings
        drawing.state(declaration.Settings())
        for layout in declaration.page_layouts():
            drawing.page_figure(layout)
    for settings in states:
        layout, caption, summary, top, state_looks = drawing.state(settings)
        key = ",".join(str(offered[control.name].index(getattr(settings, control.name)))
                       for control in declaration.controls)
        table[key] = [layout, strings.add(caption), strings.add(summary), top, *map(looks.add, state_looks)]
    # Each layout's fixed parts, read after the states: their colorbar sprites join the others.
    figures = {layout: page_figure.fixed_parts() for layout, page_figure in drawing.page_figures.items()}
    return {
        "name": declaration.name,
        "controls": [said_spec(control) for control in declaration.controls],
        "offered": {name: list(values) for name, values in offered.items()},
        "start": {control.name: offered[control.name].index(getattr(declaration.Settings(), control.name))
                  for control in declaration.controls},
        "coarser": say(declaration.page_note),
        "rows": [{"names": list(row.names), "label": say(row.label), "when": row.when, "columns": row.columns,
                  "note": say(row.note)} for row in declaration.arrangement()],
        "shows_weights": declaration.shows_weights, "colour_scale": declaration.colour_scale,
        "figures": figures,
        "looks": looks.values, "strings": strings.values, "sprites": drawing.sprites.urls, "states": table,
        "play": declaration.page_play, "choices": valid_options(declaration, offered, states),
        "compute": declaration.page_script, "data": declaration.page_data() if declaration.page_script else None,
        "title": title(declaration),
        "words": said(script_words(declaration)) if declaration.page_script else None,
    }


def script(data):
    """The page data as a script that registers it (a page opened from disk cannot fetch JSON), then
    starts its explorers if the page's shell (explorers.js) ran first: the scripts may load in
    either order, and without holding the page up (defer)."""
    return ("window.D2L_EXPLORERS = window.D2L_EXPLORERS || {};\n"
            f"window.D2L_EXPLORERS[{json.dumps(data['name'])}] = {json.dumps(data, separators=(',', ':'))};\n"
            "if (window.D2L) window.D2L.startSoon();\n")


# The page's shell, its parts in the order a page loads them (plain scripts sharing window.D2L: each
# uses those before it). site/conf.py lists them too, for the web site's pages.
SHELL_SCRIPTS = ("words.js", "paint.js", "controls.js", "explorers.js")
SHELL_FILES = (*SHELL_SCRIPTS, "explorers.css")  # what every page needs beside colours.js


def write_assets(folder, declarations):
    """Write into ``folder`` what pages need to show ``declarations`` live: the shell's scripts
    (``SHELL_SCRIPTS``), ``explorers.css`` and ``colours.js`` (every page), and per explorer ``<name>.js``, its
    data, with its page script before it when it has one, all in the learner's language
    (``i18n.set_language``). Returns name -> the scripts its page loads, in order (relative to ``folder``)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in SHELL_FILES:
        shutil.copy(PAGE_JS / name, folder / name)
    (folder / "colours.js").write_text(colour_script())
    for declaration in declarations:
        data = explorer_data(declaration)
        (folder / f"{declaration.name}.js").write_text(script(data))
        if declaration.page_script:
            shutil.copy(PAGE_JS / declaration.page_script, folder / declaration.page_script)
    return {declaration.name: explorer_scripts(declaration) for declaration in declarations}


def explorer_scripts(declaration):
    """The files ``write_assets`` writes for ``declaration``, in the order its page loads them: its page
    script, when it computes in the page, then ``<name>.js``, its data."""
    own = [declaration.page_script] if declaration.page_script else []
    return own + [f"{declaration.name}.js"]


def page_html(names, scripts, title="explorers"):
    """A page of its own showing the explorers ``names`` (``write_assets``'s scripts beside it), in the
    learner's language (its ``lang``, "pt-BR" for pt_BR)."""
    tags = ['<link rel="stylesheet" href="explorers.css">', '<script src="colours.js"></script>']
    sources = dict.fromkeys(src for name in names for src in scripts[name])  # each script once, in order
    tags += [f'<script src="{src}"></script>' for src in sources]
    tags += [f'<script defer src="{src}"></script>' for src in SHELL_SCRIPTS]  # deferred scripts run in order
    boxes = "\n".join(f'<div id="explorer-{i}" data-d2l-explorer="{name}"></div>' for i, name in enumerate(names))
    language = current_language().replace("_", "-")  # a BCP 47 tag
    return (f'<!doctype html>\n<html lang="{language}"><head><meta charset="utf-8"><title>{title}</title>\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            + "\n".join(tags) + f"</head>\n<body>\n{boxes}\n</body></html>\n")
