"""The hub load test's script (benchmarks/hub_load.py) on a tiny workload: two learners, two chapters, two moves.

Its figures are reported by hand in benchmarks/README.md; here only that the
script runs a real hub end to end and measures what it says it measures.
"""

import json
from pathlib import Path

import pytest
from support import require_hub

from benchmarks import hub_load

REPO = Path(__file__).resolve().parent.parent


def test_the_load_test_spreads_learners_over_chapters_and_measures_each(tmp_path, capsys):
    require_hub()
    figures = hub_load.main(["--learners", "2", "--chapters", "00", "02", "--moves", "2", "--memory-chapters", "00",
                             "--out", str(tmp_path / "figures.json")])
    (round_,) = figures["rounds"]
    assert round_["learners"] == 2 and round_["slider_moves"] == 4
    assert 0 < round_["spawn_and_pull_s_median"] < round_["first_heatmap_s_median"]
    assert 0 < round_["slider_to_image_ms_median"] <= round_["slider_to_image_ms_p95"]
    assert round_["kernel_mb_median"] > 100 and round_["server_mb_median"] > 30 and round_["hub_mb_peak"] > 30
    ch00, ch02 = round_["chapters"]
    assert (ch00["chapter"], ch02["chapter"]) == ("00_start_here.ipynb", "02_masked_softmax.ipynb")
    for row in (ch00, ch02):  # one learner each, its own kernel, its explorer's slider moved twice
        assert row["learners"] == 1 and row["slider_moves"] == 2 and row["kernel_peak_mb"] > 100
        assert row["first_heatmap_s_median"] == row["first_heatmap_s_max"] <= round_["first_heatmap_s_max"]
    assert round_["kernel_mb_max"] == max(ch00["kernel_peak_mb"], ch02["kernel_peak_mb"])
    assert round_["server_mb_max"] >= round_["server_mb_median"]
    (memory,) = figures["memory"]
    assert memory["chapter"] == "00_start_here.ipynb" and memory["errors"] == []
    assert memory["kernel_peak_mb"] > 100
    printed = capsys.readouterr().out
    assert "| 2 |" in printed and "| 02_masked_softmax | — |" in printed
    assert json.loads((tmp_path / "figures.json").read_text())["chapters"] == [ch00["chapter"], ch02["chapter"]]


@pytest.mark.parametrize("argv, expected", [
    (["--learners", "0"], r"--learners: expected class sizes from 1 to 50, got \[0\]"),
    (["--moves", "500"], r"--moves: expected 0 to 200 slider moves per learner, got 500"),
    (["--chapters", "00", "42"], r"chapter '42': expected two digits naming a chapter, found none"),
])
def test_bad_arguments_stop_the_load_test_before_a_hub_starts(argv, expected):
    with pytest.raises(SystemExit, match=expected):
        hub_load.main(argv)


@pytest.mark.parametrize("state, expected", [
    ({"_model_name": "FloatSliderModel", "min": 0.0, "max": 1.0, "value": 0.5}, [0.0, 0.5, 0.75, 1.0, 0.0]),
    ({"_model_name": "IntSliderModel", "min": 0, "max": 2, "value": 0}, [1, 2, 0, 2, 0]),
    ({"_model_name": "IntSliderModel", "min": 3, "max": 3, "value": 3}, []),
], ids=["float", "short integer range", "one value"])
def test_each_slider_move_sends_a_value_unlike_the_one_before(state, expected):
    values = hub_load.slider_values(state, 5)
    assert values == expected
    assert all(a != b for a, b in zip([state["value"], *values], values))


def _megabytes(quantity):
    """A Kubernetes memory quantity ('700M', '1.5G': powers of ten) in MB of 2**20 bytes, as psutil's."""
    number, unit = float(quantity[:-1]), quantity[-1]
    return number * {"M": 10**6, "G": 10**9}[unit] / 2**20


def test_the_zero_to_jupyterhub_limits_cover_the_measured_memory():
    """hub/config.yaml's guarantee holds one server and one kernel at the largest peak measured, alone or in a class."""
    import yaml

    config = yaml.safe_load((REPO / "hub" / "config.yaml").read_text())
    figures = json.loads((REPO / "benchmarks" / "hub_load.json").read_text())
    server = max([row["server_mb"] for row in figures["memory"]] + [r["server_mb_max"] for r in figures["rounds"]])
    kernel = max([row["kernel_peak_mb"] for row in figures["memory"]] + [r["kernel_mb_max"] for r in figures["rounds"]])
    memory = config["singleuser"]["memory"]
    assert _megabytes(memory["guarantee"]) >= server + kernel
    assert _megabytes(memory["limit"]) >= server + 2 * kernel  # a second notebook's kernel
    assert config["cull"]["enabled"] and config["singleuser"]["extraEnv"]["OMP_NUM_THREADS"] == "1"
    assert len(figures["memory"]) == 10 and [r["learners"] for r in figures["rounds"]] == [5, 10, 20]
    assert len(figures["chapters"]) == 10 and len(figures["rounds"][-1]["chapters"]) == 10
