"""Chapter 09's checks accept right answers and name the typical wrong ones, with or without the model."""

import pytest
import torch
from exercise_answers import previous_token_head, sep_share, similarity_matrix

from d2lmini.exercises import ExerciseError, ch09


def test_the_success_lines_report_the_real_models_heads(capsys):
    ch09.check_sep_share(sep_share)
    ch09.check_previous_token_head(previous_token_head)
    out = capsys.readouterr().out
    assert ("the words' [SEP] share peaks at 0.16 (layer 3, head 11), their [CLS] share at 0.89 "
            "(layer 4, head 5)") in out
    assert "your search finds layer 0, head 2: on the chapter's sentences 1.00 of each word's attention" in out


# ---- Exercise 9.1 -------------------------------------------------------------

@pytest.mark.parametrize("wrong, message", [
    (lambda a: a[..., :, -1], r"(?s)expected: shape \(2, 3\).*received: shape \(2, 3, 6\).*hint: \[SEP\] is the last "
                              r"token"),
], ids=["not averaged"])
def test_sep_share_names_each_typical_mistake(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        ch09.check_sep_share(wrong)


def test_sep_share_names_the_differing_row_by_its_layer():
    # Averaged over every row: wrong in every head; the first differing row is layer 0's heads.
    with pytest.raises(ExerciseError, match=r"expected: layer 0: \[.*\n  received: layer 0: \["):
        ch09.check_sep_share(lambda a: a[..., :, -1].mean(dim=-1))


# ---- Exercise 9.2 -------------------------------------------------------------

@pytest.mark.parametrize("wrong, message", [
    (lambda maps: previous_token_head(maps, rows=lambda T: torch.arange(1, T)), r"leave out the \[CLS\] and \[SEP\]"),
    (lambda maps: ((1, 2), 0.5), r"(?s)expected: score 0.9000.*received: 0.5000"),
], ids=["with the [SEP] row", "wrong score"])
def test_previous_token_head_names_each_typical_mistake(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        ch09.check_previous_token_head(wrong)


def test_previous_token_head_accepts_tensor_numbers():
    def with_tensors(maps):
        (layer, head), score = previous_token_head(maps)
        return (torch.tensor(layer), torch.tensor(head)), torch.tensor(score)

    ch09.check_previous_token_head(with_tensors)


def test_previous_token_head_gets_the_maps_of_sentences_of_different_lengths():
    seen = []
    with pytest.raises(ExerciseError):
        ch09.check_previous_token_head(lambda maps: seen.extend(m.shape for m in maps))
    assert seen == [(3, 4, 7, 7), (3, 4, 10, 10)]


# ---- Exercise 9.3 -------------------------------------------------------------

@pytest.mark.parametrize("wrong, message", [
    (lambda h, v: torch.eye(4), r"average each sentence's token vectors over its valid tokens only"),
], ids=["other"])
def test_similarity_matrix_names_each_typical_mistake(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        ch09.check_similarity_matrix(wrong)


def test_similarity_matrix_success_line_shows_what_padding_would_do(capsys):
    ch09.check_similarity_matrix(similarity_matrix)
    assert "would score 0.97 instead of -0.06: shared padding looks like shared meaning" in capsys.readouterr().out
