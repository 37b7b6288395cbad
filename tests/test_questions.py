"""Each chapter's "why" question: its table, its widget, and the notebooks that ask it."""

import html
import json
import math
import re
from pathlib import Path

import pytest

from d2lmini.exercises import questions
from d2lmini.exercises.questions import QUESTIONS

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))
CHAPTERS = sorted(QUESTIONS)


def widget_states(widget):
    """The synced state of ``widget`` and of every widget inside it, as one JSON text."""
    states, pending = [], [widget]
    while pending:
        current = pending.pop()
        states.append(current.get_state())
        pending.extend(getattr(current, "children", ()))
    return json.dumps(states, ensure_ascii=False, default=str)


def answered(chapter, option):
    """The question of ``chapter`` with ``option`` picked and Check pressed."""
    question = questions.ask(chapter)
    question.choices.index = option
    question.check_button.click()
    return question


def cells(source):
    """The cells of a py:percent file as (header line, body text)."""
    parts = re.split(r"^(# %%.*)$", source, flags=re.M)
    return list(zip(parts[1::2], parts[2::2]))


def test_every_chapter_notebook_has_a_question_and_no_other_chapter_does():
    assert CHAPTERS == [path.name[:2] for path in SOURCES]


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: path.stem)
def test_each_notebook_asks_its_question_after_a_markdown_cell_that_states_it(path):
    chapter, notebook_cells = path.name[:2], cells(path.read_text())
    calls = [i for i, (_, body) in enumerate(notebook_cells) if f'questions.ask("{chapter}")' in body]
    assert len(calls) == 1, f"{path.name} should call questions.ask(\"{chapter}\") once"
    header, markdown = notebook_cells[calls[0] - 1]
    assert header.startswith("# %% [markdown]")
    text = " ".join(line.removeprefix("#").strip() for line in markdown.splitlines())
    assert "## Why? A question to check" in text
    assert " ".join(QUESTIONS[chapter].prompt.split()) in text
    # Before the exercises (chapter 00 has none: before its further reading), so lecture mode keeps it.
    following = "".join(body for _, body in notebook_cells[calls[0]:])
    assert re.search(r"^# ## (Exercises|Further reading)\s*$", following, flags=re.M)
    assert "## Exercises" not in "".join(body for _, body in notebook_cells[:calls[0]])


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_question_has_three_or_more_options_one_right_and_feedback_for_each(chapter):
    question = QUESTIONS[chapter]
    assert len(question.options) >= 3
    assert 0 <= question.answer < len(question.options)
    assert len(question.feedback) == len(question.options)
    assert len(set(question.options)) == len(question.options)
    for option, feedback in enumerate(question.feedback):
        assert feedback.startswith("Right.") == (option == question.answer)


def test_all_feedback_texts_are_distinct():
    texts = [text for question in QUESTIONS.values() for text in question.feedback]
    assert len(set(texts)) == len(texts)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_wrong_option_feedback_quotes_the_right_option(chapter):
    question = QUESTIONS[chapter]
    right = question.options[question.answer].removeprefix("Because ").rstrip(".")
    for option, feedback in enumerate(question.feedback):
        if option != question.answer:
            assert right.lower() not in feedback.lower()


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_wrong_option_shows_its_own_feedback_and_not_the_explanation(chapter):
    question = QUESTIONS[chapter]
    right_feedback = html.escape(question.feedback[question.answer])
    for option in range(len(question.options)):
        if option == question.answer:
            continue
        shown = answered(chapter, option).feedback.value
        assert shown == html.escape(f"✗ Not quite. {question.feedback[option]}")
        assert right_feedback not in shown and "✓" not in shown


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_right_option_shows_a_tick_and_its_explanation(chapter):
    question = QUESTIONS[chapter]
    shown = answered(chapter, question.answer).feedback.value
    assert shown == html.escape(f"✓ {question.feedback[question.answer]}")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_nothing_of_the_answer_is_in_the_state_or_the_text_form_before_a_click(chapter):
    question, widget = QUESTIONS[chapter], questions.ask(chapter)
    state, text = widget_states(widget), repr(widget)
    assert widget.choices.index is None and widget.feedback.value == ""
    for feedback in question.feedback:
        assert html.escape(feedback) not in state and feedback not in state and feedback not in text
    assert '"index": null' in state
    # The control: the same search finds the feedback once Check is pressed.
    assert html.escape(question.feedback[question.answer]) in widget_states(answered(chapter, question.answer))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_text_form_is_short_the_same_each_time_and_lists_the_options(chapter):
    question, text = QUESTIONS[chapter], repr(questions.ask(chapter))
    assert text == repr(questions.ask(chapter))
    lines = text.splitlines()
    assert lines[0] == f"Why? question {chapter}: pick one option, then press Check."
    assert lines[1:] == [f"  ({letter}) {option}" for letter, option in zip("abcd", question.options)]
    assert "0x" not in text
    assert questions.ask(chapter)._repr_mimebundle_()["text/plain"] == text  # whole, not cut at 110


def test_changing_the_choice_clears_the_feedback_and_check_without_a_choice_asks_for_one():
    question = questions.ask("04")
    question.check_button.click()
    assert question.feedback.value == "Pick an option first, then press Check."
    question.choices.index = 0
    question.check_button.click()
    assert question.feedback.value.startswith("✗")
    question.choices.index = 1
    assert question.feedback.value == ""


def test_a_chapter_number_asks_the_same_question_as_its_name():
    assert repr(questions.ask(4)) == repr(questions.ask("04"))


@pytest.mark.parametrize("chapter", ["10", "4", 10, True, None, ["04"]])
def test_a_chapter_without_a_question_is_refused_with_the_chapters_that_have_one(chapter):
    with pytest.raises(ValueError) as error:
        questions.ask(chapter)
    message = str(error.value)
    assert message.startswith("chapter must name a chapter with a question")
    assert f"received {chapter!r}" in message
    assert ", ".join(CHAPTERS) in message


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")), ids=lambda path: path.stem)
def test_no_stored_notebook_carries_a_feedback_text(path):
    stored = path.read_text()
    for question in QUESTIONS.values():
        for feedback in question.feedback:
            assert json.dumps(html.escape(feedback))[1:-1] not in stored
            assert json.dumps(feedback)[1:-1] not in stored


def test_the_length_of_the_options_does_not_give_the_right_one_away():
    """A learner who picks the longest (or the shortest) option does no better than chance.

    If length told nothing, the right one of k options would be the longest with chance 1/k, so over
    all chapters the expected number of questions whose right option is the longest is Σ 1/k_i. The
    rule: that number, counted in characters with a tie counted as longest, is at most the expectation
    rounded up, and so is the number whose right option is the shortest. And no right option is more
    than 1.5 times as long as the mean of its question's wrong options.
    """
    expected = sum(1 / len(question.options) for question in QUESTIONS.values())
    longest, shortest, much_longer = [], [], []
    for chapter, question in QUESTIONS.items():
        right = len(question.options[question.answer])
        wrong = [len(option) for index, option in enumerate(question.options) if index != question.answer]
        if right >= max(wrong):
            longest.append(chapter)
        if right <= min(wrong):
            shortest.append(chapter)
        if right > 1.5 * sum(wrong) / len(wrong):
            much_longer.append(chapter)
    allowed = math.ceil(expected)
    assert len(longest) <= allowed and len(shortest) <= allowed and not much_longer, (
        f"the right option is the longest in chapters {longest} and the shortest in {shortest} (at most "
        f"{allowed} each), and over 1.5 times the wrong ones' mean length in {much_longer} (none)")
