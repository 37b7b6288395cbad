"""A reader for the safetensors format: an 8-byte header length, a JSON header, then raw arrays.

The format (https://github.com/huggingface/safetensors) is small enough to read
by hand: the first 8 bytes are the header's length in bytes, a little-endian
unsigned 64-bit integer; the header is JSON mapping each tensor's name to its
``dtype`` (``"F32"``, ``"I64"``, ...), ``shape`` and ``data_offsets`` (start
and end, in bytes, counted from the end of the header); an optional
``"__metadata__"`` entry holds strings. The arrays follow, little-endian and
in C order, with no gaps.

``read_safetensors`` reads the file once into memory, checks its SHA-256 when
given one, and returns tensors that share that memory: nothing is copied.
"""

import hashlib
import json
import struct
import sys
from pathlib import Path

import torch

__all__ = ["DTYPES", "read_safetensors", "read_safetensors_header"]

# The format's dtype names, and the torch dtype of each.
DTYPES = {
    "F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
    "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
    "BOOL": torch.bool,
}
_LARGEST_HEADER = 100 * 2 ** 20  # the format's own limit on the header, 100 MB


def _header_of(data, path):
    """(header dict, the offset where the arrays start) of the bytes ``data`` read from ``path``."""
    if len(data) < 8:
        raise ValueError(f"{path} is not a safetensors file: it has {len(data)} bytes, fewer than the 8 of "
                         f"the header length")
    (length,) = struct.unpack("<Q", data[:8])
    if length > min(_LARGEST_HEADER, len(data) - 8):
        raise ValueError(f"{path} is not a safetensors file: its first 8 bytes give a header of {length} bytes, "
                         f"and the file has {len(data)}")
    try:
        header = json.loads(bytes(data[8:8 + length]))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not a safetensors file: its header is not JSON ({error})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path} is not a safetensors file: its header is JSON, but not an object")
    return header, 8 + length


def read_safetensors_header(path):
    """The JSON header of a safetensors file, as a dict: name -> {dtype, shape, data_offsets}.

    Reads only the header, however large the file.
    """
    path = Path(path)
    with path.open("rb") as file:
        start = file.read(8)
        length = struct.unpack("<Q", start)[0] if len(start) == 8 else 0
        data = start + file.read(min(length, _LARGEST_HEADER))
    return _header_of(data, path)[0]


def read_safetensors(path, sha256=None):
    """Every tensor of a safetensors file, name -> tensor, sharing one buffer with no copy.

    With ``sha256`` (a hex digest) the file's bytes are hashed first, and a
    file whose digest differs raises ``ValueError`` naming both digests: a
    corrupted or substituted file never loads silently. The ``__metadata__``
    entry is left out.
    """
    if sys.byteorder != "little":  # the arrays are little-endian; a view would read them wrong
        raise RuntimeError("read_safetensors reads little-endian arrays in place: this machine is big-endian")
    path = Path(path)
    data = bytearray(path.stat().st_size)  # writable, so torch.frombuffer can share it without a warning
    with path.open("rb") as file:
        file.readinto(data)
    if sha256 is not None:
        digest = hashlib.sha256(data).hexdigest()
        if digest != sha256:
            raise ValueError(f"{path} has SHA-256 {digest}, expected {sha256}: the file is corrupted or is not "
                             f"the one expected")
    header, start = _header_of(data, path)
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = DTYPES.get(entry.get("dtype"))
        if dtype is None:
            raise ValueError(f"{path}: tensor {name!r} has dtype {entry.get('dtype')!r}, expected one of "
                             f"{sorted(DTYPES)}")
        begin, end = entry["data_offsets"]
        shape = entry["shape"]
        count = 1
        for size in shape:
            count *= size
        if end - begin != count * dtype.itemsize or start + end > len(data):
            raise ValueError(f"{path}: tensor {name!r} of shape {tuple(shape)} and dtype {entry['dtype']} "
                             f"needs {count * dtype.itemsize} bytes, its offsets give {end - begin}")
        if count == 0:
            tensors[name] = torch.empty(shape, dtype=dtype)
            continue
        flat = torch.frombuffer(data, dtype=dtype, count=count, offset=start + begin)
        tensors[name] = flat.reshape(shape)
    return tensors
