"""PNG bytes of an RGBA array.

``png_bytes`` encodes a whole picture once (an explorer's static picture);
``BandedPNG`` encodes the successive pictures of one kept figure, compressing
again only the band of rows that can change between two of them: both with
numpy and zlib only. ``page_png`` makes a picture that every reader of the web
page downloads small once, with Pillow: indexed colours where they are exact
or nearly so. Nothing here knows about matplotlib or widgets.
"""

import io
import struct
import zlib

import numpy as np
from PIL import Image

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_ADLER_BASE = 65521


def _png_chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def _png_rows(rgba):
    """The filtered PNG rows of an (height, width, 4) uint8 array, RGBA as it is.

    Each row is a filter byte, then the row's bytes: the first row as they are
    (filter 0, "none"), every other row minus the row above it, byte by byte
    (filter 2, "up"), which turns whatever repeats from row to row, a plot's
    flat colours and straight lines, into zeros. Keeping the alpha byte costs
    little to compress and spares a slow copy that would drop it.
    """
    height, width, _ = rgba.shape
    flat = rgba.reshape(height, 4 * width)
    rows = np.empty((height, 1 + 4 * width), dtype=np.uint8)
    if height:
        rows[0, 0], rows[0, 1:] = 0, flat[0]
        rows[1:, 0] = 2
        np.subtract(flat[1:], flat[:-1], out=rows[1:, 1:])  # modulo 256, as PNG wants
    return rows


def _png(width, height, zlib_stream):
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA, no interlace
    return (PNG_SIGNATURE + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", zlib_stream)
            + _png_chunk(b"IEND", b""))


def png_bytes(rgba):
    """PNG bytes of an (height, width, 4) uint8 array.

    Written by hand because it is the largest cost of an update otherwise:
    Pillow tries five row filters on every row, while one filter ("up") with
    zlib level 1 encodes an explorer's picture 3.2 to 5.7 times faster than
    Pillow's defaults (2.1 to 3.2 times faster than Pillow at zlib level 1),
    for a PNG 10 to 33% larger (benchmarks/png_encode.py, in benchmarks/README.md).
    """
    height, width, _ = rgba.shape
    return _png(width, height, zlib.compress(np.ascontiguousarray(_png_rows(rgba)), 1))


def _adler32_combine(first, second, second_length):
    """The Adler-32 of two pieces of data joined, from the Adler-32 of each (zlib's
    ``adler32_combine``, which Python's zlib does not expose)."""
    remainder = second_length % _ADLER_BASE
    low = ((first & 0xFFFF) + (second & 0xFFFF) + _ADLER_BASE - 1) % _ADLER_BASE
    high = (remainder * (first & 0xFFFF) + (first >> 16) + (second >> 16) + _ADLER_BASE - remainder) % _ADLER_BASE
    return low | high << 16


class _Deflated:
    """Rows compressed on their own: raw deflate ending on a byte boundary (a sync
    flush, no final block), with the Adler-32 and length of the rows."""

    def __init__(self, rows):
        data = rows.data if rows.size else b""
        compressor = zlib.compressobj(1, zlib.DEFLATED, -15)
        self.bytes = compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
        self.adler, self.length = zlib.adler32(data), rows.size


class BandedPNG:
    """PNG encoding that compresses again only the band of rows that can change.

    The rows above and below ``rows`` (a ``slice``) are compressed once, from
    ``kept`` (the picture they never leave), and reused: a deflate stream may be
    cut into independently compressed pieces, each ending on a byte boundary,
    and the zlib checksum of the whole is combined from the pieces' checksums.
    Each piece's first row is filtered on its own (filter "none"), so that no
    piece depends on the rows of another.
    """

    def __init__(self, kept, rows):
        self.height, self.width, _ = kept.shape
        self.rows = rows
        self.above = _Deflated(_png_rows(kept[:rows.start]))
        self.below = _Deflated(_png_rows(kept[rows.stop:]))

    def encode(self, rgba):
        """PNG bytes of ``rgba``, whose rows outside the band equal ``kept``."""
        band = _Deflated(_png_rows(rgba[self.rows]))
        adler = self.above.adler
        for piece in (band, self.below):
            adler = _adler32_combine(adler, piece.adler, piece.length)
        stream = b"".join([b"\x78\x01", self.above.bytes, band.bytes, self.below.bytes,
                           b"\x03\x00",  # an empty final block ends the deflate stream
                           struct.pack(">I", adler)])
        return _png(self.width, self.height, stream)


REDUCED_LEVELS = 8  # the most a channel may move when an opaque picture is reduced to 256 colours


def page_png(rgba):
    """PNG bytes of a picture (height, width, 4) that every reader of the page downloads, so made small
    once: indexed colours where it has 256 or fewer (exact: text and lines on white, or on nothing,
    usually have), compressed at zlib's highest level."""
    flat = np.ascontiguousarray(rgba).reshape(-1, 4).view(np.uint32).ravel()
    colours, index = np.unique(flat, return_inverse=True)
    if len(colours) > 256:
        return _reduced_png(rgba) or png_bytes(rgba)
    palette = colours.view(np.uint8).reshape(-1, 4)  # (colours, 4): RGBA
    picture = Image.fromarray(index.reshape(rgba.shape[:2]).astype(np.uint8), "P")
    picture.putpalette(palette[:, :3].ravel().tolist())
    buffer = io.BytesIO()
    picture.save(buffer, "PNG", compress_level=9, transparency=palette[:, 3].tobytes())
    return buffer.getvalue()


def _reduced_png(rgba):
    """PNG bytes of an opaque picture reduced to 256 colours (median cut, no dithering) where that moves
    no channel by more than ``REDUCED_LEVELS``, else None. A dark figure has a few antialiased blends
    more than 256 (light text over light lines), and its full-colour PNG is three times larger."""
    if (rgba[..., 3] != 255).any():
        return None
    picture = Image.fromarray(np.ascontiguousarray(rgba[..., :3])).quantize(
        256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    if np.abs(np.asarray(picture.convert("RGB"), dtype=int) - rgba[..., :3]).max() > REDUCED_LEVELS:
        return None
    buffer = io.BytesIO()
    picture.save(buffer, "PNG", compress_level=9)
    return buffer.getvalue()

