"""External data, read only from regular files inside the model's folder.

A tensor stored outside the .onnx file names its file by a `location` relative to the model's
folder, with an optional `offset` and `length`. The location is untrusted: `../` steps, an
absolute path, a symbolic link leading elsewhere, a device (`/dev/zero`), a FIFO or a `/proc`
file would make the importer read, and copy into the weights it writes, data the model's author
had no right to. Every location is resolved to its real path, which must lie inside the
model's folder and be a regular file, and the bytes claimed must lie inside that file and be
exactly what the tensor's dims and type need. This covers the tensors of `Constant` nodes too,
which onnx's own loader leaves to be resolved against the current directory.
"""
from __future__ import annotations

import os
import stat

import onnx
from onnx import TensorProto

from .errors import ImportFailure, shown
from .limits import Budget
from .validate import ITEMSIZE, elements, tensor_text, tensors


class Refused(Exception):
    """A location or range that may not be read; the message says why."""


def _int_entry(entries: dict[str, str], key: str) -> int | None:
    if key not in entries:
        return None
    try:
        value = int(entries[key])
    except ValueError:
        raise Refused(f"{key} {shown(entries[key])!r} is not a number") from None
    if value < 0:
        raise Refused(f"{key} {value} is negative")
    return value


def _resolve(location: str, folder: str) -> str:
    """The real path of `location` inside `folder` (itself a real path)."""
    if not location:
        raise Refused("the location is empty")
    if "\0" in location:
        raise Refused(f"location '{shown(location)}' holds a NUL character")
    if os.path.isabs(location):
        raise Refused(f"location '{shown(location)}' is an absolute path; external data must be relative to "
                      f"the model's folder")
    path = os.path.realpath(os.path.join(folder, location))
    if os.path.commonpath([path, folder]) != folder:
        raise Refused(f"location '{shown(location)}' resolves to '{shown(path)}', outside the model's folder "
                      f"'{shown(folder)}'")
    return path


def read(t: TensorProto, folder: str, budget: Budget, what: str) -> bytes:
    """The bytes of external tensor `t`, read from inside `folder` after every check."""
    entries = {e.key: e.value for e in t.external_data}
    if "location" not in entries:
        raise Refused("external data without a location")
    path = _resolve(entries["location"], folder)
    offset = _int_entry(entries, "offset") or 0
    length = _int_entry(entries, "length")
    location = shown(entries["location"])
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer before fstat refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise Refused(f"location '{location}' cannot be opened ({e.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"location '{location}' is not a regular file")
        size = st.st_size
        if length is None:
            if offset > size:
                raise Refused(f"offset {offset} is past the end of '{location}' ({size} bytes)")
            length = size - offset
        if offset + length > size:
            raise Refused(f"offset {offset} + length {length} is past the end of '{location}' ({size} bytes)")
        need = elements(t) * ITEMSIZE[t.data_type]
        if length != need:
            raise Refused(f"{length} bytes of external data in '{location}', but {tensor_text(t)} needs {need}")
        budget.charge(what, elements(t), ITEMSIZE[t.data_type])
        parts, done = [], 0
        while done < length:  # one read returns at most about 2 GiB
            part = os.pread(fd, min(length - done, 1 << 30), offset + done)
            if not part:
                break
            parts.append(part)
            done += len(part)
        data = b"".join(parts)
    except OSError as e:
        raise Refused(f"location '{location}' cannot be read ({e.strerror})") from None
    finally:
        os.close(fd)
    if len(data) != length:
        raise Refused(f"'{location}' ended after {len(data)} of {length} bytes")
    return data


def load(model: onnx.ModelProto, model_path: str, budget: Budget) -> None:
    """Reads every external tensor of `model` (initializers, attribute tensors) into the model,
    from the folder of `model_path`; refuses the import listing every tensor that cannot be
    read, with its location and why."""
    folder = os.path.realpath(os.path.dirname(os.path.abspath(model_path)))
    problems = []
    for what, t in tensors(model):
        if t.data_location != TensorProto.EXTERNAL or t.data_type not in ITEMSIZE:
            continue
        try:
            data = read(t, folder, budget, what)
        except Refused as e:
            problems.append(f"{what}: {e}")
            continue
        t.raw_data = data
        del t.external_data[:]
        t.data_location = TensorProto.DEFAULT
    if problems:
        raise ImportFailure(f"{shown(model_path)}: external data refused:", problems)
