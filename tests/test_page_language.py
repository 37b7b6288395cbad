"""The web page's explorers speak the learner's language (d2lmini.widgets.page, d2lmini.i18n).

``page.write_assets`` writes the page in the language set: every explorer's labels, options, notes,
captions, summaries and title, and the words of the page's scripts (``SHELL_WORDS``,
``plotting.SUMMARY_WORDS``, each declaration's ``script_words``), with the language's number marks and
plural rule.
Exported under pt_BR, no word the English export says is left, but code names and the words the two
languages share; under English, the page data is the declarations' own English. The page's side
(``D2L.say``, the ports of ``describe_weights`` and of the declarations) is tested in Chromium
against the kernel, in both languages (tests/browser/test_page_explorers.py).
"""

import json
import re
import sys

import pytest
from support import page_assets

from d2lmini.i18n import set_language
from d2lmini.plotting import SUMMARY_WORDS, describe_weights
from d2lmini.widgets import DECLARATIONS, Additive, Declaration, DotProduct, page, page_words
from tools.catalogues import extracted

# Words the Portuguese page says as the English does: code names (colour maps, kernels, True, NaN,
# reshape) and words Portuguese shares with English (its catalogue uses them: token, kernel, pooling).
SHARED = {"viridis", "cividis", "reds", "epanechnikov", "true", "nan", "reshape",
          "softmax", "masking", "causal", "zero", "token", "tokens", "kernel", "pooling", "online", "base", "editor",
          "multi", "hub", "links", "colab", "binder", "d2lmini", "notebook"}
WORD = re.compile(r"[A-Za-zÀ-ÿ][A-Za-zÀ-ÿ0-9]*(?:_[A-Za-z0-9]+)*")


def _exported(folder):
    """name -> page data, and the colour script's page configuration (D2L_SETTINGS), as the page reads them
    from ``folder``, written by ``page.write_assets``: each explorer's ``<name>.js`` registers its data
    (``page.script``) and ``colours.js`` holds the page configuration."""
    data = {}
    for name in (declaration.name for declaration in DECLARATIONS):
        registered = re.search(r"^window\.D2L_EXPLORERS\[(.+?)\] = (\{.*\});$",
                               (folder / f"{name}.js").read_text(), re.MULTILINE)
        assert json.loads(registered.group(1)) == name
        data[name] = json.loads(registered.group(2))
    page_config = json.loads(re.search(r"D2L_SETTINGS = (\{.*\});", (folder / "colours.js").read_text()).group(1))
    return data, page_config


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """language -> (name -> page data, page_config): every page declaration exported in English and in
    Brazilian Portuguese, the test run's assets (``support.page_assets``: made once per run, a minute or
    two per language, for the site's build too)."""
    return {language: _exported(page_assets(tmp_path_factory, language)) for language in ("en", "pt_BR")}


def _flat(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _flat(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _flat(item)


def shown(data):
    """Every text of an explorer's page data that a reader sees or hears: its controls' labels,
    tooltips and options, its rows' labels and notes, its note, its title, its captions and
    summaries, the texts it draws, and its script's words."""
    for spec in data["controls"]:
        yield spec["label"]
        yield spec.get("tooltip", "")
        yield from (label for label, _ in spec.get("options", ()))
    for row in data["rows"]:
        yield row["label"]
        yield row["note"]
    yield data["coarser"]
    yield data["title"]
    yield from data["strings"]
    yield from (look["text"] for look in data["looks"] if look and "text" in look)
    yield from _flat(data["words"] or {})


def page_config_shown(page_config):
    """The texts of the page configuration (colours.js): the colour maps' labels, the colour scale's, and
    the shell's and the summaries' words."""
    yield from page_config["labels"].values()
    yield from (label for label, _ in page_config["scales"])
    yield from _flat(page_config["words"])
    yield from _flat(page_config["summary"]["words"])


def _words(text):
    """The words of a text (three letters or more), without HTML tags, a message's {fields} and code
    names (valid_len, transpose_qkv), lowercased."""
    text = re.sub(r"<[^>]+>|\{\w+(?:![rs])?(?::[^{}]*)?\}", " ", text)
    return {word.lower() for word in WORD.findall(text) if "_" not in word and len(word) >= 3}


def _texts(made):
    """(explorer name or "page_config", text) for every text shown."""
    data, page_config = made
    pairs = [(name, text) for name, explorer in data.items() for text in shown(explorer)]
    return pairs + [("page_config", text) for text in page_config_shown(page_config)]


def _sentence_words_removed(name, text, data):
    """The head view's text without its example sentences and their tokens: chapter 09's model reads
    English, so its sentences stay English (quoted, in a caption or a menu)."""
    if name != "HeadViewExplorer":
        return text
    for sentence, entry in data["HeadViewExplorer"]["data"]["sentences"].items():
        text = text.replace(sentence, " ")
        for token in entry["tokens"]:
            text = re.sub(rf"""(["']){re.escape(token)}\1|: {re.escape(token)}$""", " ", text)
    return text


def test_every_word_the_portuguese_page_shows_is_portuguese(exported):
    english = set().union(*(_words(text) for _, text in _texts(exported["en"]))) - SHARED
    data = exported["pt_BR"][0]
    left = {}
    for name, text in _texts(exported["pt_BR"]):
        for word in _words(_sentence_words_removed(name, text, data)) & english:
            left.setdefault(word, (name, text))
    assert left == {}, "English on the Portuguese page: " + "; ".join(
        f"{word!r} in {name}: {text[:100]!r}" for word, (name, text) in sorted(left.items())[:20])


def test_the_portuguese_page_writes_numbers_with_a_decimal_comma(exported):
    points = [(name, text) for name, text in _texts(exported["pt_BR"])
              if re.search(r"\d\.\d", text)]
    assert points == [], f"numbers with a decimal point: {points[:5]}"
    data, page_config = exported["pt_BR"]
    assert page_config["marks"] == [",", "."] and exported["en"][1]["marks"] == [".", ","]
    stored = [text for text in data["OnlineSoftmaxExplorer"]["strings"] if re.search(r"\d,\d", text)]
    assert stored, "the online softmax's captions write their numbers with the decimal comma"


def test_the_english_page_data_is_the_declarations_own(exported):
    """In English the page says what the declarations say, as it did before it spoke other languages:
    their specs, rows and note as they are, each explorer named after its class."""
    data, page_config = exported["en"]
    for declaration in DECLARATIONS:
        explorer = declaration.for_page()
        got = data[explorer.name]
        assert got["controls"] == json.loads(json.dumps([control.spec() for control in explorer.controls]))
        assert [(row["label"], row["note"]) for row in got["rows"]] == [
            (row.label, row.note) for row in explorer.arrangement()]
        assert got["coarser"] == explorer.page_note
        assert got["title"] == explorer.title  # the English of its name, "Mask editor explorer"
    # Names a screen reader says well: a hyphenated compound, and what is explored.
    assert data["MultiHeadExplorer"]["title"] == "Multi-head attention explorer"
    assert data["AdditiveExplorer"]["title"] == "Additive attention explorer"
    assert page_config["labels"]["viridis"] == "viridis (colour-blind safe)"
    assert page_config["scales"] == [["0 to 1", "fixed"], ["fit to weights", "fit"]]
    assert page_config["words"]["fitted"] == "; colours 0 to {top:g}" and page_config["plural"] == "(n != 1)"


def test_every_explorer_declares_a_title_the_portuguese_page_translates(exported):
    """Each declaration says its own name on the page (``title``, a catalogue message), no two alike, and
    the Portuguese page says each in Portuguese."""
    titles = [declaration.title for declaration in DECLARATIONS]
    assert all(titles) and len(set(titles)) == len(titles)
    english, portuguese = exported["en"][0], exported["pt_BR"][0]
    for declaration in DECLARATIONS:
        assert portuguese[declaration.name]["title"] != english[declaration.name]["title"] == declaration.title


def test_an_explorer_with_no_title_is_named_after_its_class():
    class ToyLens(Declaration):
        pass

    assert page_words.title(ToyLens()) == "Toy lens explorer"


def test_the_page_says_the_kernels_labels_in_portuguese(exported):
    data, page_config = exported["pt_BR"]
    dot = {spec["name"]: spec for spec in data["DotProductExplorer"]["controls"]}
    assert dot["temperature"]["label"] == "temperatura" and dot["scale"]["label"] == "dividir por √d"
    preset = {spec["name"]: spec for spec in data["MaskEditorExplorer"]["controls"]}["preset"]
    assert preset["options"][0] == ["sem máscara", "no mask"]  # the value stays what the code takes
    assert data["MaskEditorExplorer"]["title"] == "Explorador do editor de máscara"
    assert page_config["labels"]["viridis"] == "viridis (segura para daltonismo)"
    assert page_config["scales"] == [["0 a 1", "fixed"], ["ajustar aos pesos", "fit"]]
    assert page_config["words"]["play"] == "Reproduzir" and page_config["words"]["map"] == "mapa"


def test_a_message_said_of_a_count_gives_its_forms_in_the_rules_order():
    """English's rule gives form 1 (plural) for every count but 1; Portuguese's, (n > 1), gives form 0
    for 0 and 1: the page picks the form as gettext does."""
    try:
        assert page_words.plural_rule() == ("(n != 1)", 2)
        assert page_words.said(SUMMARY_WORDS)["queries"] == ["{count} query", "{count} queries"]
        set_language("pt_BR")
        assert page_words.plural_rule() == ("(n > 1)", 2)
        assert page_words.said(SUMMARY_WORDS)["queries"] == ["{count} consulta", "{count} consultas"]
        assert page_words.said({"key": "map"}) == {"key": "mapa"}
    finally:
        set_language("en")


def test_the_summary_writes_its_weights_with_the_languages_marks():
    import torch

    weights = torch.tensor([[0.7, 0.2, 0.1]])
    assert describe_weights(weights) == "1 query × 3 keys. Query 0 attends mostly to keys 0 (0.70) and 1 (0.20)."
    try:
        set_language("pt_BR")
        assert describe_weights(weights) == ("1 consulta × 3 chaves. A consulta 0 presta atenção principalmente às "
                                             "chaves 0 (0,70) e 1 (0,20).")
    finally:
        set_language("en")


def _named(module):
    """What a module names: its constants and functions, and the items of its tuples (``METHODS``)."""
    values = list(vars(module).values())
    return values + [item for value in values if isinstance(value, tuple) for item in value]


def test_each_script_word_is_its_declarations_own_message():
    """A page script says what its declaration says: each of a declaration's ``script_words`` is one of its
    module's constants (the message its ``compute`` or ``describe`` formats, or a function of a count
    giving it), marked there for the catalogue; a new message written into ``script_words`` alone fails."""
    catalogue = extracted()
    stale = []
    for declaration in DECLARATIONS:
        module = sys.modules[declaration.__module__]
        for name, word in declaration.script_words.items():
            if callable(word):  # a plural: its singular and plural, read back from a count of each
                key = (word(1), word(2))
            else:
                key = word
            message = catalogue.get(key)
            marked = message is not None and module.__name__.replace(".", "/") + ".py" in dict(message.locations)
            if not (marked and any(word is value for value in _named(module))):
                stale.append(f"{declaration.__name__} {name!r}")
    assert stale == [], f"these script words are not their declarations' modules' messages: {stale}"


SAID = re.compile(r'(?<![\w.])say\(\s*"([^"]+)"')  # a page script's say("name", ...)


def test_every_word_a_page_script_says_is_declared():
    """Each name a page script gives ``say`` is a word of the declarations it serves (``script_words``),
    and each of their words is named in the script (given ``say`` or a string it passes on): a word
    renamed on one side only fails here."""
    for script in {declaration.page_script for declaration in DECLARATIONS} - {None}:
        source = (page.PAGE_JS / script).read_text()
        words = page_words.script_words(next(d for d in DECLARATIONS if d.page_script == script))
        assert set(SAID.findall(source)) - set(words) == set(), script
        assert [name for name in words if f'"{name}"' not in source] == [], script


def test_a_script_serving_several_explorers_is_sent_the_words_of_them_all():
    """attention.js ports Additive and DotProduct, each declaring only the words of its own port: each
    explorer is sent the script's whole table, in DECLARATIONS' order; a second word of the same name
    but another message is refused."""
    both = {**Additive.script_words, **DotProduct.script_words}
    assert list(page_words.script_words(Additive()).items()) == list(both.items())
    assert list(page_words.script_words(DotProduct()).items()) == list(both.items())
    assert not set(Additive.script_words) & set(DotProduct.script_words)

    class Clash(Declaration):
        page_script = "attention.js"
        script_words = {"causal": "causal, again"}

    with pytest.raises(ValueError, match="attention.js says two words named 'causal'"):
        page_words.script_words(Clash())


def test_a_page_of_its_own_says_its_language_and_loads_each_script_once_in_order(portuguese):
    """``page.page_html``: the colour script, then each explorer's scripts in order, a script two explorers
    share once, the shell's deferred after them; a box per explorer; the language as a BCP 47 tag."""
    scripts = {"AExplorer": ["shared.js", "AExplorer.js"], "BExplorer": ["shared.js", "BExplorer.js"]}
    html = page.page_html(["AExplorer", "BExplorer"], scripts, title="two")
    sources = re.findall(r'<script (defer )?src="([^"]+)"', html)
    assert sources == [("", "colours.js"), ("", "shared.js"), ("", "AExplorer.js"), ("", "BExplorer.js"),
                       *(("defer ", name) for name in page.SHELL_SCRIPTS)]
    assert re.findall(r'data-d2l-explorer="(\w+)"', html) == ["AExplorer", "BExplorer"]
    assert '<html lang="pt-BR">' in html and "<title>two</title>" in html
