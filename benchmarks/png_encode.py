"""PNG encoding of the explorers' pictures: d2lmini's own encoder against Pillow, in one run.

    python -m benchmarks.png_encode [--rounds 30]

Every explorer (``widgets.DECLARATIONS``, at its default settings) is drawn
once by the kernel's shell, and its canvas (RGBA, drawn at twice the shown
size) is encoded four ways, interleaved round by round in a rotating order so
that all see the same machine load:

* **Pillow**: ``Image.fromarray(rgba).save(..., "PNG")`` with Pillow's
  defaults (zlib level 6; each row filtered by whichever of PNG's five filters
  suits it best), the usual way to make a PNG in Python;
* **Pillow, level 1**: the same with ``compress_level=1``, d2lmini's zlib level,
  so that the ratio does not come from the level alone;
* **png_bytes**: ``widgets.png.png_bytes``, the whole picture (one "up" filter,
  zlib level 1), as an explorer's stored picture is made;
* **BandedPNG**: ``BandedPNG.encode`` of the same picture, compressing again
  only the band of rows the explorer's moving artists can touch
  (``BlitFigure.changing_rows``), as every update is made.

Each decodes to the canvas's pixels (checked first). Prints one Markdown row
per explorer, median milliseconds per picture and Pillow (default) ÷ each, the
bytes written, and the machine. Pillow is imported here only: d2lmini does not
depend on it.
"""

import argparse
import io
import os
import platform
import statistics
import time

import numpy as np
from PIL import Image

from d2lmini.pretrained.cache import made_with
from d2lmini.widgets import DECLARATIONS, Explorer
from d2lmini.widgets.png import BandedPNG, png_bytes


def pillow(level=None):
    """An encoder through Pillow, at its default zlib level or at ``level``."""
    options = {} if level is None else {"compress_level": level}

    def encode(rgba):
        out = io.BytesIO()
        Image.fromarray(rgba).save(out, "PNG", **options)
        return out.getvalue()
    return encode


def banded(rgba, rows):
    """BandedPNG's encoder for pictures that differ from ``rgba`` only in ``rows``."""
    return BandedPNG(rgba, rows).encode


def explorer_picture(declaration_class):
    """(the canvas's RGBA pixels, the band of rows its moving artists can touch) of the explorer at its defaults."""
    declaration = declaration_class.for_page()
    blit = Explorer(declaration, declaration.checked_settings()).blit
    return np.asarray(blit.canvas.buffer_rgba()).copy(), blit.changing_rows()


def median_ms(encoders, rgba, rounds):
    """name -> median milliseconds of one encoding of ``rgba``, the encoders interleaved, their order rotating."""
    times = {name: [] for name in encoders}
    names = list(encoders)
    for round_ in range(rounds):
        turn = round_ % len(names)
        for name in names[turn:] + names[:turn]:
            start = time.perf_counter()
            encoders[name](rgba)
            times[name].append(time.perf_counter() - start)
    return {name: 1000 * statistics.median(values) for name, values in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="encodings of each picture by each encoder (default 30)")
    args = parser.parse_args(argv)
    rows = []
    for declaration_class in DECLARATIONS:
        rgba, band = explorer_picture(declaration_class)
        encoders = {"Pillow": pillow(), "Pillow, level 1": pillow(1), "png_bytes": png_bytes,
                    "BandedPNG": banded(rgba, band)}
        sizes = {}
        for name, encode in encoders.items():
            data = encode(rgba)
            assert np.array_equal(np.asarray(Image.open(io.BytesIO(data)).convert("RGBA")), rgba), name
            sizes[name] = len(data)
        ms = median_ms(encoders, rgba, args.rounds)
        rows.append((declaration_class.__name__, rgba.shape, band, ms, sizes))
    print(f"Measured {time.strftime('%Y-%m-%d')} on {made_with()['processor']} ({os.cpu_count()} cores, "
          f"Python {platform.python_version()}, Pillow {Image.__version__}, NumPy {np.__version__}), "
          f"median of {args.rounds} interleaved rounds, load average {os.getloadavg()[0]:.1f}.\n")
    # Two narrow tables rather than one wide one: a wide table scrolls sideways on the site and on a phone.
    print("| explorer | picture | band | Pillow ms | Pillow level 1 ms | png_bytes ms | BandedPNG ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, (height, width, _), band, ms, _sizes in rows:
        print(f"| {name} | {width} × {height} | {band.stop - band.start} rows | {ms['Pillow']:.2f} "
              f"| {ms['Pillow, level 1']:.2f} | {ms['png_bytes']:.2f} | {ms['BandedPNG']:.2f} |")
    print("\n| explorer | Pillow ÷ png_bytes | Pillow ÷ BandedPNG | kB: Pillow / level 1 / png_bytes |")
    print("|---|---:|---:|---|")
    for name, _shape, _band, ms, sizes in rows:
        kilobytes = " / ".join(f"{sizes[encoder] / 1e3:.0f}" for encoder in ("Pillow", "Pillow, level 1", "png_bytes"))
        print(f"| {name} | {ms['Pillow'] / ms['png_bytes']:.1f}× | {ms['Pillow'] / ms['BandedPNG']:.1f}× "
              f"| {kilobytes} |")
    for encoder in ("Pillow, level 1", "png_bytes", "BandedPNG"):
        ratios = [ms["Pillow"] / ms[encoder] for *_, ms, _ in rows]
        print(f"\nPillow (default) ÷ {encoder}: median {statistics.median(ratios):.1f}×, "
              f"from {min(ratios):.1f}× to {max(ratios):.1f}× over the {len(rows)} explorers.")


if __name__ == "__main__":
    main()
