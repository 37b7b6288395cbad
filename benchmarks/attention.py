"""Attention speed and memory: the book's explicit code, d2lmini's two paths, PyTorch.

Run with ``make bench`` (or ``python -m benchmarks.attention --help``). Every
row computes the same causal multi-head self-attention with the same weights,
forward only, under ``torch.no_grad()``; the script checks that the outputs
agree before it times anything. It prints Markdown tables:

1. the workload: batch 8, 1,024 tokens, width 768, 12 heads, causal, float32;
2. a sweep of sequence lengths (time and memory against length);
3. the masked softmax alone, the fill strategies behind the explicit path.

Time is the median over interleaved repeats after a warm-up: each round runs
every row once, so a burst of load from elsewhere hits all rows alike. On a
CUDA device it is measured with CUDA events.

Memory is the peak of tensor memory allocated during one call, above what was
allocated before it (the output included). On CUDA that is
``torch.cuda.max_memory_allocated``. On the CPU, PyTorch has no such counter,
so the call runs once under ``torch.profiler`` with ``profile_memory=True``,
which records what each op allocates and frees; replaying those records in
time order gives the peak. (Checked against the process's peak resident set,
VmHWM, on Linux: the two agree within about 1 MB.)
"""

import argparse
import contextlib
import math
import os
import platform
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn
from torch.profiler import ProfilerActivity, profile

import d2lmini as d2l
from d2lmini.masking import attention_mask

# ---- the book's explicit multi-head attention, written out for comparison ----


def book_masked_softmax(X, valid_lens):
    """The book's masking: lengths copied per row, -1e6 written by boolean indexing."""
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])  # (batch*queries,)
    else:
        valid_lens = valid_lens.reshape(-1)  # (batch*queries,)
    X = X.reshape(-1, shape[-1])  # (batch*queries, keys), a view: the fill below writes into X
    steps = torch.arange(shape[-1], dtype=torch.float32, device=X.device)
    keep = steps[None, :] < valid_lens[:, None]  # (batch*queries, keys)
    X[~keep] = -1e6
    return torch.softmax(X.reshape(shape), dim=-1)


class BookMultiHeadAttention(nn.Module):
    """Multi-head attention as the d2l book builds it.

    Heads are folded into the batch, the lengths repeated once per head, and
    the scores masked by ``book_masked_softmax``. The parameter names match
    ``d2lmini.MultiHeadAttention``, so its state dict loads here.
    """

    def __init__(self, num_hiddens, num_heads, dropout=0.0):
        super().__init__()
        self.num_heads = num_heads
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=False)
        self.W_k = nn.Linear(num_hiddens, num_hiddens, bias=False)
        self.W_v = nn.Linear(num_hiddens, num_hiddens, bias=False)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=False)
        self.dropout = nn.Dropout(dropout)

    def fold_heads(self, X):
        """(batch, n, hiddens) -> (batch*heads, n, hiddens/heads), a copy."""
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1).permute(0, 2, 1, 3)
        return X.reshape(-1, X.shape[2], X.shape[3])

    def unfold_heads(self, X):
        """(batch*heads, n, p) -> (batch, n, heads*p), a copy."""
        X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2]).permute(0, 2, 1, 3)
        return X.reshape(X.shape[0], X.shape[1], -1)

    def forward(self, queries, keys, values, valid_lens):
        queries = self.fold_heads(self.W_q(queries))  # (batch*heads, queries, p)
        keys = self.fold_heads(self.W_k(keys))  # (batch*heads, keys, p)
        values = self.fold_heads(self.W_v(values))  # (batch*heads, keys, p)
        valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = book_masked_softmax(scores, valid_lens)
        output = torch.bmm(self.dropout(self.attention_weights), values)  # (batch*heads, queries, p)
        return self.W_o(self.unfold_heads(output))  # (batch, queries, hiddens)


# ---- the rows: one zero-argument call each, all on the same input ----


def attention_rows(X, num_heads, kernel_row=False):
    """Callables for every implementation, all with the same weights, on ``X`` (B, T, C)."""
    B, T, C = X.shape
    explicit = d2l.MultiHeadAttention(C, num_heads, 0.0, query_size=C, key_size=C, value_size=C,
                                      causal=True)
    fast = d2l.MultiHeadAttention(C, num_heads, 0.0, query_size=C, key_size=C, value_size=C,
                                  causal=True, need_weights=False)
    book = BookMultiHeadAttention(C, num_heads)
    fast.load_state_dict(explicit.state_dict())
    book.load_state_dict(explicit.state_dict())
    torch_mha = d2l.to_torch_multihead(explicit)
    for module in (explicit, fast, book, torch_mha):
        module.to(X.device).eval()
    future = torch.ones(T, T, dtype=torch.bool, device=X.device).triu(1)  # True: may not attend

    def project(W):
        return W(X).view(B, T, num_heads, C // num_heads).transpose(1, 2)  # (B, nh, T, hs)

    def direct_sdpa():
        q, k, v = project(explicit.W_q), project(explicit.W_k), project(explicit.W_v)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, nh, T, hs)
        return explicit.W_o(y.transpose(1, 2).reshape(B, T, C))

    rows = {
        "book-style explicit (d2l book code)":
            lambda: book(X, X, X, d2l.causal_valid_lens(B, T, X.device)),
        "d2lmini explicit path (need_weights=True)": lambda: explicit(X, X, X),
        "d2lmini fast path (need_weights=False)": lambda: fast(X, X, X),
        "torch nn.MultiheadAttention": lambda: torch_mha(X, X, X, attn_mask=future, is_causal=True,
                                                          need_weights=False)[0],
        "F.scaled_dot_product_attention, direct": direct_sdpa,
    }
    if kernel_row:
        with torch.no_grad():
            q, k, v = project(explicit.W_q), project(explicit.W_k), project(explicit.W_v)
        rows["(SDPA kernel alone: q, k, v projected beforehand)"] = (
            lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    return rows


# ---- measuring ----


def time_rows(rows, repeats, warmup, device):
    """Seconds per call of each row, one list per row: wall-clock time and CPU time.

    Each round runs every row once, in reverse order every other round, so
    that load from elsewhere and the order of the rows hit all rows alike.
    CPU time (of this process, all threads) counts the work done whoever else
    shares the cores; on CUDA both lists hold the CUDA-event time.
    """
    for _ in range(warmup):
        for fn in rows.values():
            fn()
    wall, cpu = {name: [] for name in rows}, {name: [] for name in rows}
    names = list(rows)
    for round_ in range(repeats):
        for name in names if round_ % 2 == 0 else reversed(names):
            wall_seconds, cpu_seconds = _time_once(rows[name], device)
            wall[name].append(wall_seconds)
            cpu[name].append(cpu_seconds)
    return wall, cpu


def medians(times):
    return {name: statistics.median(ts) for name, ts in times.items()}


def _time_once(fn, device):
    if device.type == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize(device)
        seconds = start.elapsed_time(end) / 1e3
        return seconds, seconds
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def peak_bytes(fn, device):
    """Peak tensor memory allocated during one call of ``fn``, above what was there before."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        out = fn()
        torch.cuda.synchronize(device)
        del out
        return torch.cuda.max_memory_allocated(device) - before
    with _kineto_log_silenced(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = fn()
    del out
    changes = []
    for event in prof.events():
        delta = event.self_cpu_memory_usage  # what the op itself allocated minus what it freed
        if delta:
            # Count allocations when the op starts and frees when it ends: an upper bound.
            changes.append((event.time_range.start if delta > 0 else event.time_range.end, delta))
    held = peak = 0
    for _, delta in sorted(changes):
        held += delta
        peak = max(peak, held)
    return peak


@contextlib.contextmanager
def _kineto_log_silenced():
    """The profiler's backend writes two log lines per session straight to file descriptor 2."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def max_difference(rows, reference):
    """Largest |row output - reference output| over all rows."""
    expected = rows[reference]()
    return max((fn() - expected).abs().max().item() for fn in rows.values())


# ---- tables ----


def markdown_table(header, lines):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(cell) for cell in line) + " |" for line in lines]
    return "\n".join(out)


BOOK, EXPLICIT, FAST = ("book-style explicit (d2l book code)", "d2lmini explicit path (need_weights=True)",
                        "d2lmini fast path (need_weights=False)")
SDPA = "F.scaled_dot_product_attention, direct"


def workload_table(args, device):
    torch.manual_seed(0)
    X = torch.randn(args.batch, args.tokens, args.width, device=device)
    with torch.no_grad():
        rows = attention_rows(X, args.heads, kernel_row=True)
        difference = max_difference({k: v for k, v in rows.items() if not k.startswith("(")}, SDPA)
        memory = {name: peak_bytes(fn, device) for name, fn in rows.items()}  # also a first warm-up
        times, cpu_times = time_rows(rows, args.repeats, args.warmup, device)
        pair, cpu_pair = time_rows({FAST: rows[FAST], SDPA: rows[SDPA]}, args.pair_repeats, 0, device)
    seconds = medians(times)
    ratio = {name: paired_ratios(ts, times[SDPA])[1] for name, ts in times.items()}
    lines = [[name, f"{seconds[name] * 1e3:.1f}", f"{ratio[name]:.2f}×",
              f"{memory[name] / 2**20:.1f}", f"{memory[name] / memory[SDPA]:.1f}×"]
             for name in rows]
    print(f"\n### Causal multi-head self-attention: batch {args.batch}, {args.tokens} tokens, "
          f"width {args.width}, {args.heads} heads, float32\n")
    print(markdown_table(["implementation", "median ms", "time ÷ SDPA", "peak MB", "memory ÷ SDPA"],
                         lines))
    print(f"\nMedian of {args.repeats} interleaved calls after {args.warmup + 1} warm-up (the first "
          f"one measures the memory); time ÷ SDPA is the median of the per-round ratios. "
          f"Every row's output matches direct SDPA's within {difference:.1e} (largest difference).")
    fast, explicit = paired_ratios(pair[FAST], pair[SDPA]), paired_ratios(times[EXPLICIT], times[BOOK])
    fast_cpu = paired_ratios(cpu_pair[FAST], cpu_pair[SDPA])
    explicit_cpu = paired_ratios(cpu_times[EXPLICIT], cpu_times[BOOK])
    print(f"\nGoals, as medians of paired ratios of wall-clock time, [first, third quartile], "
          f"and of CPU time:\n\n"
          f"- fast path ÷ direct SDPA = {quartiles(fast)}, CPU time {quartiles(fast_cpu)}, over "
          f"{args.pair_repeats} more rounds of these two rows alone; goal ≤ 1.10: "
          f"{'met' if fast[1] <= 1.10 else 'NOT met'};\n"
          f"- d2lmini explicit ÷ book-style = {quartiles(explicit)}, CPU time {quartiles(explicit_cpu)}; "
          f"goal ≤ 1.00: {'met' if explicit[1] <= 1.0 else 'NOT met'}.")


def quartiles(q):
    return f"{q[1]:.2f} [{q[0]:.2f}, {q[2]:.2f}]"


def paired_ratios(times, reference_times):
    """First quartile, median and third quartile of time / reference time, round by round.

    A round's two calls ran close together in time, under the same load from elsewhere.
    """
    ratios = [t / r for t, r in zip(times, reference_times)]
    if len(ratios) == 1:
        return ratios * 3
    return statistics.quantiles(ratios, n=4, method="inclusive")  # [q1, median, q3]


def sweep_tables(args, device):
    results = {}
    for tokens in args.sweep:
        torch.manual_seed(0)
        X = torch.randn(args.sweep_batch, tokens, args.width, device=device)
        repeats = sweep_repeats(args.repeats, tokens)
        with torch.no_grad():
            rows = attention_rows(X, args.heads)
            memory = {name: peak_bytes(fn, device) for name, fn in rows.items()}  # also the warm-up
            seconds = medians(time_rows(rows, repeats, 0, device)[0])
        results[tokens] = seconds, memory
        del rows, X
    names = list(results[args.sweep[0]][0])
    short = ["book-style", "d2lmini explicit", "d2lmini fast", "nn.MultiheadAttention", "direct SDPA"]
    print(f"\n### Sequence-length sweep: batch {args.sweep_batch}, width {args.width}, "
          f"{args.heads} heads, causal, float32\n")
    print("Median ms per call:\n")
    print(markdown_table(["tokens"] + short,
                         [[t] + [f"{results[t][0][n] * 1e3:.1f}" for n in names] for t in args.sweep]))
    print("\nPeak MB per call:\n")
    print(markdown_table(["tokens"] + short,
                         [[t] + [f"{results[t][1][n] / 2**20:.1f}" for n in names] for t in args.sweep]))
    counts = ", ".join(f"{sweep_repeats(args.repeats, t)} at {t}" for t in args.sweep)
    print(f"\nMedians of interleaved calls after one warm-up that measures the memory ({counts} tokens).")
    return results


def sweep_repeats(repeats, tokens):
    """Fewer repeats for long sequences, whose calls are slow and their times steadier."""
    return repeats if tokens <= 1024 else max(2, repeats * 1024 // tokens)


def masking_table(args, device):
    """The fill strategies of the masked softmax, on the same scores and 1-D lengths."""
    variants = {
        "book: -1e6 by boolean index assignment": book_masked_softmax,
        "masked_fill copy, -1e6": lambda X, lens: torch.softmax(
            X.masked_fill(~attention_mask(lens, *X.shape), -1e6), dim=-1),
        "masked_fill copy, -inf, then nan_to_num": lambda X, lens: torch.softmax(
            X.masked_fill(~attention_mask(lens, *X.shape), float("-inf")), dim=-1).nan_to_num(0.0),
        "d2lmini masked_softmax (public: copies)": d2l.masked_softmax,
        "d2lmini masked_softmax, inplace=True":
            lambda X, lens: d2l.masked_softmax(X, lens, inplace=True),
    }
    lines = []
    large_repeats = max(3, args.repeats // 2)
    for shape, repeats in ((tuple(args.mask_small), 200), (tuple(args.mask_large), large_repeats)):
        torch.manual_seed(0)
        scores = torch.randn(shape, device=device)
        lens = torch.randint(1, shape[-1] + 1, (shape[0],), device=device)
        with_empty = lens.clone()
        with_empty[0] = 0
        for label, valid_lens in ((f"{shape}", lens), (f"{shape}, one length 0", with_empty)):
            with torch.no_grad():
                seconds = time_masking(variants, scores, valid_lens, repeats, device)
            lines.append([label] + [f"{seconds[name] * 1e3:.3f}" for name in variants])
    print("\n### Masked softmax alone: median ms per call\n")
    print(markdown_table(["scores (batch, queries, keys)"] + list(variants), lines))
    print(f"\n1-D lengths drawn from 1..keys; each call masks a fresh copy of the scores (the copy "
          f"is not timed). {repeats_note(200, large_repeats)}")


def time_masking(variants, scores, valid_lens, repeats, device):
    """Median seconds per call of each variant; the copy of the scores is made outside the clock."""
    times = {name: [] for name in variants}
    for round_ in range(repeats + 1):  # round 0 warms up
        for name, fn in variants.items():
            X = scores.clone()
            elapsed = _time_once(lambda fn=fn, X=X: fn(X, valid_lens), device)[0]
            if round_:
                times[name].append(elapsed)
    return medians(times)


def repeats_note(small, large):
    return f"Medians of {small} interleaved calls for the small scores and {large} for the large."


def describe_machine(device):
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    model = platform.processor() or platform.machine()
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        model = names[0] if names else model
    return f"{model}, {os.cpu_count()} cores, {torch.get_num_threads()} torch threads"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=1024)
    parser.add_argument("--width", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--pair-repeats", type=int, default=15,
                        help="extra rounds of the fast path against direct SDPA alone")
    parser.add_argument("--sweep", type=int, nargs="*", default=[128, 256, 512, 1024, 2048, 4096],
                        help="sequence lengths for the sweep (none: skip it)")
    parser.add_argument("--sweep-batch", type=int, default=1)
    parser.add_argument("--mask-small", type=int, nargs=3, default=[64, 50, 50])
    parser.add_argument("--mask-large", type=int, nargs=3, default=[96, 1024, 1024])
    parser.add_argument("--no-masking", action="store_true", help="skip the masked softmax table")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    device = torch.device(args.device)
    start = time.perf_counter()
    print(f"## Attention benchmark\n\nMachine: {describe_machine(device)}; torch {torch.__version__}.")
    workload_table(args, device)
    if args.sweep:
        sweep_tables(args, device)
    if not args.no_masking:
        masking_table(args, device)
    print(f"\n(The benchmark took {time.perf_counter() - start:.0f} s.)")


if __name__ == "__main__":
    main()
