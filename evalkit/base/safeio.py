"""Writers that never destroy: atomic files, one writer per output, outputs that never replace inputs.

Every file evalkit writes goes to a unique temporary name in the same folder and is renamed over the target
only when complete (a kill leaves the old file or the new one, never half of one); a second process writing
the same output is refused with one line naming the first; a folder is cleared only when evalkit created it
(a marker file inside it says so).

Examples
--------
>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> write_text(d / "a.txt", "hello")
PosixPath('...a.txt')
>>> (d / "a.txt").read_text()
'hello'
>>> try:
...     refuse_output_over_inputs(d / "a.txt", [d / "a.txt"], what="--output")
... except OutputError as e:
...     print(str(e).split(": ", 1)[1])
--output is the input file ...a.txt; refusing to overwrite it (choose another output path)
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import threading
from pathlib import Path
from typing import Iterable, Iterator

OWNED_MARKER = ".evalkit-owned"


class OutputError(OSError):
    """An output that cannot be written safely. The message names the path and what to do."""


def _tmp_name(path: Path) -> Path:
    # pid and random suffix: two processes (or threads) never share a temporary name
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


# the most a name evalkit writes beside an output adds to it: the temporary name ".NAME.PID.8HEX.tmp" (a pid of up
# to 7 digits); the lock ".NAME.lock" and the parts folder "NAME.parts" add less
NAME_EXTRA = len(".") + len(".1234567.") + 8 + len(".tmp")


def check_folder_writable(path: str | Path) -> None:
    """Refuse an output whose folder cannot be made because a part of its path is a file, before any work.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); open(os.path.join(d, "afile"), "w").close()
    >>> check_folder_writable(os.path.join(d, "afile", "out.parquet"))
    Traceback (most recent call last):
    ...
    evalkit.base.safeio.OutputError: ...afile/out.parquet: cannot be written: ...afile is a file, not a folder
    """
    path = Path(path)
    for folder in reversed(path.parents):
        if folder.exists() and not folder.is_dir():
            raise OutputError(f"{path}: cannot be written: {folder} is a file, not a folder")


def check_name_fits(path: str | Path) -> None:
    """Refuse an output whose name, with the temporary suffix evalkit adds, is longer than the file system allows,
    before any work: otherwise the run fails at its last step ([Errno 36]) after all the scoring.

    >>> check_name_fits("/tmp/" + "x" * 240 + ".csv")
    Traceback (most recent call last):
    ...
    evalkit.base.safeio.OutputError: /tmp/xxx...xxx.csv: the file name is 244 bytes; evalkit first writes it under a name 22 bytes longer and this file system allows 255: shorten it to 233 bytes or fewer
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    try:
        limit = os.pathconf(folder if folder.exists() else ".", "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # no such query here (Windows): the common limit
        limit = 255
    size = len(path.name.encode("utf-8"))
    if size + NAME_EXTRA > limit:
        shown = path.name if size <= 40 else f"{path.name[:3]}...{path.name[-7:]}"
        raise OutputError(f"{folder / shown if str(path.parent) not in ('', '.') else shown}: the file name is {size} "
                          f"bytes; evalkit first writes it under a name {NAME_EXTRA} bytes longer and this file "
                          f"system allows {limit}: shorten it to {limit - NAME_EXTRA} bytes or fewer")


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it is fsynced and renamed onto ``path``.

    On any error (disk full included) the temporary file is removed and ``path`` is untouched; a full disk
    raises :class:`OutputError` naming ``path``. While it is open, ``path`` is locked (:func:`output_lock`):
    another process writing the same file is refused.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _tmp_name(path)
    with output_lock(path):
        _remove_stale_temporaries(path)
        yield from _written(path, tmp)


def _remove_stale_temporaries(path: Path) -> None:
    """Temporary files of ``path`` left by a killed writer (its pid no longer runs) are removed."""
    for p in path.parent.glob(f".{path.name}.*.tmp*"):
        pid = p.name[len(path.name) + 2:].split(".", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid)):
            _silent_unlink(p)


def _written(path: Path, tmp: Path) -> Iterator[Path]:
    try:
        yield tmp
        if tmp.exists():
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        _silent_unlink(tmp)
        if e.errno == errno.ENOSPC:
            raise OutputError(f"{path}: no space left on device while writing it; nothing was changed "
                              "(free space or choose another folder)") from None
        raise
    except BaseException:
        _silent_unlink(tmp)
        raise


def _silent_unlink(p: Path) -> None:
    with contextlib.suppress(OSError):
        p.unlink()


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns ``path``."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
    return Path(path)


def write_text(path: str | Path, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically; returns ``path``."""
    return write_bytes(path, text.encode("utf-8"))


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def refuse_output_over_inputs(output: str | Path | None, inputs: Iterable[str | Path | None], *,
                              what: str = "output") -> None:
    """Raise :class:`OutputError` when ``output`` is (resolved, symlinks included) one of ``inputs``."""
    if output is None:
        return
    out = Path(output)
    for inp in inputs:
        if inp is None:
            continue
        if _same_file(out, Path(inp)):
            raise OutputError(f"{output}: {what} is the input file {inp}; refusing to overwrite it "
                              "(choose another output path)")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _holder(lock: Path) -> int:
    try:
        return int(lock.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return -1


def lock_path(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(f".{output.name}.lock")


# locks this process holds, by resolved lock path -> depth: a run writing its own locked output re-enters its lock
# (process state by nature: an flock belongs to the process that took it)
_HELD: dict[str, int] = {}
_OPEN: dict[str, tuple[int, Path]] = {}  # the same locks' descriptors and files, for release_abandoned
_HELD_GUARD = threading.Lock()


def release_abandoned() -> list[Path]:
    """Remove and unlock every lock this process still holds; the lock files removed.

    For a command stopped by a signal: the exception a stop raises can land inside a lock's own release, before
    it removes its file; the command's last step calls this so that no lock file outlives the process."""
    with _HELD_GUARD:
        gone = []
        for key, (fd, lock) in list(_OPEN.items()):
            _silent_unlink(lock)
            os.close(fd)
            gone.append(lock)
        _OPEN.clear()
        _HELD.clear()
        return gone


def _record_holder(fd: int, lock: Path, output: str | Path) -> None:
    """Write this process's pid into the lock it holds; a disk too full for that is refused naming the output, and
    the lock is removed (nothing is left behind)."""
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    except OSError as e:
        _silent_unlink(lock)
        os.close(fd)
        if e.errno == errno.ENOSPC:
            raise OutputError(f"{output}: no space left on device before writing it; nothing was changed "
                              "(free space or choose another folder)") from None
        raise


def _take(lock: Path, output: str | Path) -> int:
    """An exclusive ``flock`` on ``lock`` (created if absent), or :class:`OutputError` naming the holder.

    The kernel releases an flock when its process dies, so a killed writer never blocks the next one; the file
    left behind is reused. After locking, the path must still name the locked file (a releasing writer may have
    unlinked it in between): otherwise lock the new file.
    """
    for _ in range(5):
        fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            other = _holder(lock)
            named = f"pid {other}" if other > 0 else "pid unknown"
            raise OutputError(f"{output}: another evalkit process ({named}) is writing this output; wait for it "
                              "to finish") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            same = False
        if same:
            _record_holder(fd, lock, output)
            return fd
        os.close(fd)  # unlinked under us by a writer that just finished: lock the file now at that path
    raise OutputError(f"{output}: could not take the lock {lock}")  # pragma: no cover - five races lost in a row


@contextlib.contextmanager
def output_lock(output: str | Path) -> Iterator[None]:
    """Hold ``.NAME.lock`` beside ``output`` while writing it; a second writer (another process) is refused with
    one line naming the first one's pid. Re-entrant within a process; a killed writer's lock is free again."""
    lock = lock_path(output)
    lock.parent.mkdir(parents=True, exist_ok=True)
    key = str(lock.resolve())
    fd, counted = None, False
    try:
        # a stop (SIGTERM, Ctrl-C) raises wherever the code is: held back here, it lands before the lock file is
        # made or after it is recorded (then the finally below removes it), never in between
        with _stops_held_back(), _HELD_GUARD:
            if _HELD.get(key):
                _HELD[key] += 1
            else:
                fd = _take(lock, output)
                _HELD[key] = 1
                _OPEN[key] = (fd, lock)
            counted = True
        yield
    finally:
        if counted:
            with _stops_held_back(), _HELD_GUARD:
                if key in _HELD:  # (release_abandoned may have released it already)
                    _HELD[key] -= 1
                    if not _HELD[key]:
                        del _HELD[key]
                        fd, _ = _OPEN.pop(key)
                        _silent_unlink(lock)  # before unlocking: a waiter then sees a new file, not this one
                        os.close(fd)  # closing releases the flock


# A stop's handler runs in the main thread, but the kernel may hand the signal to any thread (torch's and the
# progress bar's among them), so a signal mask alone does not keep it out of a lock's bookkeeping: the handler
# asks stop_or_defer, which holds the stop until the section ends
_SECTION = {"depth": 0, "pending": None}


@contextlib.contextmanager
def _stops_held_back() -> Iterator[None]:
    """SIGINT and SIGTERM held back while the block runs, and delivered as soon as it ends: blocked for this thread
    where the platform can block them, and deferred by :func:`stop_or_defer` when the handler runs meanwhile."""
    import signal

    main = threading.current_thread() is threading.main_thread()
    can_mask = hasattr(signal, "pthread_sigmask")
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM}) if can_mask else None
    if main:
        _SECTION["depth"] += 1
    try:
        yield
    finally:
        if main:
            _SECTION["depth"] -= 1
        if can_mask:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
        if main and not _SECTION["depth"] and _SECTION["pending"] is not None:
            stop, _SECTION["pending"] = _SECTION["pending"], None
            raise stop()


def stop_or_defer(stop: type[BaseException]) -> None:
    """For a signal handler: raise ``stop`` now, or, inside a lock's bookkeeping, as soon as it is done (a stop
    raised between creating a lock file and recording it would leave the file behind)."""
    if _SECTION["depth"] and threading.current_thread() is threading.main_thread():
        _SECTION["pending"] = stop
        return
    raise stop()


def owned_dir(path: str | Path, *, clear: bool = False) -> Path:
    """Create ``path`` as an evalkit-owned folder (marker inside), or reuse one evalkit made.

    ``clear=True`` empties it first. A folder that exists without the marker and is not empty belongs to
    the user: :class:`OutputError`, and nothing is touched.
    """
    import shutil

    path = Path(path)
    marker = path / OWNED_MARKER
    if path.exists():
        if not path.is_dir():
            raise OutputError(f"{path}: exists and is not a folder; refusing to replace it")
        if not marker.exists() and any(path.iterdir()):
            raise OutputError(f"{path}: is a folder evalkit did not create (no {OWNED_MARKER} inside); "
                              "refusing to write into or clear it (move it away or choose another name)")
        if clear:
            for child in path.iterdir():
                if child.name == OWNED_MARKER:
                    continue
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
    path.mkdir(parents=True, exist_ok=True)
    marker.touch()
    return path
