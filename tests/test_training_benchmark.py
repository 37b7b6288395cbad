"""The training benchmark of chapter 08 runs end to end on a tiny workload and prints every table.

It times real training, so the test checks the tables' structure and what must hold whatever the
machine's speed (a target reached or not, ratios above zero), never a duration.
"""


import torch


def test_training_benchmark_prints_every_table_on_a_tiny_workload(capsys, callers_threads):
    from benchmarks import training as benchmark

    benchmark.main(["--seeds", "0", "--cap", "0.3", "--rounds", "1", "--view-steps", "100", "--changes", "4",
                    "--evaluate-every", "10"])
    assert torch.get_num_threads() == callers_threads  # one thread while it runs, the caller's afterwards
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    for row in ("| reversal | 99% | 0 |", "| sorting | 95% | 0 |", "| sorting, no positional encoding | 95% | 0 |",
                "| seed 0, 0.3 s |", "| dot-product | 0 |", "| additive | 0 |", "| train() alone |",
                "| train() with a History callback |", "| TrainingView.run(), drawn every 20 steps |"):
        assert any(line.startswith(row) for line in rows), row
    assert "| train() alone | " in out and "| 1.00 (1.00) |" in out  # plain training is the unit
    assert "first optimizer (imports torch._dynamo" in out and "AlignmentExplorer, " in out
    assert "additive ÷ dot-product, time per step" in out
