"""The book's class machinery: d2l.Module and d2l.add_to_class."""

import pytest
import torch
from torch import nn

import d2lmini as d2l


class Scaler(d2l.Module):
    def __init__(self, factor, width=3, _private=None):
        super().__init__()
        self.save_hyperparameters()


def test_save_hyperparameters_keeps_the_constructor_arguments():
    module = Scaler(2.5)
    assert isinstance(module, nn.Module)
    assert module.hparams == {"factor": 2.5, "width": 3}  # neither self nor _private
    assert module.factor == 2.5 and module.width == 3


def test_save_hyperparameters_leaves_out_ignored_names():
    class Partly(d2l.Module):
        def __init__(self, kept, dropped):
            super().__init__()
            self.save_hyperparameters(ignore=["dropped"])

    module = Partly(1, 2)
    assert module.hparams == {"kept": 1} and not hasattr(module, "dropped")


def test_a_module_with_a_net_calls_it():
    class Wrapper(d2l.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(2, 1)

    wrapper = Wrapper()
    X = torch.randn(4, 2)
    torch.testing.assert_close(wrapper(X), wrapper.net(X))
    assert [name for name, _ in wrapper.named_parameters()] == ["net.weight", "net.bias"]


def test_a_module_without_forward_or_net_says_what_is_missing():
    with pytest.raises(NotImplementedError, match="no forward method and no self.net"):
        Scaler(1.0)(torch.zeros(1))


def test_add_to_class_makes_a_method_of_existing_and_new_instances():
    class Counter(d2l.Module):
        def __init__(self):
            super().__init__()
            self.count = 1

    existing = Counter()

    @d2l.add_to_class(Counter)
    def doubled(self):
        return 2 * self.count

    assert existing.doubled() == 2 and Counter().doubled() == 2
    assert doubled(existing) == 2  # the name still holds the function
