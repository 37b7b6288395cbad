"""The toy tasks, the tiny encoder–decoder, its training loop and its metrics (d2lmini.seq2seq)."""

import threading

import matplotlib.pyplot as plt
import pytest
import torch

import d2lmini as d2l
from d2lmini import seq2seq
from d2lmini.seq2seq import BOS, PAD, AttentionSeq2Seq, Batch, History, make_batch

pytestmark = pytest.mark.usefixtures("training_on_one_thread")  # as the notebooks train (conftest.py says why)


def batch_of(task, size=64, lengths=(4, 8), seed=0, **options):
    return make_batch(task, size, lengths, generator=torch.Generator().manual_seed(seed), **options)


def decoder_inputs(batch):
    return torch.cat([torch.full_like(batch.target[:, :1], BOS), batch.target[:, :-1]], dim=1)


# ---- the tasks -------------------------------------------------------------------------

def test_reversal_targets_are_each_source_backwards_and_padded_by_hand():
    batch = batch_of("reverse", 200)
    for source, target, n, positions in zip(batch.source.tolist(), batch.target.tolist(),
                                            batch.valid_lens.tolist(), batch.positions.tolist()):
        assert 4 <= n <= 8
        assert target[:n] == source[:n][::-1]
        assert source[n:] == target[n:] == [PAD] * (8 - n)
        assert all(0 <= d < 10 for d in source[:n])
        assert positions[:n] == list(range(n - 1, -1, -1))  # the anti-diagonal


def test_sorting_targets_are_the_distinct_digits_in_order_by_hand():
    batch = batch_of("sort", 200, (3, 10))
    for source, target, n, positions in zip(batch.source.tolist(), batch.target.tolist(),
                                            batch.valid_lens.tolist(), batch.positions.tolist()):
        assert len(set(source[:n])) == n  # distinct digits
        assert target[:n] == sorted(source[:n])
        assert [source[p] for p in positions[:n]] == target[:n]
        assert source[n:] == target[n:] == [PAD] * (10 - n)


def test_a_small_reversal_batch_equals_its_hand_computed_alignment():
    batch = Batch(source=torch.tensor([[4, 7, 1, PAD]]), target=torch.tensor([[1, 7, 4, PAD]]),
                  valid_lens=torch.tensor([3]), positions=torch.tensor([[2, 1, 0, 3]]))
    assert batch.alignment.tolist() == [[[0, 0, 1, 0], [0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]]]
    assert batch.real.tolist() == [[True, True, True, False]]


@pytest.mark.parametrize("task", seq2seq.TASKS)
def test_the_alignment_copies_the_source_into_the_target(task):
    batch = batch_of(task, 50)
    one_hot = torch.nn.functional.one_hot(batch.source, seq2seq.VOCAB).float()  # (B, S, vocab)
    copied = (batch.alignment @ one_hot).argmax(-1)  # (B, T): the digit each output step copies
    assert torch.equal(copied[batch.real], batch.target[batch.real])
    assert batch.alignment.sum(-1).tolist() == batch.real.float().tolist()  # one 1 per real row, none for padding


@pytest.mark.parametrize("task", seq2seq.TASKS)
def test_batches_repeat_with_a_seed_and_cover_every_length(task):
    first, second = batch_of(task, 300), batch_of(task, 300)
    for name in ("source", "target", "valid_lens", "positions"):
        assert torch.equal(getattr(first, name), getattr(second, name))
    assert sorted(set(first.valid_lens.tolist())) == [4, 5, 6, 7, 8]
    assert not torch.equal(first.source, batch_of(task, 300, seed=1).source)


def test_width_pads_beyond_the_longest_length():
    batch = batch_of("reverse", 5, (2, 3), width=6)
    assert batch.source.shape == batch.target.shape == batch.positions.shape == (5, 6)
    assert (batch.source[:, 3:] == PAD).all() and batch.alignment.shape == (5, 6, 6)


def test_batch_indexing_concatenation_and_text():
    batch = batch_of("reverse", 6)
    assert len(batch[2]) == 1 and torch.equal(batch[2].source[0], batch.source[2])
    assert len(batch[1:4]) == 3 and torch.equal(batch[[0, 0]].target[1], batch.target[0])
    joined = Batch.cat([batch[:2], batch[4:]])
    assert torch.equal(joined.valid_lens, batch.valid_lens[[0, 1, 4, 5]])
    assert seq2seq.as_text(torch.tensor([3, 1, 4, PAD, PAD])) == "3 1 4"
    assert batch.to("cpu").source.device.type == "cpu"


# ---- the model -------------------------------------------------------------------------

@pytest.fixture
def model():
    torch.manual_seed(0)
    return AttentionSeq2Seq(16, "dot-product").eval()


def test_shapes_through_encoder_decoder_and_prediction(model):
    batch = batch_of("reverse", 5, (2, 6))
    encoder_outputs = model.encode(batch.source, batch.valid_lens)
    assert encoder_outputs.shape == (5, 6, 16)
    assert model.decoder_states(decoder_inputs(batch)).shape == (5, 6, 16)
    scores = model.decode(decoder_inputs(batch)[:, :4], encoder_outputs, batch.valid_lens)
    assert scores.shape == (5, 4, seq2seq.SYMBOLS) and model.attention_weights.shape == (5, 4, 6)
    predictions, weights = model.predict(batch.source, batch.valid_lens)
    assert predictions.shape == (5, 6) and weights.shape == (5, 6, 6)
    assert model.predict(batch.source, batch.valid_lens, num_steps=3)[0].shape == (5, 3)


@pytest.mark.parametrize("attention", seq2seq.ATTENTIONS)
def test_padding_source_positions_get_no_weight_and_change_nothing(attention):
    torch.manual_seed(0)
    model = AttentionSeq2Seq(16, attention).eval()
    batch = batch_of("reverse", 8, (2, 7), width=8)
    scores = model(batch.source, decoder_inputs(batch), batch.valid_lens)
    keys_padding = ~d2l.attention_mask(batch.valid_lens, 8, 1, 8)[:, 0]  # (B, S)
    assert model.attention_weights.masked_select(keys_padding[:, None, :]).eq(0).all()
    torch.testing.assert_close(model.attention_weights.sum(-1), torch.ones(8, 8))
    # Other tokens in the padding leave every real step's scores as they were.
    noisy = batch.source.masked_fill(keys_padding, 3)
    torch.testing.assert_close(model(noisy, decoder_inputs(batch), batch.valid_lens)[batch.real], scores[batch.real])


def test_the_cross_attention_weights_are_d2lmini_dot_product_attention(model):
    batch = batch_of("sort", 4, (3, 7))
    encoder_outputs = model.encode(batch.source, batch.valid_lens)
    states = model.decoder_states(decoder_inputs(batch))
    model.decode(decoder_inputs(batch), encoder_outputs, batch.valid_lens)
    direct = d2l.DotProductAttention(0.0)
    direct(model.W_q(states), model.W_k(encoder_outputs), encoder_outputs, batch.valid_lens)
    torch.testing.assert_close(model.attention_weights, direct.attention_weights)


def test_the_additive_cross_attention_is_d2lmini_additive_attention():
    torch.manual_seed(0)
    model = AttentionSeq2Seq(16, "additive").eval()
    batch = batch_of("reverse", 4, (3, 7))
    encoder_outputs = model.encode(batch.source, batch.valid_lens)
    states = model.decoder_states(decoder_inputs(batch))
    model.decode(decoder_inputs(batch), encoder_outputs, batch.valid_lens)
    direct = d2l.AdditiveAttention(16, 0.0, key_size=16, query_size=16)
    direct.load_state_dict(model.cross_attention.state_dict())
    direct(model.W_q(states), model.W_k(encoder_outputs), encoder_outputs, batch.valid_lens)
    torch.testing.assert_close(model.attention_weights, direct.attention_weights)


def test_without_positions_equal_digits_get_equal_weights():
    torch.manual_seed(0)
    model = AttentionSeq2Seq(16, positional=False).eval()
    source = torch.tensor([[5, 2, 5, 7, 2]])
    _, weights = model.predict(source, torch.tensor([5]))
    torch.testing.assert_close(weights[..., 0], weights[..., 2])  # the two 5s
    torch.testing.assert_close(weights[..., 1], weights[..., 4])  # the two 2s
    assert model.positional is None


def test_greedy_prediction_is_the_teacher_forced_argmax_of_its_own_outputs(model):
    batch = batch_of("reverse", 6)
    predictions, weights = model.predict(batch.source, batch.valid_lens)
    fed_back = torch.cat([torch.full_like(predictions[:, :1], BOS), predictions[:, :-1]], dim=1)
    scores = model(batch.source, fed_back, batch.valid_lens)
    assert torch.equal(scores.argmax(-1), predictions)
    torch.testing.assert_close(model.attention_weights, weights)


def test_the_loss_ignores_padding_steps(model):
    batch = batch_of("reverse", 6, (2, 5), width=7)
    scores = model(batch.source, decoder_inputs(batch), batch.valid_lens)
    by_hand = torch.nn.functional.cross_entropy(scores[batch.real], batch.target[batch.real])
    torch.testing.assert_close(model.loss(batch), by_hand)


# ---- metrics ---------------------------------------------------------------------------

def test_sequence_accuracy_compares_real_steps_only():
    batch = Batch(source=torch.tensor([[1, 2, PAD], [3, 4, 5]]), target=torch.tensor([[2, 1, PAD], [5, 4, 3]]),
                  valid_lens=torch.tensor([2, 3]), positions=torch.tensor([[1, 0, 2], [2, 1, 0]]))
    assert seq2seq.sequence_accuracy(torch.tensor([[2, 1, 7], [5, 4, 3]]), batch) == 1.0  # step 2 of 0: padding
    assert seq2seq.sequence_accuracy(torch.tensor([[2, 1, 7], [5, 4, 0]]), batch) == 0.5


def test_alignment_mass_of_uniform_weights_is_one_over_the_length():
    batch = batch_of("reverse", 40)
    uniform = d2l.masked_softmax(torch.zeros(40, 8, 8), batch.valid_lens)
    lengths = batch.valid_lens.float()
    expected = (lengths * (1 / lengths)).sum() / lengths.sum()  # each example: n steps of 1/n
    assert seq2seq.alignment_mass(uniform, batch.alignment) == pytest.approx(expected.item())
    assert seq2seq.alignment_mass(batch.alignment, batch.alignment) == 1.0


def test_alignment_mass_by_step_by_hand():
    alignment = torch.tensor([[[1.0, 0], [0, 1]], [[0, 1.0], [0, 0]]])  # example 1 has one real step
    weights = torch.tensor([[[0.5, 0.5], [0.2, 0.8]], [[0.0, 1.0], [0.5, 0.5]]])
    torch.testing.assert_close(seq2seq.alignment_mass(weights, alignment, by_step=True), torch.tensor([0.75, 0.8]))
    assert seq2seq.alignment_mass(weights, alignment) == pytest.approx((0.5 + 0.8 + 1.0) / 3)


def test_evaluate_keeps_the_models_mode(model):
    batch = batch_of("reverse", 10)
    model.train()
    accuracy, mass = seq2seq.evaluate(model, batch)
    assert model.training and 0 <= accuracy <= 1 and 0 < mass < 1


# ---- training ----------------------------------------------------------------------------

def test_a_short_run_learns_to_sort_and_repeats_exactly():
    test = batch_of("sort", 200, seed=5)
    history = History(test[:2], test, snapshot_every=20, evaluate_every=40)
    torch.manual_seed(0)
    losses = seq2seq.train(AttentionSeq2Seq(32), "sort", 120, callback=history)
    torch.manual_seed(0)
    assert seq2seq.train(AttentionSeq2Seq(32), "sort", 20) == losses[:20]  # same seeds, same run
    assert len(losses) == 120 and losses[-1] < losses[0] / 5
    accuracy, mass = history.evaluations[120]
    assert accuracy >= 0.9 and mass > 0.5
    assert history.steps == [0, 20, 40, 60, 80, 100, 120] and sorted(history.evaluations) == [0, 40, 80, 120]
    assert history.steps_to(0.9) <= 120 and history.steps_to(1.01) is None
    assert history.snapshots[120].weights.shape == (2, 8, 8) and history.snapshots[0].predictions.shape == (2, 8)
    assert history.mass(120) == seq2seq.alignment_mass(history.snapshots[120].weights, test[:2].alignment)


def test_a_history_saved_is_read_back_whole_but_its_held_out_set(tmp_path):
    test = batch_of("reverse", 50, seed=6)
    history = History(test[:2], test, snapshot_every=5, evaluate_every=10)
    torch.manual_seed(0)
    seq2seq.train(AttentionSeq2Seq(8), "reverse", 12, callback=history)
    history.save(tmp_path / "run.pt")
    read = History.load(tmp_path / "run.pt")
    assert read.test is None and (read.snapshot_every, read.evaluate_every) == (5, 10)
    assert read.losses == history.losses and read.evaluations == history.evaluations
    assert read.steps == history.steps == [0, 5, 10, 12]
    for name in ("source", "target", "valid_lens", "positions"):
        assert torch.equal(getattr(read.examples, name), getattr(history.examples, name))
    for step in history.steps:
        assert torch.equal(read.snapshots[step].weights, history.snapshots[step].weights)
        assert torch.equal(read.snapshots[step].predictions, history.snapshots[step].predictions)
    assert read.mass(12) == history.mass(12)


def test_the_callback_sees_every_step_and_the_last_is_done():
    seen = []
    torch.manual_seed(0)
    seq2seq.train(AttentionSeq2Seq(8), "reverse", 3, callback=lambda p: seen.append((p.step, p.loss is None, p.done)))
    assert seen == [(0, True, False), (1, False, False), (2, False, False), (3, False, True)]


def test_the_stop_flag_ends_training_after_the_step_in_progress():
    stop, seen = threading.Event(), []

    def callback(progress):
        seen.append((progress.step, progress.done))
        if progress.step == 4:
            stop.set()  # as the Stop button does, from another thread, between two steps

    torch.manual_seed(0)
    losses = seq2seq.train(AttentionSeq2Seq(8), "reverse", 50, callback=callback, stop=stop)
    assert len(losses) == 5 and seen[-1] == (5, True)


def test_a_history_reached_flag_ends_training_one_step_after_the_first_evaluation_at_that_accuracy():
    history = seq2seq.History(make_batch("reverse", 2, generator=torch.Generator().manual_seed(0)),
                              make_batch("reverse", 20, generator=torch.Generator().manual_seed(1)), evaluate_every=3)
    flag = history.reached(0.0)  # every evaluation reaches 0%: the first, at step 0, sets it
    assert not flag.is_set()
    torch.manual_seed(0)
    losses = seq2seq.train(AttentionSeq2Seq(8), "reverse", 50, callback=history, stop=flag)
    assert flag.is_set() and len(losses) == 1 and sorted(history.evaluations) == [0, 1]
    history.evaluations = {0: (0.5, 0.2), 20: (0.94, 0.6)}
    assert not history.reached(0.95).is_set()
    history.evaluations[40] = (0.95, 0.7)
    assert history.reached(0.95).is_set()


def test_zero_steps_only_reports_the_start():
    seen = []
    assert seq2seq.train(AttentionSeq2Seq(8), "sort", 0, callback=seen.append) == []
    assert [(p.step, p.done) for p in seen] == [(0, True)]


# ---- the static figure -----------------------------------------------------------------------

def test_show_attention_crops_labels_and_marks_each_example():
    batch = batch_of("reverse", 3, (2, 5))
    predictions = batch.target.clone()
    predictions[0, 0] = (predictions[0, 0] + 1) % 10  # one wrong output
    fig = seq2seq.show_attention(batch.alignment, batch, predictions, titles=["a", "b", "c"])
    panels = fig.axes[:3]
    for ax, n, source in zip(panels, batch.valid_lens.tolist(), batch.source.tolist()):
        assert ax.images[0].get_array().shape == (n, n)
        assert [label.get_text() for label in ax.get_xticklabels()] == [str(d) for d in source[:n]]
        circles = ax.lines[0]
        assert sorted(zip(circles.get_ydata(), circles.get_xdata())) == [(t, n - 1 - t) for t in range(n)]
    colours = [label.get_color() for label in panels[0].get_yticklabels()]
    assert colours[0] == "#cf222e" and set(colours[1:]) == {"#1a7f37"}
    marked = [label.get_text().endswith(" ✗") for label in panels[0].get_yticklabels()]
    assert marked == [True] + [False] * (len(marked) - 1)  # wrong in words too, not in colour alone
    assert [ax.get_title() for ax in panels] == ["a", "b", "c"] and len(fig.axes) == 4  # and one colorbar
    plt.close(fig)


def test_show_attention_summarises_each_example_in_words(capsys):
    batch = batch_of("reverse", 2, (3, 3))
    fig = seq2seq.show_attention(batch.alignment, batch, titles=["first", "second"])
    summary = capsys.readouterr().out  # printed at once outside Jupyter
    source, target = batch.source[0, :3].tolist(), batch.target[0, :3].tolist()
    # The alignment of a reversal: output step 1 takes all its weight from source position 1.
    assert summary.startswith(f'First: 3 queries × 3 keys. Query 1 "{target[1]}" attends mostly to key '
                              f'1 "{source[1]}" (1.00).')
    assert "described.) Second: 3 queries × 3 keys." in summary  # each example a sentence: a capital first
    plt.close(fig)


# ---- errors that name the argument -------------------------------------------------------------

@pytest.mark.parametrize("call,error,fragments", [
    (lambda: make_batch("rev", 4), ValueError, ["task", "'reverse', 'sort'", "'rev'"]),
    (lambda: make_batch("reverse", 0), ValueError, ["batch_size", "positive", "0"]),
    (lambda: make_batch("reverse", 4, (5, 4)), ValueError, ["lengths", "shortest <= longest", "(5, 4)"]),
    (lambda: make_batch("reverse", 4, (0, 4)), ValueError, ["lengths", "1 <= shortest", "(0, 4)"]),
    (lambda: make_batch("reverse", 4, "4-8"), TypeError, ["lengths", "pair of ints", "'4-8'"]),
    (lambda: make_batch("sort", 4, (4, 11)), ValueError, ["distinct digits", "at most 10", "(4, 11)"]),
    (lambda: make_batch("reverse", 4, (4, 8), width=6), ValueError, ["width", "at least", "8", "got 6"]),
    (lambda: AttentionSeq2Seq(attention="dot"), ValueError, ["attention", "'dot-product', 'additive'", "'dot'"]),
    (lambda: AttentionSeq2Seq(0), ValueError, ["num_hiddens", "positive", "0"]),
    (lambda: AttentionSeq2Seq(positional=1), TypeError, ["positional", "True or False", "int 1"]),
    (lambda: AttentionSeq2Seq(8, max_len=4).encode(torch.zeros(1, 6, dtype=torch.long), None), ValueError,
     ["6 steps", "(1, 6)", "max_len=4"]),
    (lambda: AttentionSeq2Seq(8).encode(torch.zeros(6, dtype=torch.long), None), ValueError,
     ["tokens", "2-D", "(6,)"]),
    (lambda: AttentionSeq2Seq(8).predict(torch.zeros(1, 3, dtype=torch.long), None, num_steps=0), ValueError,
     ["num_steps", "positive", "0"]),
    (lambda: seq2seq.train("model", "reverse", 1), TypeError, ["model", "AttentionSeq2Seq", "str"]),
    (lambda: seq2seq.train(AttentionSeq2Seq(8), "reverse", -1), ValueError, ["num_steps", "at least 0", "-1"]),
    (lambda: seq2seq.train(AttentionSeq2Seq(8), "reverse", 1, lr=0), ValueError, ["lr", "positive", "0"]),
    (lambda: seq2seq.train(AttentionSeq2Seq(8), "sort", 1, lengths=(4, 12)), ValueError, ["at most 10"]),
    (lambda: seq2seq.train(AttentionSeq2Seq(8), "reverse", 1, stop=True), TypeError,
     ["stop", "is_set()", "threading.Event", "bool"]),
    (lambda: seq2seq.alignment_mass(torch.ones(2, 3, 3), torch.ones(2, 3, 4)), ValueError,
     ["weights (2, 3, 3)", "alignment (2, 3, 4)", "one shape"]),
    (lambda: seq2seq.alignment_mass(torch.ones(3, 3), torch.ones(3, 3)), ValueError, ["weights", "3-D", "(3, 3)"]),
    (lambda: seq2seq.alignment_mass(torch.ones(1, 3, 3), torch.ones(1, 3, 3, dtype=torch.long)), TypeError,
     ["alignment", "floating-point", "torch.int64"]),
    (lambda: History(batch_of("reverse", 2), snapshot_every=0), ValueError, ["snapshot_every", "positive"]),
    (lambda: seq2seq.show_attention(torch.ones(2, 8, 8), batch_of("reverse", 3)), ValueError,
     ["weights (2, 8, 8)", "one (output steps, source steps) matrix per example", "(3, 8)"]),
    (lambda: seq2seq.show_attention(torch.ones(1, 8, 8), batch_of("reverse", 1), titles=["a", "b"]), ValueError,
     ["titles", "one entry per example (1)", "got 2"]),
])
def test_bad_input_is_named(call, error, fragments):
    with pytest.raises(error) as info:
        call()
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


# ---- devices -------------------------------------------------------------------------------

def test_a_model_on_any_device_predicts_as_on_the_cpu(device):
    torch.manual_seed(0)
    on_cpu = AttentionSeq2Seq(16).eval()
    on_device = AttentionSeq2Seq(16).eval()
    on_device.load_state_dict(on_cpu.state_dict())
    on_device.to(device)
    batch = batch_of("reverse", 8)
    predictions, weights = on_device.predict(batch.source.to(device), batch.valid_lens.to(device))
    assert predictions.device.type == weights.device.type == device.type
    expected, expected_weights = on_cpu.predict(batch.source, batch.valid_lens)
    assert torch.equal(predictions.cpu(), expected)
    torch.testing.assert_close(weights.cpu(), expected_weights, atol=1e-5, rtol=1e-4)


@pytest.mark.gpu
def test_training_and_its_history_run_on_the_gpu():
    device = d2l.try_gpu()
    if device.type == "cpu":
        pytest.skip("no GPU on this machine")
    torch.manual_seed(0)
    model = AttentionSeq2Seq(32).to(device)
    test = batch_of("sort", 200, seed=5)  # on the CPU: History moves it
    history = History(test[:2], test, snapshot_every=20, evaluate_every=40)
    losses = seq2seq.train(model, "sort", 120, callback=history)
    assert all(p.device.type == device.type for p in model.parameters())
    assert losses[-1] < losses[0] / 5 and history.evaluations[120][0] >= 0.9
    assert history.snapshots[120].weights.device.type == "cpu"


def test_expect_passes_a_claim_that_holds_and_names_one_that_does_not():
    assert seq2seq.expect(True, "reversal reaches 95% held out within 400 steps", "200 steps") is None
    with pytest.raises(seq2seq.ClaimNotShown, match=r"this run does not show what the chapter claims: reversal "
                                                    r"reaches 95% held out within 400 steps; it measured 91% at "
                                                    r"best\. .*benchmarks/chapter08_claims\.py"):
        seq2seq.expect(False, "reversal reaches 95% held out within 400 steps", "91% at best")
    assert issubclass(seq2seq.ClaimNotShown, AssertionError)  # an error for nbval and nbgrader alike


@pytest.mark.parametrize("holds, claim, measured, message", [
    (torch.tensor(True), "a claim", "x", r"holds \(the claim's condition\) must be True or False, got Tensor"),
    (1, "a claim", "x", r"holds \(the claim's condition\) must be True or False, got int 1"),
    (True, "", "x", r"claim must be a non-empty str, got str ''"),
    (True, "a claim", 0.74, r"measured must be a non-empty str, got float 0.74"),
])
def test_expect_names_a_bad_argument(holds, claim, measured, message):
    with pytest.raises(TypeError, match=message):
        seq2seq.expect(holds, claim, measured)
