"""The guard: stored outputs hold under other floating-point paths, not only this machine's.

Strict nbval compares every notebook's outputs with a fresh run, but on one
CPU only: a number that depends on how float32 sums are rounded passes here
and fails on the next machine (an Intel CPU with AVX-512 printed other
chapter 08 figures than the AMD one that stored them). Other CPUs cannot be
borrowed in a test, but the paths they take can be forced on this one. These
settings change which kernels PyTorch and MKL run, and so the order in which
they add:

* ``ATEN_CPU_CAPABILITY``: PyTorch's own vectorised kernels at ``default``
  (no explicit vector code, as on a CPU it has no kernels for) or ``avx2``
  (an x86-64 CPU without AVX-512);
* ``MKL_ENABLE_INSTRUCTIONS`` and ``ONEDNN_MAX_CPU_ISA``: MKL's and oneDNN's
  matrix products limited to SSE4.x;
* ``OMP_NUM_THREADS``: one thread, or more threads than this machine has
  cores, which splits reductions differently.

Under each setting, every notebook runs again under strict nbval, with the
tests that compare chapter 09's live model with its cache. The first test
shows that each setting really moves float32 results on this machine; a
setting that moves nothing here is left out, and said so.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parent.parent
NATIVE = torch.backends.cpu.get_cpu_capability()  # "AVX512", "AVX2", "DEFAULT", … as PyTorch picked it here

# Two settings, each moving several things at once: each run of every notebook costs about 50 s of one core.
SETTINGS = {
    "default-kernels-1-thread": {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
                                 "ONEDNN_MAX_CPU_ISA": "SSE41", "OMP_NUM_THREADS": "1"},
    "avx2-kernels-3-threads": {"ATEN_CPU_CAPABILITY": "avx2", "OMP_NUM_THREADS": "3"},
}

# A few training steps of chapter 08's model on the process's default threads: its losses move in their last
# bits whenever the order of the sums does, and it prints them exactly (repr), which no notebook does.
PROBE = """
import torch
from d2lmini import seq2seq
torch.manual_seed(0)
model = seq2seq.AttentionSeq2Seq(32, "dot-product")
losses = seq2seq.train(model, "reverse", 20)
x = torch.randn(512, 512, generator=torch.Generator().manual_seed(0))
print(torch.backends.cpu.get_cpu_capability(), repr(losses[-1]), repr((x @ x).sum().item()))
"""


def child_env(setting):
    """This process's environment with ``setting`` added, minus coverage's hooks for subprocesses."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("COV_CORE")}
    return {**env, **SETTINGS.get(setting, {})}


def probe(setting):
    result = subprocess.run([sys.executable, "-c", PROBE], env=child_env(setting), capture_output=True,
                            text=True, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    capability, *numbers = result.stdout.split()
    return capability, numbers


def test_each_setting_moves_float32_results_on_this_machine():
    native = probe("native")
    assert native[0] == NATIVE
    for setting in SETTINGS:
        capability, numbers = probe(setting)
        if setting.startswith("avx2") and NATIVE != "AVX512":
            continue  # on a CPU without AVX-512, avx2 is the native path: the thread count still moves sums
        expected = "AVX2" if setting.startswith("avx2") else "DEFAULT"
        assert capability == expected, f"{setting}: PyTorch ran {capability} kernels, expected {expected}"
        assert numbers != native[1], f"{setting} gave the same float32 results as the native path"


@pytest.mark.parametrize("setting", SETTINGS)
def test_every_notebook_and_the_model_cache_hold_under_another_float_path(setting):
    notebooks = sorted(str(path.relative_to(REPO)) for path in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--no-header",
               "--nbval", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg", "--nbval-cell-timeout=120",
               *notebooks, "tests/test_pretrained.py", "-k", "ipynb or float16 or cache or chapter"]
    result = subprocess.run(command, env=child_env(setting), capture_output=True, text=True, cwd=REPO,
                            timeout=600)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, (f"under {SETTINGS[setting]}, a stored output or a cache test differs from "
                                    f"this run ({summary}): print it at a precision that holds, or assert the "
                                    f"claim instead (docs/platforms.md).\n" + result.stdout[-6000:])
    assert " passed" in summary and "failed" not in summary
