"""The translated chapters keep step with the English (docs/translating.md).

A translated chapter (notebooks/pt/NN_*.py) has the English chapter's cells in
the same order. Each Markdown cell, and each code cell whose data differ on
purpose, records in its `en` metadata the start of the SHA-256 of the English
text it was made from: when the English changes, the record no longer matches,
and the test names the cell, shows the English change and prints the command
that records it once translated (tools/translations.py, which holds these
rules; tests/test_translation_guard.py tests them). Every other code cell
equals the English one once comments and the words of strings are set aside.
The glossary's ruled-out terms appear nowhere in the translation. What a
learner reads in a translated chapter's stored outputs and explorers holds no
English word outside code, save what a chapter shows in English on purpose.
That each chapter's .ipynb holds what its .py says is tests/test_notebook_pairs.py's.
"""

import ast
import functools
import html
import re
from pathlib import Path

import jupytext
import nbformat
import pytest
from babel.messages.pofile import read_po

from d2lmini.widgets._compat import WIDGET_VIEW
from tools import editions, pairs, stable_outputs, translations
from tools.translations import english_of, parsed

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
LOCALE = REPO / "d2lmini" / "locale"
GLOSSARIES = {"pt": REPO / "docs" / "pt" / "glossario.md"}
# A translation's folder under notebooks/: d2lmini's language for it (tools/editions.py), and its glossary.
TRANSLATIONS = {folder: (language, GLOSSARIES[folder]) for folder, language in editions.TRANSLATIONS.items()}
TRANSLATED = translations.translated_chapters(NOTEBOOKS)


@pytest.mark.parametrize("path", TRANSLATED, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_the_chapter_follows_the_english_now_there(path):
    """Its cells line up with the English's, each record names the English cell now there, and its code is
    the English code; else one failure for the chapter, whose message (whole, with no traceback) names each
    cell, what changed, and the command to run."""
    message = translations.drift(path)
    if message:
        pytest.fail(message, pytrace=False)


def ruled_out(glossary):
    """The terms the glossary's last column rules out."""
    terms = []
    for line in glossary.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[2] and cells[2] != "evite" and not set(cells[2]) <= {"-"}:
            terms += [term.strip() for term in cells[2].split(",") if term.strip()]
    return terms


def words_of(notebook):
    """The text a learner reads in a chapter: its Markdown, and its code's comments and strings."""
    parts = []
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            parts.append(cell.source)
        elif "colab-setup" not in cell.metadata.get("tags", []):
            parts += [line.split("#", 1)[1] for line in cell.source.splitlines() if "#" in line]
            parts += [node.value for node in ast.walk(parsed(cell.source))
                      if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    return "\n".join(parts)


def uses(text, term):
    """Whether text uses term, whose words may be split over lines (a Markdown paragraph wraps anywhere)."""
    words = r"\s+".join(re.escape(word) for word in term.split())
    return re.search(rf"(?<!\w){words}(?!\w)", text, flags=re.IGNORECASE) is not None


@pytest.mark.parametrize("path", TRANSLATED, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_no_term_the_glossary_rules_out(path):
    text = words_of(jupytext.read(path))
    glossary = TRANSLATIONS[path.parent.name][1]
    assert [term for term in ruled_out(glossary) if uses(text, term)] == []


@pytest.mark.parametrize("language, glossary", TRANSLATIONS.values(), ids=list(TRANSLATIONS))
def test_the_message_catalogue_uses_the_glossarys_terms(language, glossary):
    with open(LOCALE / language / "LC_MESSAGES" / "d2lmini.po", "rb") as file:
        catalogue = read_po(file)
    text = "\n".join(form for message in catalogue if message.id
                     for form in (message.string if isinstance(message.string, tuple) else (message.string,)))
    assert [term for term in ruled_out(glossary) if uses(text, term)] == []


@functools.cache
def english_fragments(language):
    """The longest stretch of English between the fields of each message d2lmini translates (15+ characters)."""
    with open(LOCALE / language / "LC_MESSAGES" / "d2lmini.po", "rb") as file:
        catalogue = read_po(file)
    fragments = set()
    for message in catalogue:
        for english in (message.id if isinstance(message.id, tuple) else (message.id,)):
            longest = max(re.split(r"\{[^{}]*\}", english), key=len).strip()
            if len(longest) >= 15 and longest not in str(message.string):
                fragments.add(longest)
    return fragments


def outputs_text(notebook):
    """What a chapter's stored outputs say: printed text, text results, and the figures' alt texts."""
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            parts.append("".join(output.get("text", "")))
            data = output.get("data", {})
            if WIDGET_VIEW not in data:  # an explorer's text/plain is its repr, the API's own English names
                parts.append("".join(data.get("text/plain", "")))
            parts.append(output.get("metadata", {}).get("image/png", {}).get("alt", ""))
    return "\n".join(parts)


@pytest.mark.parametrize("path", TRANSLATED, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_the_outputs_of_a_translated_chapter_hold_no_english_message_of_d2lmini(path):
    notebook = nbformat.read(path.with_suffix(".ipynb"), as_version=4)
    said = outputs_text(notebook)
    language = TRANSLATIONS[path.parent.name][0]
    assert sorted(fragment for fragment in english_fragments(language) if fragment in said) == []


# ---- no English word in what a learner reads: a translated chapter's outputs and explorers

# Common English words that no translation's language shares, and the words d2lmini's own English would
# leave: a part of attention, a kernel's or a task's name. A word a language shares ("for", "a", "do",
# "no", "se" in Portuguese) is not here.
ENGLISH_WORDS = frozenset("""
    the of and with is are to from in on at by it its this that these those not an or be was were has have
    had each every all than per which when where what how only just into over after before got must should
    weight weights query queries key keys value values mask masked padding example examples head heads step
    steps scaled unscaled reverse sort additive dot-product gaussian boxcar constant output outputs input
    inputs score scores attention layer row rows column columns shape batch length lengths size loss error
    training learning rate hidden seed sentence word words sum embedding embeddings
""".split())
# Text a chapter shows in English on purpose, by chapter, each with its reason.
KEPT_ENGLISH = {
    "pt/02_masked_softmax": {
        "RuntimeError: Boolean value of Tensor with more than one value is ambiguous":
            "PyTorch's own message: what Python's and raises on a tensor, which the chapter shows",
    },
    "pt/05_multi_head_attention": {
        "AssertionError: embed_dim must be divisible by num_heads": "PyTorch's own message, shown beside d2lmini's",
    },
}
# A widget's texts that a learner reads: its label, tooltip, options and shown value.
WIDGET_TEXTS = ("description", "tooltip", "description_tooltip", "placeholder", "_options_labels", "value")
CODE = [  # what is code, not words, in the order it is taken out
    re.compile(r"<style.*?</style>|<code>.*?</code>", re.DOTALL),
    re.compile(r"<[^>]+>"),  # the tags of an explorer's HTML
    re.compile(r"`[^`]*`"),
    re.compile(r"[\w.]+\((?:[^()]|\([^()]*\))*\)"),  # a call: an explorer's repr, d2l.masked_softmax(...)
    re.compile(r"'[^'\n]*'"),  # a Python string in a repr, a token in quotes
]
CODE_TOKEN = re.compile(r"[_./=\\\d<>@#*+→−√²ᵀ×]|[a-z][A-Z]|^(True|False|None)$")


@functools.cache
def english_by_design(chapter):
    """The words chapter 09's model reads, which stay English (docs/translating.md); none elsewhere."""
    if not chapter.endswith("09_pretrained_attention"):
        return frozenset()
    from d2lmini.pretrained import EMBEDDING_SENTENCES, EXAMPLE_SENTENCES
    return frozenset(word.lower() for text in EXAMPLE_SENTENCES + EMBEDDING_SENTENCES
                     for word in re.findall(r"[A-Za-z]+", text))


def learner_texts(notebook):
    """(where, text) for each text a learner reads in a chapter's outputs: printed text, a text result (an
    explorer's or a question's too), HTML, an error, a figure's alt text, and each widget's label, tooltip,
    options and shown value (the notebook's widget state)."""
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            texts = ["".join(output.get("text", "")), "".join(data.get("text/html", "")),
                     output.get("metadata", {}).get("image/png", {}).get("alt", ""),
                     f"{output.get('ename', '')}: {output.get('evalue', '')}" if "ename" in output else ""]
            if "image/png" not in data:  # a figure's text/plain is matplotlib's repr of it
                texts.append("".join(data.get("text/plain", "")))
            yield from ((f"cell {index}", text) for text in texts if text.strip())
    state = notebook.metadata.get("widgets", {}).get(stable_outputs.STATE_MIME, {}).get("state", {})
    for model in state.values():
        for name in WIDGET_TEXTS:
            if (model["model_name"], name) == ("ImageModel", "value"):  # a picture's bytes
                continue
            value = model["state"].get(name)
            for text in value if isinstance(value, list) else [value]:
                if isinstance(text, str) and text.strip():
                    yield f"{model['model_name']}.{name}", text


def english_words(text, kept=frozenset()):
    """The words of ``text`` that are English, once its code is set aside (HTML, `code`, calls, Python
    strings, names with code's marks, True/False/None), ``kept`` words aside."""
    for pattern in CODE[:2]:
        text = pattern.sub(" ", text)
    text = html.unescape(text)
    for pattern in CODE[2:]:
        text = pattern.sub(" ", text)
    tokens = (token.strip(".…·'") for token in re.split(r"[\s,;:!?()\[\]{}|\"“”]+", text))
    return [token for token in tokens if token and not CODE_TOKEN.search(token)
            and token.lower() in ENGLISH_WORDS and token.lower() not in kept]


def english_read(notebook, chapter):
    """Each English word a learner reads in ``notebook`` (the chapter ``folder/name``): (where, word, text)."""
    found = []
    for where, text in learner_texts(notebook):
        for kept in KEPT_ENGLISH.get(chapter, {}):
            text = text.replace(kept, " ")
        found += [(where, word, " ".join(text.split())[:160])
                  for word in english_words(text, english_by_design(chapter))]
    return found


@pytest.mark.parametrize("path", TRANSLATED, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_a_learner_reads_no_english_word_in_a_translated_chapters_outputs(path):
    notebook = nbformat.read(path.with_suffix(".ipynb"), as_version=4)
    assert english_read(notebook, f"{path.parent.name}/{path.stem}") == []


def test_each_translation_has_an_english_chapter_of_the_same_name():
    assert all(english_of(path).exists() for path in TRANSLATED)


# ---- the checks themselves, on small hand-built chapters

def chapter(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


def code(text, *tags):
    return nbformat.v4.new_code_cell(text, metadata={"tags": list(tags)} if tags else {})


def test_the_glossary_rules_out_its_alternatives_as_whole_words():
    terms = ruled_out(TRANSLATIONS["pt"][1])
    assert "auto-atenção" in terms and "embutimento" in terms and "consulta" not in terms
    assert uses("Uma auto-atenção simples", "auto-atenção")
    assert not uses("a autoatenção", "auto-atenção")


def test_english_words_are_found_outside_code_only():
    assert english_words("peso 0,41 para a chave 2: the keys, query") == ["the", "keys", "query"]
    code = ("d2l.masked_softmax(scores, valid_lens=[2, 5]) é igual: True; `mask` e 'keys' são código; "
            "KernelPoolingExplorer(sigma=0.5, kernel='gaussian'); tensor([0.5000]); d2l.attention_mask; "
            "<b>peso</b> &quot;x = 0,5&quot;; <style>.the-keys {}</style>")
    assert english_words(code) == []
    assert english_words("16 tokens: the animal", kept=frozenset({"the", "animal"})) == []


def test_every_text_a_learner_reads_is_scanned():
    notebook = chapter(code("x = 1"))
    notebook.cells[0].outputs = [
        nbformat.v4.new_output("stream", text="padding, 4 keys\n"),
        nbformat.v4.new_output("display_data", data={"image/png": "", "text/plain": "<Figure size 2 Axes>"},
                               metadata={"image/png": {"alt": "Figura: “query 2: no key”"}}),
        nbformat.v4.new_output("error", ename="ValueError", evalue="sizes must agree", traceback=[]),
    ]
    notebook.metadata["widgets"] = {stable_outputs.STATE_MIME: {"state": {
        "1": {"model_name": "DropdownModel", "state": {"description": "kernel", "_options_labels": ["gaussian"]}},
        "2": {"model_name": "HTMLModel", "state": {"value": "<b>weights of the query</b>"}},
        "3": {"model_name": "ImageModel", "state": {"value": "the bytes of a picture", "tooltip": "1 query"}},
    }}}
    found = [(where, word) for where, word, _ in english_read(notebook, "pt/00_start_here")]
    assert found == [("cell 0", "padding"), ("cell 0", "keys"), ("cell 0", "query"), ("cell 0", "key"),
                     ("cell 0", "must"), ("DropdownModel._options_labels", "gaussian"),
                     ("HTMLModel.value", "weights"), ("HTMLModel.value", "of"), ("HTMLModel.value", "the"),
                     ("HTMLModel.value", "query"), ("ImageModel.tooltip", "query")]


def test_english_kept_on_purpose_is_not_reported():
    notebook = chapter(code("x = 1"))
    notebook.cells[0].outputs = [nbformat.v4.new_output(
        "stream", text="AssertionError: embed_dim must be divisible by num_heads\n")]
    assert english_read(notebook, "pt/05_multi_head_attention") == []
    assert [word for _, word, _ in english_read(notebook, "pt/04_scaled_dot_product")] == ["must", "be", "by"]
    notebook.cells[0].outputs = [nbformat.v4.new_output("stream", text="The cat is sleeping on the sofa.\n")]
    assert english_read(notebook, "pt/09_pretrained_attention") == []


# ---- numbers with the language's decimal mark: no "0.76" where the prose and the widgets say "0,76"

# A number with a decimal point: digits, a point, digits, with no word character or point either side
# (so "2.13.0", "x_1.5" and "a.b2" are not one).
DECIMAL_POINT = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")
# What keeps its point on purpose: a number the language writes with a thousands mark ("13.642"), an
# exercise's or a section's number, a version (Python 3.11, torch 2.13) and an arXiv identifier.
POINT_KEPT = [
    re.compile(r"(?<![\w.])[1-9]\d{0,2}(?:\.\d{3})+(?![\w.])"),
    re.compile(r"(?i:exerc[íi]cios?|se[çc][ãa]o|section|cap[íi]tulo|chapter)\s+\d+\.\d+"),
    re.compile(r"(?i:python|torch|pytorch|numpy|vers[ãa]o|version|ipywidgets|jupyterlab)\s+\d+\.\d+"),
    re.compile(r"arXiv:\d+\.\d+"),
]
# Versions a chapter names with no name before them, by chapter, each with its reason.
POINTS_KEPT_BY_CHAPTER = {
    "pt/02_masked_softmax": {
        "(2.13, na CPU)": "the torch version the collection pins, named just before",
        "a 2.5)": "a torch version (\"versões mais antigas\", just before)",
    },
}
MARKDOWN_CODE = re.compile(r"```.*?```|`[^`\n]*`|\]\([^)]*\)|https?://\S+|<[^>]+>", re.DOTALL)
SLIDERS = {"FloatSliderModel", "FloatLogSliderModel", "FloatRangeSliderModel"}


def decimal_points(text, kept=()):
    """The numbers of ``text`` written with a decimal point, its code and what keeps a point on purpose
    (``POINT_KEPT``, ``kept``) set aside."""
    for found in kept:
        text = text.replace(found, " ")
    for pattern in POINT_KEPT:
        text = pattern.sub(" ", text)
    return DECIMAL_POINT.findall(text)


def points_in_prose(notebook, kept=()):
    """(where, number, text) for each decimal point in a chapter's Markdown (formulas too: "0{,}5")."""
    found = []
    for index, cell in enumerate(notebook.cells, 1):
        if cell.cell_type == "markdown":
            text = MARKDOWN_CODE.sub(" ", cell.source)
            found += [(f"cell {index} (Markdown)", number, pairs.first_words(cell.source, 60))
                      for number in decimal_points(text, kept)]
    return found


def points_in_outputs(notebook, kept=()):
    """(where, number, text) for each decimal point in what a learner reads in a chapter's stored outputs
    and widget state (``learner_texts``), code set aside as ``english_words`` does (HTML, `code`, calls
    such as a tensor's repr, Python strings); and each slider whose readout is ipywidgets' own, which
    writes a point in every language (controls._marked_readout)."""
    found = []
    for where, text in learner_texts(notebook):
        for pattern in CODE[:2]:
            text = pattern.sub(" ", text)
        text = html.unescape(text)
        for pattern in CODE[2:]:
            text = pattern.sub(" ", text)
        found += [(where, number, " ".join(text.split())[:160]) for number in decimal_points(text, kept)]
    state = notebook.metadata.get("widgets", {}).get(stable_outputs.STATE_MIME, {}).get("state", {})
    found += [(f"{model['model_name']} {model['state'].get('description', '')!r}", "readout",
               "ipywidgets' own readout, which writes a decimal point")
              for model in state.values()
              if model["model_name"] in SLIDERS and model["state"].get("readout", True)]
    return found


def points_message(chapter, found):
    return f"{chapter}: {len(found)} numbers written with a decimal point:\n" + "\n".join(
        f"  {where}: {number} in “{text}”" for where, number, text in found)


@pytest.mark.parametrize("path", TRANSLATED, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_a_translated_chapters_prose_writes_the_languages_decimal_mark(path):
    chapter = f"{path.parent.name}/{path.stem}"
    found = points_in_prose(jupytext.read(path), POINTS_KEPT_BY_CHAPTER.get(chapter, {}))
    if found:
        pytest.fail(points_message(chapter, found), pytrace=False)


@pytest.mark.parametrize("path", TRANSLATED, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_a_translated_chapters_outputs_write_the_languages_decimal_mark(path):
    """Its prints, figures' alt texts, explorers' texts and sliders' readouts; a stored output changes
    when the chapter is executed again (make notebooks)."""
    chapter = f"{path.parent.name}/{path.stem}"
    notebook = nbformat.read(path.with_suffix(".ipynb"), as_version=4)
    found = points_in_outputs(notebook, POINTS_KEPT_BY_CHAPTER.get(chapter, {}))
    if found:
        pytest.fail(points_message(chapter, found), pytrace=False)


def test_a_decimal_point_is_found_outside_code_versions_and_thousands():
    assert decimal_points("σ = 0.5, peso 0,41, 13.642 tokens, 1.000 e 0.025") == ["0.5", "0.025"]
    assert decimal_points("Exercício 1.2, seção 3.5, Python 3.11, torch 2.13, 2.13.0, arXiv:1409.0473") == []
    assert decimal_points("a SDPA (2.13, na CPU)", kept=["(2.13, na CPU)"]) == []
    notebook = chapter(nbformat.v4.new_markdown_cell("Em $\\sigma = 0.5$ e $\\sqrt{981{,}5}$; `x = 0.5`, "
                                                     "[doc](https://x.org/v1.2)"), code("x = 0.5"))
    assert points_in_prose(notebook) == [("cell 1 (Markdown)", "0.5", pairs.first_words(notebook.cells[0].source, 60))]
    notebook.cells[1].outputs = [
        nbformat.v4.new_output("stream", text="σ = 0.5: tensor([0.2500]) 'a.5' 0,25\n"),
        nbformat.v4.new_output("display_data", data={"text/html": '<div style="line-height:1.4">0,5</div>'},
                               metadata={"image/png": {"alt": "Painel 1, “σ = 0.05”"}}),
    ]
    notebook.metadata["widgets"] = {stable_outputs.STATE_MIME: {"state": {
        "1": {"model_name": "FloatLogSliderModel", "state": {"description": "σ", "readout": True}},
        "2": {"model_name": "FloatSliderModel", "state": {"description": "q", "readout": False}},
        "3": {"model_name": "LabelModel", "state": {"value": "0.25"}},
    }}}
    assert [(where, number) for where, number, _ in points_in_outputs(notebook)] == [
        ("cell 1", "0.5"), ("cell 1", "0.05"), ("LabelModel.value", "0.25"), ("FloatLogSliderModel 'σ'", "readout")]
