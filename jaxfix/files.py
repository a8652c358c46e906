"""Source files in and out: decoded as Python itself decodes them, written back byte-for-byte in the same
encoding (BOM and line endings kept), atomically, and only when the content changed."""

from __future__ import annotations

import errno
import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path


class SourceError(Exception):
    """A file jaxfix cannot work on; the message is the one-line reason shown to the user."""


@dataclass(frozen=True)
class SourceFile:
    text: str
    encoding: str  # as Python names it; "utf-8-sig" when the file starts with a BOM

    def encode(self, text: str) -> bytes:
        return text.encode(self.encoding)


def decode(raw: bytes) -> SourceFile:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as error:
        raise SourceError(f"invalid encoding declaration: {error}") from None
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as error:
        raise SourceError(
            f"cannot decode as {encoding}: byte 0x{raw[error.start]:02x} at offset {error.start} "
            "(declare the encoding with a coding comment, or save the file as UTF-8)"
        ) from None
    except LookupError:
        raise SourceError(f"unknown encoding {encoding!r}") from None
    return SourceFile(text, encoding)


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise SourceError(f"cannot read: {error.strerror or error}") from None


def read_source(path: Path) -> SourceFile:
    return decode(read_bytes(path))


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write `data` atomically (a temporary file in the same folder, then a rename) unless the file already
    holds exactly these bytes. The file's permission bits are kept; a read-only file raises PermissionError.
    Returns whether it wrote."""
    try:
        if path.read_bytes() == data:
            return False
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = 0o644
    else:
        # The rename below would replace a read-only file (only the folder's permissions count), and root may
        # write anything: a file that nobody may write is left alone, as an editor would.
        if not mode & 0o222 or not os.access(path, os.W_OK):
            raise PermissionError(errno.EACCES, "read-only file")
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".jaxfix-tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
    return True


class Resolver:
    """`Path.resolve()` for many files in few folders: a file that is not a symbolic link resolves to its folder,
    resolved once, and its name, so each file costs one `lstat` instead of one per component of its path (1,401
    files: 4 resolutions each in a run, most of a warm run's file-system time). For one run: folders are
    remembered."""

    def __init__(self) -> None:
        self._folders: dict[str, Path] = {}

    def __call__(self, path: str | Path) -> Path:
        text = os.fspath(path)
        if ".." in text.split(os.sep) or os.path.islink(text):  # `link/..` and links: as Path.resolve does them
            return Path(text).resolve()
        folder, name = os.path.split(os.path.abspath(text))
        if not name:
            return Path(text).resolve()
        real = self._folders.get(folder)
        if real is None:
            real = self._folders[folder] = Path(folder).resolve()
        return real / name
