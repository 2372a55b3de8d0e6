"""The embedded artifact store: a local folder, safe across threads and processes.

Writes go to a temporary file first and are moved into place atomically; ``create`` uses a hard link
so that exactly one of several concurrent writers wins; ETags are content hashes so a condition
compares what is really stored. A file's hash is remembered by its identity (inode, size, change
times) once the file is older than ``RACY_SECONDS``, so asking for the ETag of a large, settled
blob (the vector index) costs a stat, not a read and a hash of the whole file.
"""

from __future__ import annotations

import builtins
import fcntl
import hashlib
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from shared.storage import LeaseHeld, NotFound, PreconditionFailed

# A write within the same clock tick can leave size and times unchanged (and a freed inode can be
# reused), so a file changed this recently is always hashed again (git's "racy" rule).
RACY_SECONDS = 2.0
_ETAG_CACHE_LIMIT = 4096


def _etag(data: bytes) -> str:
    return '"' + hashlib.md5(data, usedforsecurity=False).hexdigest() + '"'


class LocalFolderStore:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self._etags: dict[Path, tuple[tuple[int, int, int, int], str]] = {}

    def __repr__(self) -> str:
        return f"LocalFolderStore({str(self.root)!r})"

    # -- paths ---------------------------------------------------------------------------------
    def _file(self, path: str) -> Path:
        if not path or path.startswith("/") or "\\" in path:
            raise ValueError(f"invalid artifact path: {path!r}")
        parts = path.split("/")
        if any(p in ("", ".", "..") for p in parts):
            raise ValueError(f"invalid artifact path: {path!r}")
        full = self.root.joinpath(*parts)
        return full

    @contextmanager
    def _locked(self, file: Path) -> Iterator[None]:
        file.parent.mkdir(parents=True, exist_ok=True)
        lock = file.parent / f".{file.name}.lock"
        with open(lock, "a+b") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _tmp(self, file: Path, data: bytes) -> str:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{file.name}.", suffix=".tmp", dir=file.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        return tmp

    # -- reads ---------------------------------------------------------------------------------
    def get(self, path: str) -> bytes:
        try:
            return self._file(path).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise NotFound(path) from None

    def get_with_etag(self, path: str) -> tuple[bytes, str]:
        data = self.get(path)
        return data, _etag(data)

    def etag(self, path: str) -> str | None:
        file = self._file(path)
        try:
            before = _identity(file)
            cached = self._etags.get(file)
            if cached is not None and cached[0] == before:
                return cached[1]
            tag = _etag(file.read_bytes())
            settled = time.time() - before[2] / 1e9 > RACY_SECONDS
            if settled and _identity(file) == before:  # unchanged while it was read
                if len(self._etags) >= _ETAG_CACHE_LIMIT:
                    self._etags.clear()
                self._etags[file] = (before, tag)
            return tag
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def exists(self, path: str) -> bool:
        return self._file(path).is_file()

    def list(self, prefix: str) -> list[str]:
        base = self.root
        out: list[str] = []
        # walk only the deepest folder the prefix names completely
        folder = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        start = self._file(folder) if folder else base
        if not start.is_dir():
            return []
        for dirpath, dirnames, filenames in os.walk(start):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for name in filenames:
                if name.startswith("."):
                    continue
                rel = Path(dirpath, name).relative_to(base).as_posix()
                if rel.startswith(prefix):
                    out.append(rel)
        return sorted(out)

    def children(self, prefix: str) -> builtins.list[str]:  # ``list`` is the method above
        """Names directly under a folder-like prefix ('runs/' -> ['run-1', 'run-2'])."""
        folder = self._file(prefix.rstrip("/")) if prefix.strip("/") else self.root
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))

    # -- writes --------------------------------------------------------------------------------
    def put(self, path: str, data: bytes, content_type: str | None = None) -> str:
        file = self._file(path)
        tmp = self._tmp(file, data)
        os.replace(tmp, file)
        return _etag(data)

    def create(self, path: str, data: bytes, content_type: str | None = None) -> bool:
        file = self._file(path)
        tmp = self._tmp(file, data)
        try:
            os.link(tmp, file)
            return True
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)

    def replace_if_match(
        self, path: str, data: bytes, etag: str, content_type: str | None = None
    ) -> str:
        file = self._file(path)
        with self._locked(file):
            current = self.etag(path)
            if current is None:
                raise NotFound(path)
            if current != etag:
                raise PreconditionFailed(f"{path}: etag {etag} is stale (now {current})")
            return self.put(path, data, content_type)

    def delete(self, path: str) -> bool:
        try:
            self._file(path).unlink()
            return True
        except FileNotFoundError:
            return False

    @contextmanager
    def lease(self, path: str, seconds: int = 60) -> Iterator[LocalLease]:
        """An exclusive, expiring claim on ``path`` (the blob-lease equivalent); the handle's
        ``renew()`` pushes the expiry ``seconds`` further, as a blob lease renewal does."""
        file = self._file(path)
        marker = file.parent / f".{file.name}.lease"
        marker.parent.mkdir(parents=True, exist_ok=True)
        with self._locked(marker):
            try:
                expires = float(marker.read_text() or "0")
            except FileNotFoundError:  # free, or released just now (the release is not locked)
                expires = 0.0
            except ValueError:
                expires = 0.0
            if expires > time.time():
                raise LeaseHeld(path)
            marker.write_text(str(time.time() + seconds))
        try:
            yield LocalLease(marker, seconds)
        finally:
            marker.unlink(missing_ok=True)


class LocalLease:
    """The handle of a held local lease."""

    def __init__(self, marker: Path, seconds: int) -> None:
        self.marker = marker
        self.seconds = seconds

    def renew(self) -> None:
        self.marker.write_text(str(time.time() + self.seconds))


def _identity(file: Path) -> tuple[int, int, int, int]:
    st = file.stat()
    if not stat.S_ISREG(st.st_mode):  # one stat, not a second one for is_file
        raise IsADirectoryError(str(file))
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
