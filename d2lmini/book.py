"""The two pieces of the book's class machinery that its attention chapters build on.

The book defines its layers as subclasses of ``d2l.Module`` and adds methods
to a class after its definition with ``@d2l.add_to_class(Class)``. Both are
here, so that such code runs after ``import d2lmini as d2l``. ``Module`` is an
``nn.Module`` with the book's ``save_hyperparameters``; the book's trainer
(progress board, ``training_step``, ``configure_optimizers``) is not part of it.
"""

import inspect

from torch import nn


def add_to_class(Class):
    """A decorator that attaches the function it decorates to ``Class`` as a method.

    ``@d2l.add_to_class(MultiHeadAttention)`` above ``def transpose_qkv(self, X)``
    makes ``transpose_qkv`` a method of every ``MultiHeadAttention``, existing
    instances included. The function itself is returned (the book returns None).
    """
    if not inspect.isclass(Class):
        raise TypeError(f"add_to_class needs a class, got {type(Class).__name__} {Class!r}")

    def attach(function):
        setattr(Class, function.__name__, function)
        return function

    return attach


class Module(nn.Module):
    """``nn.Module`` with the book's ``save_hyperparameters``.

    A subclass calls ``super().__init__()``, then may call
    ``self.save_hyperparameters()`` to keep its constructor's arguments as
    attributes and in ``self.hparams``. If it sets ``self.net`` and defines no
    ``forward``, calling it calls ``self.net``.
    """

    def save_hyperparameters(self, ignore=()):
        """Store the calling ``__init__``'s arguments as attributes, and in ``self.hparams``.

        Names in ``ignore``, ``self`` and names starting with ``_`` are left out.
        """
        caller = inspect.currentframe().f_back
        arguments = inspect.getargvalues(caller)
        skip = set(ignore) | {"self"}
        self.hparams = {name: value for name, value in arguments.locals.items()
                        if name not in skip and not name.startswith("_")}
        for name, value in self.hparams.items():
            setattr(self, name, value)

    def forward(self, X):
        if "net" not in self._modules:
            raise NotImplementedError(
                f"{type(self).__name__} has no forward method and no self.net to call: "
                f"define forward(self, ...) or set self.net in __init__"
            )
        return self.net(X)
