"""Checks for chapter 02's exercises: padded queries, sliding-window masks, masked means.

Each check builds its own inputs from a fixed seed on the CPU, calls the
learner's function, and compares the answer with d2lmini's own computation or,
where d2lmini has no such function (the sliding window), with a private one.
"""

import torch

from ..i18n import N_, _
from ..masking import masked_softmax
from ._feedback import check, expect_close, passed, require
from ._feedback import hint as hint  # an error asks the learner to run ch02.hint()
from ._support import expect_mask, explained, hint_for

PADDED_QUERIES = N_("Exercise 2.2")
SLIDING_WINDOW = N_("Exercise 2.3")
MASKED_MEAN = N_("Exercise 2.1")

# Exercise 2.2

def _padded_self_attention(scores, valid_lens):
    """Weights over the real keys for each real query, all-zero rows for the padded queries."""
    real = torch.arange(scores.shape[1]) < valid_lens[:, None]  # (batch, queries)
    lens = torch.where(real, valid_lens[:, None], 0)  # (batch, queries): 0 for a padded query
    return masked_softmax(scores, lens)


def _padded_queries_hint(received, scores, valid_lens):
    if not (isinstance(received, torch.Tensor) and received.shape == scores.shape):
        return _("return the weights, a tensor with the shape of scores: (batch, queries, keys)")
    if received.detach().isnan().any():
        return (_("a padded query has no key left, and softmax(-inf, ..., -inf) = 0/0 = NaN"),
                _("set such rows to zero, or let d2l.masked_softmax do it: a valid length of 0 gives a row "
                  "of zeros"))
    real = torch.arange(scores.shape[1]) < valid_lens[:, None]  # (batch, steps)
    both = real[:, :, None] & real[:, None, :]  # (batch, queries, keys)
    plain = torch.softmax(scores, dim=-1)
    after = (_("you masked the weights after the softmax, so the rows of the real queries no longer sum to 1"),
             _("mask the scores before the softmax, as d2l.masked_softmax does"))
    return hint_for(received, (
        _("a real query i < valid_lens[b] attends to the real keys only; a padded query's row is all zeros"),
        _("d2l.masked_softmax also takes 2-D valid lengths, one per query: give each real query its example's "
          "length and each padded query a length of 0")), [
            (masked_softmax(scores, valid_lens),
             (_("the padded queries still attend: rows i ≥ valid_lens[b] must be all zero"),
              _("a 1-D valid_lens masks keys only; 2-D valid lengths give each query a length of its own, "
                "and a length of 0 empties a row"))),
            (plain * real[:, :, None],
             (_("the padded keys still get weight: a real query must ignore keys j ≥ valid_lens[b]"),
              _("mask the padded keys' scores before the softmax, as well as emptying the padded queries' rows"))),
            (plain * both, after),
            (plain * real[:, None, :], after),
            (torch.softmax(scores.masked_fill(~both, -1e6), dim=-1),
             (_("a padded query's row is uniform, and it must be all zeros"),
              _("filled with a finite number (-1e6 or the dtype's minimum) everywhere, a row's softmax spreads "
                "its weight evenly over the padding: fill with -inf and zero the empty rows, or let "
                "d2l.masked_softmax do it"))),
        ])


@check(PADDED_QUERIES)
def check_padded_queries(self_attention_weights):
    """Exercise 2.2: padded keys get no weight, and padded queries get all-zero rows."""
    generator = torch.Generator().manual_seed(21)
    scores = torch.randn(4, 5, 5, generator=generator)  # (batch, queries, keys): self-attention
    valid_lens = torch.tensor([1, 3, 5, 0])  # a report starts with a real row, then a padded one
    given = scores.clone()
    received = self_attention_weights(given, valid_lens.clone())
    expected = _padded_self_attention(scores, valid_lens)
    expect_close(received, expected, PADDED_QUERIES, _padded_queries_hint(received, scores, valid_lens),
                 weights=True, valid_lens=valid_lens)
    require(torch.equal(given, scores), PADDED_QUERIES, _("scores left unchanged"), _("scores was modified in place"),
            (_("your function changed the scores it was given"),
             _("masked_fill_, with the underscore, writes into scores; masked_fill returns a new tensor")))
    padded_rows = int((~(torch.arange(5) < valid_lens[:, None])).sum())
    passed(PADDED_QUERIES, _("The real queries ignore the padding, and the {count} padded queries of "
                             "this batch (an empty example among them) get all-zero rows.").format(count=padded_rows))


# Exercise 2.3

def _local_causal(num_steps, window):
    """True where key j lies in query i's window of the last ``window`` steps: i - window < j <= i."""
    steps = torch.arange(num_steps)
    return (steps[None, :] <= steps[:, None]) & (steps[None, :] > steps[:, None] - window)


_LOCAL_CAUSAL_HINT = (N_("query i may attend to key j when i - window < j <= i"),
                      N_("compare a column of query positions with a row of key positions, once for each bound; "
                         "broadcasting makes each comparison a (num_steps, num_steps) mask. Combine the two with &"))


def _local_causal_mistakes(num_steps, window):
    """The typical wrong masks of Exercise 2.3, each with its hint."""
    expected = _local_causal(num_steps, window)
    steps = torch.arange(num_steps)
    return [
        (~expected, (_("True should mark the keys a query MAY attend to, as in SDPA's attn_mask"),
                     _("your mask is the opposite one: nn.MultiheadAttention's boolean attn_mask uses that "
                       "convention"))),
        (expected.T, (_("rows are queries and columns are keys"),
                      _("row i is True from column i - window + 1 to column i; yours is the transpose"))),
        (_local_causal(num_steps, window + 1),
         (_("one key too many: query i sees `window` keys, itself included"),
          _("keys i - window + 1 to i are visible; you also let query i see key i - window"))),
        (_local_causal(num_steps, window - 1),
         (_("one key too few: the query itself counts as one of its `window` keys"),
          _("keys i - window + 1 to i are visible, key i included"))),
        (expected & ~torch.eye(num_steps, dtype=torch.bool),
         (_("the diagonal is missing: query i may attend to itself"), _("in row i, key j = i is True"))),
        (torch.ones(num_steps, num_steps, dtype=torch.bool).tril(),
         (_("this is the plain causal mask: the window is missing"),
          _("query i still sees every key before i - window + 1: a second comparison gives each row a first key"))),
        ((steps[None, :] - steps[:, None]).abs() < window,
         (_("the window also reaches into the future: keys j > i must be False"),
          _("a distance |i - j| < window is symmetric: bound j from above by i and from below by i - window, "
            "in two comparisons"))),
    ]


# Python's `and` asks each mask for one True or False, and PyTorch refuses for a tensor of many values.
_AMBIGUOUS = (RuntimeError, "Boolean value of Tensor with more than one value is ambiguous",
              (N_("a tensor was asked for one True or False, and a mask holds many: `and`, `or` and `not` ask "
                  "that, and so does a chain such as `a <= b & c > d`, which Python reads as two comparisons "
                  "joined by `and`, since & binds first. Combine two masks with &, the elementwise and, each "
                  "comparison in its own parentheses"),
               N_("& binds more tightly than a comparison, so put each comparison in parentheses before combining "
                  "them")))


@check(SLIDING_WINDOW)
def check_local_causal_mask(local_causal_mask):
    """Exercise 2.3: query i attends to keys i - window + 1 .. i only."""
    for num_steps, window in ((6, 3), (5, 1), (4, 10)):
        with explained(SLIDING_WINDOW, f"local_causal_mask({num_steps}, {window})", _AMBIGUOUS):
            received = local_causal_mask(num_steps, window)
        require(isinstance(received, torch.Tensor), SLIDING_WINDOW, _("a torch.Tensor"),
                f"{type(received).__name__}", _("return the comparison's result, a boolean tensor"))
        expect_mask(received, _local_causal(num_steps, window), SLIDING_WINDOW,
                    f"local_causal_mask({num_steps}, {window})", _("one row per query and one column per key"),
                    _LOCAL_CAUSAL_HINT, _local_causal_mistakes(num_steps, window))
    kept, causal = int(_local_causal(1024, 128).sum()), 1024 * 1025 // 2
    passed(SLIDING_WINDOW, _("Each query sees at most `window` keys: at 1,024 steps a window of 128 keeps "
                             "{kept:,} of the causal mask's {causal:,} entries ({share:.0%}).").format(
                                 kept=kept, causal=causal, share=kept / causal))


# Exercise 2.1

def _masked_mean_hint(received, values, valid_lens, expected):
    if not (isinstance(received, torch.Tensor) and received.shape == expected.shape):
        if isinstance(received, torch.Tensor) and received.shape == (values.shape[0], 1, values.shape[2]):
            return (_("drop the query axis of length 1: (batch, 1, dim) must become (batch, dim)"),
                    _("torch.squeeze drops an axis of length 1, and so does indexing it at 0"))
        return _("return one mean vector per example: shape (batch, dim)")
    received = received.detach().float()
    if received.isnan().any():
        return (_("an example of length 0 gives 0/0 = NaN when you divide a sum by its length"),
                _("an empty example needs weights that are all 0: which function of this chapter gives a row "
                  "with nothing to attend to such weights?"))
    empty = valid_lens == 0
    uniform = torch.where(empty[:, None], values.mean(dim=1), expected)  # an empty example's weights spread evenly
    if torch.allclose(received, uniform, atol=1e-5):
        return (_("an example of length 0 gets uniform weights, not zeros: its mean counts every padding step, "
                  "and it must be a zero vector"),
                _("a row whose scores are all filled with a finite number (the -1e6 of this chapter's first "
                  "version) spreads its weight evenly over the padding; d2lmini's version gives such a row weights of "
                  "0"))
    if torch.allclose(received, values.mean(dim=1), atol=1e-5):
        return (_("that is the mean over every step, padding included: only the first valid_lens[b] steps "
                  "may count"),
                _("what weight should a padding step get in the mean, and what weight a real one?"))
    return (_("the mean of the first valid_lens[b] steps is a weighted average: 1 / valid_lens[b] on each "
              "of them, 0 on each padding step"),
            _("this chapter makes weights that are 0 on the masked keys and sum to 1 over the others: which "
              "scores would make those weights all equal?"))


@check(MASKED_MEAN)
def check_masked_mean(masked_mean):
    """Exercise 2.1: the mean over each example's valid steps, zeros for an empty example."""
    generator = torch.Generator().manual_seed(23)
    values = torch.randn(4, 5, 3, generator=generator)  # (batch, steps, dim)
    valid_lens = torch.tensor([2, 5, 0, 1])
    expected = torch.stack([values[b, :n].mean(dim=0) if n > 0 else torch.zeros(3)
                            for b, n in enumerate(valid_lens.tolist())])  # (batch, dim)
    given = values.clone()
    received = masked_mean(given, valid_lens.clone())
    expect_close(received, expected, MASKED_MEAN, _masked_mean_hint(received, values, valid_lens, expected),
                 valid_lens=valid_lens)
    require(torch.equal(given, values), MASKED_MEAN, _("values left unchanged"), _("values was modified in place"),
            (_("your function changed the values it was given"),
             _("compute new tensors instead of writing into values")))
    passed(MASKED_MEAN, _("Padding does not count, and the empty example gives a zero vector."))
