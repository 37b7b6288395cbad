"""The PNG benchmark runs end to end on one explorer and prints its row and the ratios to Pillow."""

from benchmarks import png_encode
from d2lmini.widgets import DotProduct


def test_png_benchmark_times_one_explorer_against_pillow(capsys, monkeypatch):
    monkeypatch.setattr(png_encode, "DECLARATIONS", (DotProduct,))
    png_encode.main(["--rounds", "1"])  # checks first that every encoding decodes to the canvas
    out = capsys.readouterr().out
    assert "| DotProduct | 1120 × 480 |" in out
    for encoder in ("Pillow, level 1", "png_bytes", "BandedPNG"):
        assert f"Pillow (default) ÷ {encoder}: median" in out
