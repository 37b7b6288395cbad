"""Checks for chapter 09, a real pretrained model's attention.

Every check builds its own small attention maps or hidden states, so it works
with or without the model installed; the line printed on success then runs the
learner's function on the attention maps of the chapter's sentences cached in
d2lmini (the same numbers the model gives, rounded to float16).
"""

import torch
import torch.nn.functional as F

from ..i18n import N_, _, number
from ..pretrained import CachedMiniLM
from ._feedback import check, expect_close, passed, require
from ._feedback import hint as hint  # an error asks the learner to run ch09.hint()
from ._support import hint_for, seeded

SEP_SINK = N_("Exercise 9.1 · the [SEP] sink")
PREVIOUS = N_("Exercise 9.2 · the previous-token head")
SIMILARITY = N_("Exercise 9.3 · sentence similarity with padding")


def _random_maps(layers, heads, T):
    """Random attention maps (layers, heads, T, T), each row summing to 1."""
    return torch.softmax(2 * torch.randn(layers, heads, T, T), dim=-1)


def _best(scores):
    """((layer, head), score) of the largest entry of a (layers, heads) tensor."""
    index = int(scores.argmax())
    return divmod(index, scores.shape[1]), float(scores.flatten()[index])


def _word_share(attention, key):
    """(layers, heads): the weight on ``key`` averaged over the word tokens' rows, 1 to T - 2."""
    return attention[..., 1:-1, key].mean(dim=-1)


@check(SEP_SINK)
def check_sep_share(sep_share):
    """Exercise 9.1: the mean over the word tokens' rows of the weight on the last key, per head."""
    with seeded(91):
        attention = _random_maps(2, 3, 6)  # (layers, heads, T, T)
    expected = _word_share(attention, -1)  # (layers, heads)
    received = sep_share(attention.clone())
    hint = hint_for(received, (_("[SEP] is the last token, so the weight a query gives it is the last column of "
                                 "its row; average that over the word tokens' rows"),
                               _("the answer has one number per head: shape (layers, heads)")), [
        (attention[..., :, -1].mean(dim=-1), (_("you averaged over every row: the rows of [CLS] and [SEP] are not "
                                                "words, and must be left out"),
                                              _("the word tokens are rows 1 to T - 2, as in \"Heads with a job\""))),
        (attention[..., :-1, -1].mean(dim=-1), (_("the [CLS] row is still in your average: it is row 0, not a word"),
                                                _("the word tokens are rows 1 to T - 2"))),
        (attention[..., 1:, -1].mean(dim=-1), (_("the [SEP] row is still in your average: it is the last row, and "
                                                 "its weight on itself is not parking"),
                                               _("the word tokens are rows 1 to T - 2"))),
        (_word_share(attention, 0), (_("that is the [CLS] share: [CLS] is the first key, [SEP] the last"),
                                     _("the last column of each row"))),
        (_word_share(attention, -2), (_("off by one: that column is the token before [SEP]"),
                                      _("[SEP] is the very last key"))),
        (attention[..., -1, :].mean(dim=-1), (_("you averaged the [SEP] row, where [SEP] looks: every row sums "
                                                "to 1, so that is always 1/T"),
                                              _("take the column of [SEP], one weight per query, not its row"))),
        (attention[..., 1:-1, -1].sum(dim=-1), (_("a share is an average: divide by the number of rows"),
                                                _("mean over the query axis, not sum"))),
        (_word_share(attention, 0) + _word_share(attention, -1),
         (_("only the [SEP] column: you added [CLS]'s"), _("[SEP] is the last key"))),
    ])
    expect_close(received, expected, SEP_SINK, hint,
                 name_row=lambda index: _("layer {layer}").format(layer=index[0]))
    cache = CachedMiniLM()
    sep = torch.stack([sep_share(cache.attention(text)) for text in cache.sentences]).mean(dim=0)
    cls = torch.stack([_word_share(cache.attention(text), 0) for text in cache.sentences]).mean(dim=0)
    (sep_layer, sep_head), sep_top = _best(sep)
    (cls_layer, cls_head), cls_top = _best(cls)
    passed(SEP_SINK, _("On the chapter's sentences the words' [SEP] share peaks at {sep_top:.2f} (layer {sep_layer}, "
                       "head {sep_head}), their [CLS] share at {cls_top:.2f} (layer {cls_layer}, head {cls_head}): "
                       "this model parks its spare attention on [CLS].").format(
                           sep_top=sep_top, sep_layer=sep_layer, sep_head=sep_head, cls_top=cls_top,
                           cls_layer=cls_layer, cls_head=cls_head))


def _previous_token_maps():
    """Two sentences' maps, (3, 4, 7, 7) and (3, 4, 10, 10), with four planted heads.

    (1, 2) gives 0.90 of each word's attention to the word before: the answer.
    (2, 3) gives 0.95 to the word after; (0, 3) gives 0.86 to the word before,
    but its [CLS] and [SEP] rows give 1.0 to their "previous" column; (2, 0)
    gives 1.0 in the short sentence and 0.82 in the long one, so that it wins
    when each sentence is averaged first. The rest of a row's weight stays on
    the token itself.
    """
    maps = []
    with seeded(92):
        for T, weighted in ((7, 1.0), (10, 0.82)):
            attention = _random_maps(3, 4, T)
            rows = torch.arange(T)
            for (layer, head), share, offset in (((1, 2), 0.90, -1), ((2, 3), 0.95, 1), ((0, 3), 0.86, -1),
                                                 ((2, 0), weighted, -1)):
                planted = torch.zeros(T, T)
                planted[rows, rows] = 1.0  # specials and the remainder: the token itself
                words = rows[1:-1]
                planted[words, words] = 1 - share
                planted[words, words + offset] += share
                if (layer, head) == (0, 3):  # its special rows look "back": [SEP] at the ".", [CLS] wrapping round
                    planted[0], planted[-1] = 0.0, 0.0
                    planted[0, -1], planted[-1, -2] = 1.0, 1.0
                attention[layer, head] = planted
            maps.append(attention)
    return maps


def _previous_scores(maps, rows=lambda T: torch.arange(1, T - 1), offset=-1, per_sentence=False):
    """(layers, heads) mean weight from ``rows`` to the key ``offset`` away, over all sentences."""
    picked = []
    for attention in maps:
        queries = rows(attention.shape[-1])
        picked.append(attention[..., queries, (queries + offset) % attention.shape[-1]])  # (layers, heads, rows)
    if per_sentence:
        return torch.stack([weights.mean(dim=-1) for weights in picked]).mean(dim=0)
    return torch.cat(picked, dim=-1).mean(dim=-1)


def _as_answer(received):
    """((layer, head), score) as Python numbers, or None if ``received`` has another form."""
    try:
        (layer, head), score = received
        return (int(layer), int(head)), float(score)
    except (TypeError, ValueError):
        return None


@check(PREVIOUS)
def check_previous_token_head(previous_token_head):
    """Exercise 9.2: the head whose word tokens look at the token before, pooled over sentences."""
    maps = _previous_token_maps()
    expected_head, expected_score = _best(_previous_scores(maps))
    received = previous_token_head([attention.clone() for attention in maps])
    answer = _as_answer(received)
    require(answer is not None, PREVIOUS, _("a pair ((layer, head), score)"), repr(received)[:80],
            (_("return the head as a pair of ints, (layer, head), and its score, as ((layer, head), score)"),
             _("with a (layers, heads) tensor of scores, the flat index of the largest is layer * heads + head")))
    mistakes = {
        _best(_previous_scores(maps, offset=1))[0]: (
            _("that head looks at the next token: the token before query i is key i - 1"),
            _("row i, column i - 1: one step left of the diagonal")),
        # Every row, or rows 1 to T - 1 (a diagonal one below the main one), picks the same planted head.
        _best(_previous_scores(maps, rows=lambda T: torch.arange(1, T)))[0]: (
            _("leave out the [CLS] and [SEP] rows: they are not words, the token before [CLS] does not exist, "
              "and the one before [SEP] is the full stop"),
            _("the word tokens of a sentence of T tokens are rows 1 to T - 2")),
        _best(_previous_scores(maps, per_sentence=True))[0]: (
            _("you averaged each sentence, then the sentences: a 5-word sentence then weighs as much as an "
              "8-word one"),
            _("pool the weights of all word tokens of all sentences, then average once")),
        expected_head[::-1]: (_("the pair is (layer, head), in that order"), _("swap the two numbers")),
    }
    head, score = answer
    require(head == expected_head, PREVIOUS, f"(layer, head) = {expected_head}", f"{head}",
            mistakes.get(head, (_("for each head, average the weight each word token gives the token just before "
                                  "it"),
                                _("over every word token of every sentence; then the head with the largest "
                                  "average"))))
    require(abs(score - expected_score) < 1e-4, PREVIOUS, _("score {score:.4f}").format(score=expected_score),
            number(score, ".4f"),
            (_("the score is the mean weight on the previous token over all word tokens of all sentences"),
             _("rows 1 to T - 2 of each sentence, column i - 1, averaged together")))
    cache = CachedMiniLM()
    answer = _as_answer(previous_token_head([cache.attention(text) for text in cache.sentences]))
    (layer, head), score = answer
    passed(PREVIOUS, _("In all-MiniLM-L6-v2 your search finds layer {layer}, head {head}: on the chapter's "
                       "sentences {score:.2f} of each word's attention goes to the token before it.").format(
                           layer=layer, head=head, score=score))


def _similarity(hidden, valid_lens, include_padding=False, normalise=True, axis=1):
    real = torch.arange(hidden.shape[1])[None, :] < valid_lens[:, None]  # (n, T)
    if include_padding:
        real = torch.ones_like(real)
    if axis == 1:
        means = (hidden * real[..., None]).sum(dim=1) / real.sum(dim=1, keepdim=True)  # (n, d)
    else:
        means = hidden.mean(dim=-1)  # (n, T): the mistake of pooling the features
    if normalise:
        means = F.normalize(means, dim=-1)
    return means @ means.T


@check(SIMILARITY)
def check_similarity_matrix(similarity_matrix):
    """Exercise 9.3: mean pooling over the valid tokens, unit length, cosine similarities."""
    with seeded(93):
        hidden = torch.randn(4, 7, 16)
        valid_lens = torch.tensor([7, 3, 5, 1])
        padding = torch.arange(7)[None, :] >= valid_lens[:, None]  # (4, 7)
        hidden[padding] = 2.0 + torch.randn(int(padding.sum()), 16) * 0.1  # what a padded position holds
    expected = _similarity(hidden, valid_lens)
    received = similarity_matrix(hidden.clone(), valid_lens.clone())
    hint = hint_for(received, (_("average each sentence's token vectors over its valid tokens only, scale each "
                                 "mean to length 1, then take all the dot products"),
                               _("a sentence of valid length L owns rows 0 to L - 1 of its (T, d_model) block; the "
                                 "answer is (n, n) with ones on its diagonal")), [
        (_similarity(hidden, valid_lens, include_padding=True),
         (_("the padding rows were averaged in: keep the first valid_lens[i] rows of sentence i only"),
          _("a boolean mask (T,) per sentence, True for the valid positions, selects or weights the rows"))),
        (_similarity(hidden, valid_lens, normalise=False),
         (_("those are dot products of the means: scale each mean to length 1 first, so they become cosines"),
          _("the diagonal of a cosine matrix is all ones"))),
        (_similarity(hidden, valid_lens, include_padding=True, normalise=False),
         (_("two things: the padding rows were averaged in, and the means were not scaled to length 1"),
          _("keep the valid rows only, then divide each mean by its length"))),
        (_similarity(hidden, valid_lens, axis=-1),
         (_("you averaged over the features (the last axis): average over the tokens (axis 1)"),
          _("each sentence's embedding has d_model = 16 features"))),
    ])
    expect_close(received, expected, SIMILARITY, hint)
    padded = _similarity(hidden, valid_lens, include_padding=True)
    passed(SIMILARITY, _("With the padding averaged in, sentences 1 and 3 (3 and 1 valid tokens) would score "
                         "{padded:.2f} instead of {right:.2f}: shared padding looks like shared meaning.").format(
                             padded=float(padded[1, 3]), right=float(expected[1, 3])))
