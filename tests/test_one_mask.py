"""One mask, one switch: valid_lens are read in one place, once, and never synchronise a GPU.

* ``masking.attention_mask`` turns every kind of length into the mask;
* a query with no valid key gets a zero row at every entry point;
* each public call checks its lengths exactly once;
* a forward pass reads no tensor value back from its device;
* no module of the package imports another module's private names, or reads a private attribute
  of anything but itself (``self``, ``cls``, ``super()``): another module's, another object's,
  matplotlib's and torch's included.
"""

import ast
import functools
from pathlib import Path

import pytest
import torch

import d2lmini as d2l
from d2lmini import masking

PACKAGE = Path(d2l.__file__).resolve().parent


# ---- the mask ------------------------------------------------------------------------

def test_attention_mask_of_1d_lengths_is_one_row_per_example():
    mask = masking.attention_mask(torch.tensor([1, 3]), 2, 4, 3)
    assert mask.shape == (2, 1, 3)
    assert mask.tolist() == [[[True, False, False]], [[True, True, True]]]


def test_attention_mask_of_2d_lengths_is_one_row_per_query():
    mask = masking.attention_mask([[0, 2], [3, 1]], 2, 2, 3)
    assert mask.tolist() == [[[False, False, False], [True, True, False]],
                             [[True, True, True], [True, False, False]]]


def test_attention_mask_causal_alone_is_the_lower_triangle_shared_by_the_batch():
    mask = masking.attention_mask(None, 5, 3, 4, causal=True)
    assert mask.shape == (1, 3, 4)
    assert torch.equal(mask[0], torch.ones(3, 4, dtype=torch.bool).tril())


def test_attention_mask_causal_and_lengths_must_both_allow_a_key():
    # Example 0 has length 2: query 2 would see keys 0..2 causally, but key 2 is padding.
    mask = masking.attention_mask(torch.tensor([2, 4]), 2, 3, 4, causal=True)
    assert mask.int().tolist() == [[[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0]],
                                   [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0]]]
    lens = torch.tensor([[0, 3, 1], [4, 4, 4]])  # per query, then causal on top
    combined = masking.attention_mask(lens, 2, 3, 4, causal=True)
    assert combined.int().tolist() == [[[0, 0, 0, 0], [1, 1, 0, 0], [1, 0, 0, 0]],
                                       [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0]]]


def test_attention_mask_is_none_when_nothing_is_masked():
    assert masking.attention_mask(None, 2, 3, 4) is None


def test_attention_mask_float_and_oversized_lengths():
    mask = masking.attention_mask(torch.tensor([1.5, 9.0]), 2, 1, 3)
    assert mask.int().tolist() == [[[1, 1, 0]], [[1, 1, 1]]]


# ---- the empty-row policy, pinned once for every entry point -------------------------

QUERIES, KEYS = 3, 4
LENS = torch.tensor([[0, 2, 0], [4, 0, 1]])  # (batch, queries): queries with no valid key


def _inputs():
    generator = torch.Generator().manual_seed(5)
    q = torch.randn(2, QUERIES, 8, generator=generator)
    k = torch.randn(2, KEYS, 8, generator=generator)
    v = torch.randn(2, KEYS, 8, generator=generator) + 3  # no value row is near zero
    return q, k, v


def _multihead(need_weights):
    torch.manual_seed(0)
    return d2l.MultiHeadAttention(8, 2, 0.0, query_size=8, key_size=8, value_size=8,
                                  need_weights=need_weights)


ENTRY_POINTS = {
    "masked_softmax with valid_lens": lambda q, k, v, lens: d2l.masked_softmax(q @ k.transpose(1, 2), lens),
    "masked_softmax with a mask": lambda q, k, v, lens: d2l.masked_softmax(
        q @ k.transpose(1, 2), mask=masking.attention_mask(lens, 2, QUERIES, KEYS)),
    "AdditiveAttention": lambda q, k, v, lens: d2l.AdditiveAttention(8, 0.0)(q, k, v, lens),
    "DotProductAttention, explicit": lambda q, k, v, lens: d2l.DotProductAttention(0.0)(q, k, v, lens),
    "DotProductAttention, fast": lambda q, k, v, lens: d2l.DotProductAttention(
        0.0, need_weights=False)(q, k, v, lens),
    "DotProductAttention, causal": lambda q, k, v, lens: d2l.DotProductAttention(
        0.0, causal=True)(q, k, v, lens),
    "DotProductAttention, causal fast": lambda q, k, v, lens: d2l.DotProductAttention(
        0.0, need_weights=False, causal=True)(q, k, v, lens),
    "MultiHeadAttention, explicit": lambda q, k, v, lens: _multihead(True)(q, k, v, lens),
    "MultiHeadAttention, fast": lambda q, k, v, lens: _multihead(False)(q, k, v, lens),
}


@pytest.mark.parametrize("entry", ENTRY_POINTS.values(), ids=ENTRY_POINTS.keys())
def test_a_query_with_no_valid_key_gets_a_zero_row_and_no_nan(entry):
    q, k, v = _inputs()
    rows = entry(q, k, v, LENS)  # weights or outputs: one row per query
    empty = LENS == 0
    assert not rows.isnan().any()
    assert rows[empty].eq(0).all()
    assert rows[~empty].abs().sum(-1).gt(1e-3).all()  # the other queries are not zeroed


def test_the_masked_softmax_explorer_shows_the_same_zero_rows():
    from d2lmini.widgets import explore_masked_softmax
    explorer = explore_masked_softmax(valid_lens=(0, 3))
    assert explorer.weights[0].eq(0).all()
    torch.testing.assert_close(explorer.weights[1].sum(-1), torch.ones(explorer.weights.shape[1]))


# ---- lengths are checked once per call --------------------------------------------------

CALLS = {
    "masked_softmax": lambda X, lens: d2l.masked_softmax(X @ X.transpose(1, 2), lens),
    "sequence_mask": lambda X, lens: d2l.sequence_mask(X, lens[:, 0]),
    "AdditiveAttention": lambda X, lens: d2l.AdditiveAttention(4, 0.0)(X, X, X, lens),
    "DotProductAttention": lambda X, lens: d2l.DotProductAttention(0.0)(X, X, X, lens),
    "DotProductAttention, fast, causal": lambda X, lens: d2l.DotProductAttention(
        0.0, need_weights=False, causal=True)(X, X, X, lens),
    "MultiHeadAttention": lambda X, lens: d2l.MultiHeadAttention(4, 2, 0.0)(X, X, X, lens),
    "MultiHeadAttention, fast": lambda X, lens: d2l.MultiHeadAttention(
        4, 2, 0.0, need_weights=False)(X, X, X, lens),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_valid_lens_are_checked_once_per_call(call, monkeypatch):
    checks = []
    check = masking._as_lengths

    def counted(*args):
        checks.append(args)
        return check(*args)

    monkeypatch.setattr(masking, "_as_lengths", counted)
    call(torch.randn(2, 3, 4), torch.tensor([[1, 2, 3], [3, 0, 2]]))
    assert len(checks) == 1


# ---- no host synchronisation ------------------------------------------------------------

def _forward_calls(device):
    """Every attention forward pass, with lengths of every kind, on ``device``, made ready to run: the
    inputs and modules are built first, so that a call copies nothing from the host."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, n, 8, device=device) for n in (3, 5, 5))
    lengths = [None, torch.tensor([1, 4], device=device), torch.tensor([[1, 0, 5], [2, 2, 2]], device=device)]
    calls = []
    for need_weights in (True, False):
        for causal in (False, True):
            modules = [d2l.DotProductAttention(0.0, need_weights=need_weights, causal=causal),
                       d2l.MultiHeadAttention(8, 2, 0.0, query_size=8, key_size=8, value_size=8,
                                              need_weights=need_weights, causal=causal).to(device)]
            calls += [functools.partial(module, q, k, v, lens) for module in modules for lens in lengths]
    additive = d2l.AdditiveAttention(8, 0.0, key_size=8, query_size=8).to(device)
    for lens in lengths:
        calls += [functools.partial(additive, q, k, v, lens),
                  functools.partial(d2l.masked_softmax, q @ k.transpose(1, 2), lens)]
    return calls


def test_a_forward_pass_reads_no_value_back_from_its_device():
    # A meta tensor has a shape and a dtype but no values: any .item(), bool() or
    # .tolist() on one raises. So a pass that runs on the meta device is a pass
    # that never asks a device for a value, which on a GPU is what synchronises.
    outputs = [call() for call in _forward_calls(torch.device("meta"))]
    assert len(outputs) == 30 and all(out.device.type == "meta" for out in outputs)


@pytest.mark.gpu
def test_a_forward_pass_on_cuda_never_synchronises():
    if not torch.cuda.is_available():
        pytest.skip("no cuda device on this machine")
    device = torch.device("cuda")
    calls = _forward_calls(device)  # building inputs copies them from the host: before the check
    lazy = d2l.MultiHeadAttention(8, 2, 0.0, need_weights=False, causal=True).to(device)
    X = torch.randn(2, 3, 8, device=device)
    torch.cuda.set_sync_debug_mode("error")
    try:
        outputs = [call() for call in calls]
        # Lazy layers take their first weights without waiting, and CPU lengths travel without a sync.
        outputs.append(lazy(X, X, X, torch.tensor([1, 3])))
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert len(outputs) == 31


# ---- one home per rule -------------------------------------------------------------------

GETTEXT_MARKER = "_"  # d2lmini.i18n's translation function, named as gettext's convention has it


def _private_imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            for alias in node.names:
                if alias.name.startswith("_") and alias.name != GETTEXT_MARKER:
                    yield f"from {'.' * node.level}{node.module or ''} import {alias.name}"


def test_no_module_imports_a_private_name_from_another():
    found = {str(path.relative_to(PACKAGE)): list(_private_imports(path))
             for path in sorted(PACKAGE.rglob("*.py"))}
    assert {path: names for path, names in found.items() if names} == {}


def _private_reads(path):
    """(line, ``x._name``) for each private attribute that ``path`` reads of something other than itself:
    ``self._name``, ``cls._name`` and ``super()._name`` are its own; a dunder (``__name__``) is Python's."""
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr.startswith("_")):
            continue
        if node.attr.startswith("__") and node.attr.endswith("__"):
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
            continue
        if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
            continue
        yield node.lineno, ast.unparse(node)


def test_the_private_read_finder_names_reads_of_other_objects_only(tmp_path):
    """Its own (self, cls, super()) and Python's dunders pass; another object's, a module's, a chain's
    and a library's private attribute are found, with their lines; assigning one is not reading it."""
    path = tmp_path / "module.py"
    path.write_text("class A:\n"
                    "    def f(self, other):\n"
                    "        return self._a, cls._b, super()._c(), other.__len__\n"
                    "    def g(self, other):\n"
                    "        other._set = 1\n"
                    "        return other._d, torch._C, a.b._e\n")
    assert list(_private_reads(path)) == [(6, "other._d"), (6, "torch._C"), (6, "a.b._e")]


def test_no_module_reads_a_private_attribute_of_another():
    found = [f"d2lmini/{path.relative_to(PACKAGE).as_posix()}:{line} reads {read}"
             for path in sorted(PACKAGE.rglob("*.py")) for line, read in _private_reads(path)]
    assert found == [], "private attributes read from outside their object: use a public name\n" + "\n".join(found)


def _reads_valid_lens(node):
    """``valid_lens[...]``, or ``valid_lens`` compared with something ("is None" only asks, it does not read)."""
    def is_lengths(expr):
        return isinstance(expr, ast.Name) and expr.id == "valid_lens"

    if isinstance(node, ast.Subscript):
        return is_lengths(node.value)
    if isinstance(node, ast.Compare) and not all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
        return any(is_lengths(expr) for expr in [node.left, *node.comparators])
    return False


def test_only_the_masking_module_reads_valid_lens():
    # Every other module passes valid_lens on to attention_mask (or to a public function
    # that does) and never compares or indexes it itself. The exercise checks are left
    # out: each holds its own reference computation, on purpose.
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "masking.py" or path.parent.name == "exercises":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            assert not _reads_valid_lens(node), f"{path.relative_to(PACKAGE)}:{node.lineno} reads valid_lens"


def test_the_valid_lens_rule_test_can_fail():
    assert _reads_valid_lens(ast.parse("valid_lens[:, None]", mode="eval").body)
    assert _reads_valid_lens(ast.parse("valid_lens <= 0", mode="eval").body)
    assert not _reads_valid_lens(ast.parse("valid_lens is None", mode="eval").body)
    assert not _reads_valid_lens(ast.parse("attention_mask(valid_lens, 1, 2, 3)[0]", mode="eval").body)


def test_overhead_benchmark_runs_against_this_revision(capsys):
    from benchmarks import overhead as benchmark

    benchmark.main(["--before", "HEAD", "--repeats", "2"])
    out = capsys.readouterr().out
    assert "| MultiHeadAttention, fast, 1-D lengths |" in out and "host reads" in out
