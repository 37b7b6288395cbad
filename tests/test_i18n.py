"""d2lmini's language setting and its message catalogues (docs/translating.md).

What each part says in Portuguese is tested beside it (test_i18n_exercises_a.py,
test_i18n_exercises_b.py, test_i18n_explorers.py); here, the setting itself,
numbers, the two errors a chapter shows on purpose, and the whole catalogue:
every message the code marks is translated, with the English's fields, and
compiled.
"""

import pytest
from babel.messages.catalog import Catalog

from d2lmini import i18n
from tools import catalogues


@pytest.fixture
def english_after():
    yield
    i18n.set_language("en")


def test_english_is_the_default_and_portuguese_is_there():
    assert i18n.current_language() == "en"
    assert i18n.languages() == ["en", "pt_BR"]
    assert i18n._("fit to weights") == "fit to weights"


def test_a_language_is_set_and_set_back(english_after):
    i18n.set_language("pt_BR")
    assert i18n.current_language() == "pt_BR" and i18n._("fit to weights") != "fit to weights"
    assert i18n._("a message no catalogue holds") == "a message no catalogue holds"
    i18n.set_language("en")
    assert i18n._("fit to weights") == "fit to weights"


@pytest.mark.parametrize("language", ["fr", "pt", "", None, 1])
def test_an_unknown_language_is_refused_naming_the_ones_there(language):
    with pytest.raises(ValueError, match=r"language must be one of \['en', 'pt_BR'\], got"):
        i18n.set_language(language)


def test_every_message_of_d2lmini_is_translated_and_compiled(capsys):
    assert catalogues.main(["check"]) == 0, capsys.readouterr().err


ERRORS = {  # chapter 03's sizes that must agree, chapter 05's head count, in each language
    "pt_BR": ("os tamanhos das consultas e das chaves (último eixo) para um produto escalar precisam ser iguais: "
              "consultas (2, 1, 20) têm 20, chaves (2, 10, 2) têm 2",
              "num_hiddens (10) precisa ser divisível por num_heads (4) para que toda cabeça tenha a mesma largura; "
              "experimente num_heads em [1, 2, 5, 10]"),
    "en": ("query and key sizes (last axis) for a dot product must agree: queries (2, 1, 20) has 20, "
           "keys (2, 10, 2) has 2",
           "num_hiddens (10) must be divisible by num_heads (4) so that every head gets the same width; "
           "try num_heads in [1, 2, 5, 10]"),
}


@pytest.mark.parametrize("language", list(ERRORS))
def test_the_errors_a_chapter_shows_on_purpose_are_in_the_learners_language(language, english_after):
    import torch

    import d2lmini as d2l

    i18n.set_language(language)
    with pytest.raises(ValueError) as sizes:
        d2l.DotProductAttention(dropout=0.0)(torch.ones(2, 1, 20), torch.ones(2, 10, 2), torch.ones(2, 10, 2))
    with pytest.raises(ValueError) as heads:
        d2l.MultiHeadAttention(num_hiddens=10, num_heads=4, dropout=0.0)
    assert (str(sizes.value), str(heads.value)) == ERRORS[language]


def catalogue(*entries):
    built = Catalog(locale="pt_BR", domain="d2lmini")
    for english, translated, *flags in entries:
        built.add(english, translated, flags=flags)
    return built


def test_the_check_names_each_kind_of_problem():
    template = catalogue(("the {count} queries", None), ("a key", None), ("a value", None), ("fresh", None))
    translated = catalogue(("the {count} queries", "as consultas"), ("a key", "uma chave", "fuzzy"),
                           ("a value", ""), ("fresh", "novo"), ("gone", "sumiu"))
    found = catalogues.problems(template, translated, b"")
    assert [line.split(" (")[0].split(":")[0] for line in found] == [
        "fields differ from the English's ['count']", "fuzzy, the English changed", "untranslated",
        "no longer in the code", "the .mo is not the .po compiled"]
    assert catalogues.problems(template, catalogue(("the {count} queries", "as {count} consultas"),
                                                   ("a key", "uma chave"), ("a value", "um valor"),
                                                   ("fresh", "novo")),
                               catalogues.compiled(catalogue(("the {count} queries", "as {count} consultas"),
                                                             ("a key", "uma chave"), ("a value", "um valor"),
                                                             ("fresh", "novo")))) == []


def test_the_check_names_a_message_used_in_another_file_but_not_one_moved_within_its_file(tmp_path):
    """The .po names each message's files without their lines (``update`` writes it so): an edit that moves a
    message down its file changes nothing there, one that moves it to another file is named."""
    def code(key_lines, value_file):
        template = Catalog(locale="pt_BR", domain="d2lmini")
        template.add("a key", None, locations=[("d2lmini/attention.py", line) for line in key_lines])
        template.add("a value", None, locations=[(value_file, 12)])
        return template

    written = catalogue(("a key", "uma chave"), ("a value", "um valor"))
    written.update(code([80, 95], "d2lmini/masking.py"))
    catalogues.write(written, tmp_path / "d2lmini.po")
    assert "#: d2lmini/attention.py\nmsgid" in (tmp_path / "d2lmini.po").read_text()  # the file once, no line
    translated = catalogues.read(tmp_path / "d2lmini.po")
    mo = catalogues.compiled(translated)
    assert catalogues.problems(code([80, 95], "d2lmini/masking.py"), translated, mo) == []
    assert catalogues.problems(code([120], "d2lmini/masking.py"), translated, mo) == []  # moved down its file
    assert catalogues.problems(code([80, 95], "d2lmini/attention.py"), translated, mo) == [  # to another file
        "the .po names other source files than the code for 1 message(s), the first 'a value': "
        "run python -m tools.catalogues update"]


def test_numbers_take_the_languages_marks_in_a_translated_message_and_on_their_own(english_after):
    import numpy as np
    import torch

    template = "{weight:.2f} of {tokens:,} tokens, σ = {sigma:g}, {flag}, {code}, {count}"
    values = dict(weight=0.4123, tokens=13642, sigma=np.float32(0.5), flag=True, code="x.sum()", count=3)
    assert i18n._(template).format(**values) == "0.41 of 13,642 tokens, σ = 0.5, True, x.sum(), 3"
    assert i18n.number(1234.5, ",.1f") == "1,234.5" and i18n.marks() == (".", ",")
    i18n.set_language("pt_BR")
    assert i18n.marks() == (",", ".")
    assert i18n._(template).format(**values) == "0,41 of 13.642 tokens, σ = 0,5, True, x.sum(), 3"
    assert i18n._("{total:.3f}").format(total=torch.tensor(0.25)) == "0,250"  # a 0-d tensor is a number
    assert i18n._("{shown}").format(shown=torch.tensor([0.25])) == "tensor([0.2500])"  # a tensor is not
    assert i18n.number(1234.5, ",.1f") == "1.234,5" and i18n.number(2) == "2"
    assert i18n.n_("{n} step of {s:.1f}", "{n} steps of {s:.1f}", 2).format(n=2, s=0.5).endswith("0,5")


def test_a_list_of_numbers_is_separated_by_semicolons_where_the_decimal_mark_is_a_comma(english_after):
    import torch

    assert i18n.numbers([0.5, 0.2, 0.125], "g") == "0.5, 0.2, 0.125"
    assert i18n.numbers([13642, 4096], ",") == "13,642, 4,096"
    assert i18n.numbers(["triangular 0.303", 2]) == "triangular 0.303, 2"  # text is kept as it is
    i18n.set_language("pt_BR")
    assert i18n.numbers([0.5, 0.2, 0.125], "g") == "0,5; 0,2; 0,125"
    assert i18n.numbers([13642, 4096], ",") == "13.642; 4.096"
    assert i18n.numbers(["triangular 0,303", 2]) == "triangular 0,303; 2" and i18n.numbers([]) == ""
    # What is not a number is written as Python writes it, its dots kept.
    assert (i18n.number(True), i18n.number(torch.tensor([0.25])), i18n.number("0.5")) == (
        "True", "tensor([0.2500])", "0.5")


def test_a_message_with_a_context_is_checked_under_its_context():
    template = Catalog(locale="pt_BR", domain="d2lmini")
    template.add(".", None, context="decimal mark")
    translated = Catalog(locale="pt_BR", domain="d2lmini")
    translated.add(".", ",", context="decimal mark")
    assert catalogues.problems(template, translated, catalogues.compiled(translated)) == []
    translated.add(",", ".", context="thousands mark")
    assert catalogues.problems(template, translated, catalogues.compiled(translated)) == [
        "no longer in the code: ','"]


def test_a_numpy_array_is_written_as_print_writes_it_with_the_languages_marks(english_after):
    import numpy as np

    values = np.array([[0.413, 0.152, 0.0], [1.0, 2.5, 4.1]])
    assert i18n.number(values) == str(values) == "[[0.413 0.152 0.   ]\n [1.    2.5   4.1  ]]"
    assert i18n.number(np.array([0.25, 1.5]), ".2f") == "[0.25 1.50]"
    i18n.set_language("pt_BR")
    # A whole float's bare mark ("1.") becomes a space, not "1,", and the columns stay lined up.
    assert i18n.number(values) == "[[0,413 0,152 0    ]\n [1     2,5   4,1  ]]"
    assert i18n.number(np.array([0.25, 1.5]), ".2f") == "[0,25 1,50]"
    assert i18n.number(np.array([3, 14])) == "[ 3 14]"


def test_a_list_of_numbers_is_written_as_python_writes_it_with_the_languages_marks(english_after):
    assert i18n.number([0.0, 0.25]) == str([0.0, 0.25]) and i18n.number([[1.0], [0.5]]) == "[[1.0], [0.5]]"
    i18n.set_language("pt_BR")
    assert i18n.number([0.0, 0.25]) == "[0,0; 0,25]" and i18n.number([[1.0], [0.5]]) == "[[1,0]; [0,5]]"
    assert i18n.number([0.0, 0.25], ".2f") == "[0,00; 0,25]" and i18n.number([]) == "[]"
    assert i18n.number(["a.b", 0.5]) == "['a.b', 0.5]"  # not all numbers: as Python writes it
    assert i18n.number([1, 2, 5, 10]) == "[1, 2, 5, 10]"  # whole numbers: no mark to change, often code


def test_a_dict_of_numbers_is_written_as_python_writes_it_with_the_languages_marks(english_after):
    by_digit = {0: 0.13, 3: 0.0, 5: 0.87}
    assert i18n.number(by_digit) == str(by_digit) == "{0: 0.13, 3: 0.0, 5: 0.87}"
    i18n.set_language("pt_BR")
    assert i18n.number(by_digit) == "{0: 0,13; 3: 0,0; 5: 0,87}"
    assert i18n.number({0.5: 1.24}, ".1f") == "{0,5: 1,2}"  # a key is a number too; spec is the values'
    assert i18n.number({"a.b": 0.5}) == "{'a.b': 0.5}"  # a key that is text: as Python writes it
    assert i18n.number({1: 2, 3: 4}) == "{1: 2, 3: 4}" and i18n.number({}) == "{}"  # no float: kept
