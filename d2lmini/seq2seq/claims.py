"""Checking what chapter 08 claims about its trained runs, with margins instead of exact figures.

Training amplifies the last bits of float32 sums, so the same seed gives
slightly different figures on another CPU; chapter 08 compares none of them
as text, and asserts what it claims instead, with margins measured over seeds
and floating-point paths (``benchmarks/chapter08_claims.py``).
"""

from .._checks import check_flag


class ClaimNotShown(AssertionError):
    """A trained run that does not show what the chapter claims about it."""


def expect(holds, claim, measured):
    """Raise ``ClaimNotShown`` unless ``holds``: ``claim`` says what the chapter claims, ``measured`` what
    this run gave (both text). The figures of a run vary a little from machine to machine; a claim holds
    on all of them, with a margin."""
    check_flag(holds, "holds (the claim's condition)")
    for value, name in [(claim, "claim"), (measured, "measured")]:
        if not isinstance(value, str) or not value:
            raise TypeError(f"{name} must be a non-empty str, got {type(value).__name__} {value!r:.60}")
    if not holds:
        raise ClaimNotShown(f"this run does not show what the chapter claims: {claim}; it measured {measured}. "
                            f"Trained figures vary from machine to machine, but this claim held on every "
                            f"seed and floating-point path measured (benchmarks/chapter08_claims.py). If you "
                            f"did not change the notebook's settings, please report it with your CPU and "
                            f"PyTorch version.")
