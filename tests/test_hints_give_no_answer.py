"""No hint, at any step, contains the code of a reference answer.

The reference answers are the lines between ``### BEGIN SOLUTION`` and
``### END SOLUTION`` of every exercise cell in the notebooks, read with
``tools/editions.py``'s own parser. The texts searched are every string a
check module can show (each literal and the fixed parts of each f-string in
``d2lmini/exercises``, docstrings and comments aside: they are what the hints
and messages are made of) and the rendered errors, with every hint step, of
each check on the wrong answers of ``test_exercise_feedback.py``.

A text gives code away when it holds a run of ``RUN`` consecutive tokens of a
solution line (comments dropped, whitespace ignored) and that run is code, not
a word list: it holds a call, an attribute, an index, an assignment or an
operator. Five tokens is the shortest answer fragment worth hiding,
``.squeeze(1)``; four or fewer are how prose names things, a dotted name
(``d2l.masked_softmax``) or the math of the exercise (``i - window``).
Shapes such as ``(B, Q, K`` are names and commas, so they may be quoted.
"""

import ast
import io
import re
import textwrap
import tokenize
from pathlib import Path

import jupytext
import pytest
from exercise_answers import WRONG_ANSWERS, failure
from leak_search import solution_regions

REPO = Path(__file__).resolve().parent.parent

RUN = 5
TOKEN = re.compile(r"\w+|\*\*|//|<=|>=|==|!=|->|\S")
NOT_CODE = re.compile(r"\w+|[,()]")  # names, numbers, commas and parentheses: a shape or a list of words


def tokens(text):
    return TOKEN.findall(text)


def answer_code():
    """Every code line of every reference answer, without its comment."""
    lines = []
    for path in sorted((REPO / "notebooks").glob("*.py")):
        for region in solution_regions(jupytext.read(path), path.name):
            lines += _without_comments(textwrap.dedent("\n".join(region)))
    return lines


def _without_comments(region):
    """The non-empty lines of a block of code, each cut where its comment starts."""
    cuts = {token.start[0]: token.start[1] for token in tokenize.generate_tokens(io.StringIO(region).readline)
            if token.type == tokenize.COMMENT}
    lines = (line[:cuts.get(number, len(line))].strip() for number, line in enumerate(region.splitlines(), 1))
    return [line for line in lines if line]


def code_runs(line):
    """Each run of RUN consecutive tokens of ``line`` that is code."""
    found = tokens(line)
    return {tuple(found[i:i + RUN]) for i in range(len(found) - RUN + 1)
            if not all(NOT_CODE.fullmatch(token) for token in found[i:i + RUN])}


def leaks(text, lines):
    """The solution lines whose code ``text`` quotes."""
    found = tokens(text)
    windows = {tuple(found[i:i + RUN]) for i in range(len(found) - RUN + 1)}
    return [line for line in lines if code_runs(line) & windows]


def _docstrings(tree):
    nodes = [tree] + [node for node in ast.walk(tree)
                      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return {id(node.body[0].value) for node in nodes
            if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}


def literal_texts():
    """Every string literal of d2lmini/exercises, an f-string's fields replaced by '…', docstrings aside."""
    texts = []
    for path in sorted((REPO / "d2lmini" / "exercises").glob("*.py")):
        tree = ast.parse(path.read_text())
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                texts.append("".join(part.value if isinstance(part, ast.Constant) else " … " for part in node.values))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                texts.append(node.value)
    return texts


SOLUTION_LINES = answer_code()
LITERALS = literal_texts()


def test_the_reference_answers_and_the_hint_texts_are_found():
    assert len(SOLUTION_LINES) > 40
    assert "return torch.clamp(1 - u.abs(), min=0)" in SOLUTION_LINES
    assert "return (weights @ values).squeeze(1)" in SOLUTION_LINES  # its comment dropped
    assert any("the padded queries still attend" in text for text in LITERALS)
    assert any(text.startswith("the score is qᵀk - ½‖k‖²") for text in LITERALS)


def test_no_string_a_check_can_show_quotes_a_reference_answer():
    assert {text: leaks(text, SOLUTION_LINES) for text in LITERALS if leaks(text, SOLUTION_LINES)} == {}


@pytest.mark.parametrize("name", sorted(WRONG_ANSWERS))
def test_no_rendered_error_or_later_hint_step_quotes_a_reference_answer(name):
    error = failure(name, WRONG_ANSWERS[name])
    for text in [*error.lines(), *error.hints]:
        assert leaks(text, SOLUTION_LINES) == [], text


@pytest.mark.parametrize("hint, quoted", [
    ("clamp it: torch.clamp(1 - u.abs(), min=0)", "return torch.clamp(1 - u.abs(), min=0)"),
    ("then drop the axis with .squeeze(1)", "return (weights @ values).squeeze(1)"),
    ("build torch.tril(torch.ones(n, n, dtype=torch.bool))",
     'allowed = torch.tril(torch.ones(n, n, dtype=torch.bool, device=scores.device))'),
    ("it is budget_bytes // (batch_size * num_heads scores", "numbers = budget_bytes // (batch_size * num_heads * "
                                                              "dtype.itemsize)"),
    ("use (num_steps-valid_lens)[:,None] for the first key",
     "real = steps[None, :] >= (num_steps - valid_lens)[:, None]"),
], ids=["a whole line", "a method call", "a call without one argument", "arithmetic", "without spaces"])
def test_control_a_hint_that_quotes_an_answer_is_caught(hint, quoted):
    assert quoted in SOLUTION_LINES
    assert quoted in leaks(hint, SOLUTION_LINES)


@pytest.mark.parametrize("hint", [
    "stack [q; k] into a (B, Q, K, q + k) tensor",
    "d2l.masked_softmax gives an example of length 0 all-zero weights",
    "query i may attend to key j when i - window < j <= i",
    "j ≥ num_steps - valid_lens[b]",
], ids=["a shape", "a function's name", "the exercise's math", "a position"])
def test_control_prose_that_names_things_is_not_flagged(hint):
    assert leaks(hint, SOLUTION_LINES) == []


# An exercise whose method fits in a phrase can be given away in plain words, with no code at all. Its method
# is written here as groups of phrases: a text holding a phrase of every group states the method, and the
# hints must leave the learner to find it. What the learner can read for the exercise counts as one text: the
# exercise's own Markdown in its chapter and every string of its check's hint function.
METHODS = {
    "Exercise 2.1": ("02_masked_softmax.py", "ch02.py", "_masked_mean_hint", [
        ("masked_softmax",),  # the tool ...
        ("zeros", "zero scores", "same score", "equal score"),  # ... fed equal scores
    ]),
}


def exercise_texts(exercise, chapter, module, hint_function):
    """The exercise's Markdown (its heading to the next cell) and its hint function's string literals."""
    cells = jupytext.read(REPO / "notebooks" / chapter).cells
    markdown = [cell.source for cell in cells
                if cell.cell_type == "markdown" and cell.source.startswith(f"### {exercise} ")]
    tree = ast.parse((REPO / "d2lmini" / "exercises" / module).read_text())
    function = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                    and node.name == hint_function)
    strings = [node.value for node in ast.walk(function) if isinstance(node, ast.Constant)
               and isinstance(node.value, str)]
    return markdown, strings


def states_method(text, groups):
    text = " ".join(text.lower().split())
    return all(any(phrase in text for phrase in group) for group in groups)


@pytest.mark.parametrize("exercise", sorted(METHODS))
def test_no_hint_states_the_method_in_words(exercise):
    chapter, module, hint_function, groups = METHODS[exercise]
    markdown, strings = exercise_texts(exercise, chapter, module, hint_function)
    assert len(markdown) == 1 and len(strings) >= 4  # the texts were found
    assert not states_method(" ".join(markdown + strings), groups)


@pytest.mark.parametrize("text, stated", [
    ("Hint: `d2l.masked_softmax` on a tensor of zeros of shape (batch, 1, steps).", True),
    ("give every step the same score and let d2l.masked_softmax make the weights", True),
    ("a mean is a weighted average: where in this chapter have you met weights like that?", False),
    ("d2l.masked_softmax gives an example of length 0 all-zero weights", False),
], ids=["the old exercise hint", "the old check hint", "a question", "the tool without its scores"])
def test_control_a_text_that_names_the_tool_and_its_scores_states_the_method(text, stated):
    assert states_method(text, METHODS["Exercise 2.1"][3]) is stated
