"""The widget latency benchmark runs end to end, against a git revision, and prints every table."""

import sys
from concurrent.futures import ThreadPoolExecutor


def run_benchmark(capsys, monkeypatch, keep_case, keep_first_view, construction, baseline):
    """Run the benchmark on the cases kept (each cut to one control or one change); return what it printed."""
    from benchmarks import widget_latency as benchmark

    monkeypatch.setattr(benchmark, "CASES", [c[:4] + (c[4][:1],) for c in benchmark.CASES if keep_case(c)])
    monkeypatch.setattr(benchmark, "FIRST_VIEWS",
                        [c[:3] + (c[3][:1],) for c in benchmark.FIRST_VIEWS if keep_first_view(c)])
    monkeypatch.setattr(benchmark, "CONSTRUCTION", construction)
    # Its own thread, so its own event loop: the browser tests' Playwright keeps one
    # running in the main thread for the rest of the session.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(benchmark.main, ["--changes", "3", "--rounds", "1", "--baseline", baseline]).result()
    sys.modules.pop("d2lmini_baseline", None)
    for name in [n for n in sys.modules if n.startswith("d2lmini_baseline.")]:
        sys.modules.pop(name)
    return capsys.readouterr().out


def test_widget_benchmark_compares_with_a_git_revision_on_a_tiny_workload(capsys, monkeypatch):
    # One case of each kind, the cheapest (one panel, one control), to keep it short.
    out = run_benchmark(capsys, monkeypatch, lambda case: case[0] == "scaled dot product",
                        lambda case: case[0] == "scaled dot product, first switch to fit",
                        ["explore_dot_product"], "HEAD")
    assert "baseline: HEAD" in out
    for row in ("| scaled dot product | 1 + entropy |", "| scaled dot product, first switch to fit | 1 |",
                "| `explore_dot_product()` |", "| scaled dot product | d | 3 |"):
        assert row in out
    assert out.count("÷ HEAD |") == 4  # one ratio column per table


def test_widget_benchmark_times_an_explorer_that_the_baseline_does_not_have(capsys, monkeypatch):
    # One control and one new sentence: each new sentence costs a figure of its own (about 1.5 s).
    # The baseline is a revision from before chapter 09: it has no head view.
    head_view = lambda case: case[1] == "explore_head_view"  # noqa: E731
    out = run_benchmark(capsys, monkeypatch, head_view, head_view, ["explore_head_view"], "b5a5c3e")
    assert "| head view (chapter 09), layer and head | 12 + 1 + lines |" in out
    assert "| — | new |" in out and "| `explore_head_view()` |" in out
    assert "| head view, another example sentence | 1 |" in out
