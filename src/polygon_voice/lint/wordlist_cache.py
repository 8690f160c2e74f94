"""wordfreq's word lists kept as tries on disk, so a fresh process opens one in milliseconds.

Reading a large wordfreq list (gzip, msgpack, then a dict of every word) takes 1-4 s of CPU
per language, which a one-off `polygon lint` pays in full. With marisa-trie and platformdirs
installed (both dependencies of the lemmatiser's own trie cache), the word -> bucket index
of each list is saved once as a marisa RecordTrie in the user's cache folder and read back
on later runs instead of the list.

The file name carries a fingerprint of the source list (its path, size and modification
time) and of this layout, so a new wordfreq release, which rewrites its lists, gets a new
file. The file starts with a digest of the trie's bytes: a file that is truncated, altered
or not a trie is ignored and rebuilt, never read as answers. A cache folder that cannot be
written only costs the time of reading the list, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

# Bumped whenever what is stored changes, so older files are not read as the new layout.
LAYOUT = 1
# Each word's record: its bucket as an unsigned 16-bit integer (wordfreq's lists have ~800).
RECORD = "<H"
MAX_BUCKET = 0xFFFF
DIGEST_BYTES = 32
SUFFIX = ".trie"


class TrieBuckets(Mapping[str, int]):
    """Read-only word -> bucket view over a RecordTrie."""

    __slots__ = ("_trie",)

    def __init__(self, trie: Any) -> None:
        self._trie = trie

    def get(self, word: str, default: Any = None) -> Any:  # the lookup of every lint
        records = self._trie.get(word)
        return int(records[0][0]) if records else default

    def __getitem__(self, word: str) -> int:
        bucket = self.get(word)
        if bucket is None:
            raise KeyError(word)
        return int(bucket)

    def __iter__(self) -> Iterator[str]:
        return iter(self._trie.iterkeys())

    def __len__(self) -> int:
        return len(self._trie)


def cache_folder() -> Path | None:
    """Where the tries are kept: the user's cache folder; None without platformdirs."""
    if importlib.util.find_spec("platformdirs") is None:
        return None
    platformdirs: Any = importlib.import_module("platformdirs")
    return Path(platformdirs.user_cache_dir("polygon-voice")) / "wordfreq"


def cached_buckets(
    source: Path, read_list: Callable[[], dict[str, int] | None]
) -> Mapping[str, int] | None:
    """The word -> bucket index of the list at `source`: from its trie when one is cached
    and intact, else from `read_list()` (then saved as a trie for the next process)."""
    marisa = _marisa_trie()
    target = cache_path(source)
    if marisa is None or target is None:
        return read_list()
    trie = load_trie(target, marisa)
    if trie is not None:
        return TrieBuckets(trie)
    index = read_list()
    if index is not None and max(index.values(), default=0) <= MAX_BUCKET:
        save_trie(marisa.RecordTrie(RECORD, ((w, (b,)) for w, b in index.items())), target)
    return index  # this process already holds the dict: its lookups are the fastest


def cache_path(source: Path) -> Path | None:
    """The trie file for the list at `source`, named after a fingerprint of the list."""
    folder = cache_folder()
    try:
        stat = source.stat()
    except OSError:
        return None
    if folder is None:
        return None
    identity = f"{source.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0{LAYOUT}"
    fingerprint = hashlib.blake2b(identity.encode(), digest_size=8).hexdigest()
    return folder / f"{_list_name(source)}-{fingerprint}{SUFFIX}"


def load_trie(target: Path, marisa: Any) -> Any | None:
    """The trie saved at `target`, or None when it is missing, unreadable or not intact."""
    try:
        data = target.read_bytes()
    except OSError:
        return None
    digest, payload = data[:DIGEST_BYTES], data[DIGEST_BYTES:]
    if not payload or _digest(payload) != digest:
        return None
    try:
        return marisa.RecordTrie(RECORD).frombytes(payload)
    except Exception:  # marisa's errors have no documented types; the list is read instead
        return None


def save_trie(trie: Any, target: Path) -> bool:
    """Write `trie` to `target` atomically (a reader sees the old file or the whole new
    one) and remove older versions of the same list; False when the folder is unwritable."""
    payload = trie.tobytes()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(_digest(payload) + payload)
        os.replace(temporary, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False
    _remove_older_versions(target)
    return True


def _remove_older_versions(target: Path) -> None:
    stem = target.name.rsplit("-", 1)[0]
    for old in target.parent.glob(f"{stem}-*{SUFFIX}"):
        if old != target:
            with contextlib.suppress(OSError):
                old.unlink()


def _list_name(source: Path) -> str:
    name = source.name
    for ending in (".msgpack.gz", ".gz"):
        if name.endswith(ending):
            return name[: -len(ending)]
    return name


def _digest(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=DIGEST_BYTES).digest()


def _marisa_trie() -> Any | None:
    if importlib.util.find_spec("marisa_trie") is None:
        return None
    return importlib.import_module("marisa_trie")
