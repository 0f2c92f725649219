"""Writers that never destroy: kills mid-write, a full disk, a second writer, folders evalkit did not make."""
from __future__ import annotations

import hashlib
import os
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit import cli
from evalkit.base.safeio import OutputError, atomic_path, output_lock, owned_dir, write_text

EVALKIT = [sys.executable, "-m", "evalkit.cli"]


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _results(path: Path, n: int) -> Path:
    rng = np.random.default_rng(3)
    pd.DataFrame({"id": [f"q{i // 2}" for i in range(n)], "system": ["a", "b"] * (n // 2),
                  "hallucination": rng.random(n), "relevance": rng.random(n), "completeness": rng.random(n),
                  "correct": rng.integers(0, 2, n), "answer": ["An answer long enough to take a while. " * 4] * n}
                 ).to_csv(path, index=False)
    return path


def _profile(path: Path) -> Path:
    path.write_text("evalkit_profile: 2\nmetrics:\n  hallucination: {threshold: 0.5, flag: above, inclusive: true}\n")
    return path


def _kill_at(argv: list[str], cwd: Path, delay: float) -> None:
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    p.send_signal(signal.SIGKILL)
    p.wait()


@pytest.mark.parametrize("command", ["verdict", "compare"])
def test_killed_mid_write_leaves_old_or_new_never_truncated(tmp_path, command):
    """SIGKILL at spread points of the run (reference run's duration x 0.3 .. 0.95): the output is the old file's
    bytes or the complete new file's, whichever, never a cut-short file that still parses."""
    _results(tmp_path / "r.csv", 12000)
    _profile(tmp_path / "p.yaml")
    argv = EVALKIT + ({"verdict": ["verdict", "r.csv", "--thresholds", "p.yaml", "-o", "out.csv"],
                       "compare": ["compare", "r.csv", "--a", "a", "--b", "b", "--metrics", "hallucination",
                                   "--resamples", "50", "-o", "out.csv"]}[command])
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=tmp_path, check=True, capture_output=True)
    took = time.perf_counter() - t0
    new = (tmp_path / "out.csv").read_bytes()
    old = b"the user's previous result\n"
    for frac in (0.3, 0.6, 0.8, 0.95):
        (tmp_path / "out.csv").write_bytes(old)
        _kill_at(argv, tmp_path, took * frac)
        got = (tmp_path / "out.csv").read_bytes()
        assert got in (old, new), f"killed at {frac:.2f} of the run: {len(got)} bytes, neither old nor new"
    # a later run takes over the killed writer's lock and cleans its temporaries
    subprocess.run(argv, cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "out.csv").read_bytes() == new
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith((".tmp", ".lock"))]


def test_killed_report_leaves_every_file_complete(tmp_path):
    """A report killed at several points: each of its files is absent, or complete (parses / ends its format)."""
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"question": f"What is fee {i}?", "answer": f"The fee is ${i}.",
                                        "contexts": [f"The fee is ${i} a month."]}) + "\n" for i in range(6)))
    (tmp_path / "e.yaml").write_text("name: k\ndata: d.jsonl\nmetrics: [relevance, completeness]\n"
                                     "notebooks: [00_quickstart, 08_report]\n")
    argv = EVALKIT + ["report", "e.yaml", "--resamples", "20"]
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=tmp_path, check=True, capture_output=True)
    took = time.perf_counter() - t0
    out = tmp_path / "reports" / "k"
    for frac in (0.5, 0.9):
        _kill_at(argv, tmp_path, took * frac)
        for f in out.rglob("*"):
            # a killed writer's own temporaries (".NAME.PID.HEX.tmp", and papermill's ".NAME.PID.HEX.tmp.ipynb"
            # beside it), never the files themselves: the next run removes them
            if ".tmp" in f.name or f.name.endswith(".lock") or not f.is_file():
                continue
            body, where = f.read_bytes(), f"{f.relative_to(out)}, killed at {frac:.1f} of the run"
            if f.suffix == ".json" or f.suffix == ".ipynb":
                try:
                    json.loads(body)
                except ValueError:
                    pytest.fail(f"{where}: not complete JSON ({len(body)} bytes)")
            elif f.suffix == ".parquet":
                pd.read_parquet(f)
            elif f.suffix == ".html":
                assert body.rstrip().endswith(b"</html>"), where
            elif f.suffix == ".png":
                assert body.endswith(b"IEND\xaeB`\x82"), where
    subprocess.run(argv, cwd=tmp_path, check=True, capture_output=True)  # the stale lock is taken over
    assert _leftovers(out) == []  # ... and the killed runs' temporaries removed


def _leftovers(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if ".tmp" in p.name or p.name.endswith(".lock"))


def _terminate_when(argv: list[str], cwd: Path, appeared, patience: float = 240.0) -> tuple[int, str]:
    """Start ``argv``; as soon as ``appeared()`` is true, SIGTERM it; its exit code and stderr."""
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + patience
    while not appeared() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert p.poll() is None, "the run ended before the moment to stop it came"
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=120)
    return p.returncode, err


def test_sigterm_of_report_leaves_no_temporary_notebook_or_lock(tmp_path):
    """SIGTERM while papermill writes a notebook: the temporary notebook and both locks go, as on Ctrl-C."""
    (tmp_path / "d.csv").write_text("question,answer,contexts\nWhat is the fee?,40 euros.,The fee is 40 euros.\n")
    # a second notebook keeps the run alive well past the first one's temporary file, however late a busy machine
    # lets this test see it (with one notebook the run could end between the look and the signal)
    (tmp_path / "e.yaml").write_text("name: t\ndata: d.csv\nnotebooks: [00_quickstart, 01_relevance]\n")
    notebooks = tmp_path / "reports" / "t" / "notebooks"
    rc, err = _terminate_when(EVALKIT + ["report", "e.yaml"], tmp_path,
                              lambda: notebooks.is_dir() and any(notebooks.glob(".*.tmp.ipynb")))
    assert rc == 143, err
    assert "evalkit: terminated (SIGTERM)" in err
    assert _leftovers(tmp_path) == []


def test_sigterm_in_an_asyncio_task_still_stops_the_run(tmp_path):
    """The report's notebook client runs background asyncio tasks (a kernel-alive poll every second); a SIGTERM
    whose handler runs inside one must still stop the run with 143, not be kept by the task and lost."""
    script = tmp_path / "s.py"
    script.write_text(
        "import asyncio, os, signal\n"
        "from evalkit import cli\n"
        "async def poll():\n"
        "    os.kill(os.getpid(), signal.SIGTERM)  # the handler runs in this task's step\n"
        "    sum(range(1000))\n"
        "async def run():\n"
        "    asyncio.ensure_future(poll())  # nobody awaits it, as nbclient's kernel-alive poll\n"
        "    await asyncio.sleep(0.5)\n"
        "    print('ran on')\n"
        "with cli._terminated_like_interrupted():\n"
        "    asyncio.new_event_loop().run_until_complete(run())\n"
        "print('finished')\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (143, ""), (r.returncode, r.stdout, r.stderr)


def test_sigterm_of_score_leaves_no_lock(tmp_path):
    rows = "".join(f"What is fee {i}?,The fee is {i} euros a month.,The fee is {i} euros a month.\n" for i in range(400))
    (tmp_path / "d.csv").write_text("question,answer,contexts\n" + rows)
    lock = tmp_path / ".out.parquet.lock"
    rc, err = _terminate_when(EVALKIT + ["score", "d.csv", "-o", "out.parquet", "--chunk-size", "10"], tmp_path,
                              lock.exists)
    assert rc == 143, err
    assert _leftovers(tmp_path) == []
    assert not (tmp_path / "out.parquet").exists()


@pytest.fixture()
def small_disk(tmp_path):
    """A real 24 KiB filesystem (tmpfs; the tests run as root in CI)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24k", "tmpfs", str(disk)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    yield disk
    subprocess.run(["umount", str(disk)], check=False)


def test_disk_full_names_the_path_and_leaves_nothing(small_disk, tmp_path, monkeypatch, capsys):
    _results(tmp_path / "r.csv", 400)
    _profile(tmp_path / "p.yaml")
    (small_disk / "out.csv").write_text("old\n")
    monkeypatch.chdir(tmp_path)
    rc = cli.main(["verdict", "r.csv", "--thresholds", "p.yaml", "-o", str(small_disk / "out.csv")])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith(f"evalkit: error: {small_disk / 'out.csv'}: no space left on device"), err
    assert sorted(p.name for p in small_disk.iterdir()) == ["out.csv"]
    assert (small_disk / "out.csv").read_text() == "old\n"


def test_disk_full_before_the_first_write_names_the_path_and_leaves_no_lock(small_disk, tmp_path, monkeypatch,
                                                                           capsys):
    (tmp_path / "d.csv").write_text("question,answer,contexts\nWhat is the fee?,40 euros.,The fee is 40 euros.\n")
    fd = os.open(small_disk / "fill", os.O_CREAT | os.O_WRONLY)
    try:  # every block taken: even the lock's pid cannot be written
        with pytest.raises(OSError, match="No space left"):
            while True:
                os.write(fd, b"\0" * 1024)
    finally:
        os.close(fd)
    monkeypatch.chdir(tmp_path)
    rc = cli.main(["score", "d.csv", "-o", str(small_disk / "out.parquet"), "--metrics", "relevance"])
    err = capsys.readouterr().err
    assert rc == 2
    assert f"evalkit: error: {small_disk / 'out.parquet'}: no space left on device" in err, err
    assert sorted(p.name for p in small_disk.iterdir()) == ["fill"]


def test_a_second_writer_is_refused_with_the_first_ones_pid(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom evalkit.base.safeio import output_lock\n"
                               f"with output_lock({str(tmp_path / 'out.csv')!r}):\n"
                               "    print('held', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(OutputError, match=rf"another evalkit process \(pid {holder.pid}\) is writing this output"):
            write_text(tmp_path / "out.csv", "second")
        assert not (tmp_path / "out.csv").exists()
    finally:
        holder.kill()
        holder.wait()
    write_text(tmp_path / "out.csv", "after")  # the dead holder's lock is taken over
    assert (tmp_path / "out.csv").read_text() == "after"


def test_failed_write_leaves_the_old_file(tmp_path):
    (tmp_path / "a.txt").write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(tmp_path / "a.txt") as tmp:
            tmp.write_text("half")
            raise RuntimeError("stopped")
    assert (tmp_path / "a.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_lock_is_reentrant_in_one_process(tmp_path):
    with output_lock(tmp_path / "o.csv"):
        write_text(tmp_path / "o.csv", "x")  # a run writing its own locked output
        assert (tmp_path / ".o.csv.lock").exists()
    assert not (tmp_path / ".o.csv.lock").exists()


def test_owned_dir_never_clears_a_user_folder(tmp_path):
    user = tmp_path / "figures" / "paper"
    user.mkdir(parents=True)
    (user / "fig1.pdf").write_text("mine")
    with pytest.raises(OutputError, match="is a folder evalkit did not create"):
        owned_dir(user, clear=True)
    assert (user / "fig1.pdf").read_text() == "mine"
    made = owned_dir(tmp_path / "made")
    (made / "old.png").write_text("x")
    owned_dir(made, clear=True)
    assert [p.name for p in made.iterdir()] == [".evalkit-owned"]


def test_report_figures_copy_refuses_a_user_folder(tmp_path):
    from evalkit.publish.report import ReportError, _copy_figures

    figs = owned_dir(tmp_path / "r" / "figures")
    (figs / "a.png").write_bytes(b"png")
    (tmp_path / "figures" / "exp").mkdir(parents=True)
    (tmp_path / "figures" / "exp" / "thesis.png").write_bytes(b"mine")
    with pytest.raises(ReportError, match="evalkit did not create"):
        _copy_figures(figs, tmp_path / "figures", "exp")
    assert (tmp_path / "figures" / "exp" / "thesis.png").read_bytes() == b"mine"
    _copy_figures(figs, tmp_path / "figures", "new")
    assert (tmp_path / "figures" / "new" / "a.png").read_bytes() == b"png"


def test_two_experiments_with_one_name_are_refused_unless_overwrite(tmp_path, monkeypatch, capsys):
    """A report folder made for another experiment file (its experiment.txt says which) is not replaced."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("question,answer\nQ,A\n")
    (tmp_path / "e.yaml").write_text("name: same\ndata: d.csv\nnotebooks: [00_quickstart]\n")
    out = owned_dir(tmp_path / "reports" / "same")
    (out / "experiment.txt").write_text("/somewhere/else/other.yaml\n")
    (out / "report.html").write_text("the other experiment's report")
    rc = cli.main(["report", "e.yaml"])
    err = capsys.readouterr().err
    assert rc == 2 and "holds the report of another experiment (/somewhere/else/other.yaml)" in err
    assert (out / "report.html").read_text() == "the other experiment's report"


def test_a_held_lock_is_respected_even_before_its_pid_is_written(tmp_path):
    """The lock is the kernel's flock, not the pid in the file: an empty lock file held by another process still
    refuses a second writer (the old pid-in-file scheme read it as stale and let both write)."""
    code = ("import fcntl, os, sys, time\n"
            f"fd = os.open({str(tmp_path / '.out.csv.lock')!r}, os.O_CREAT | os.O_RDWR)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(OutputError, match=r"another evalkit process \(pid unknown\)"):
            write_text(tmp_path / "out.csv", "second")
    finally:
        holder.kill()
        holder.wait()


def test_a_leftover_lock_file_naming_this_pid_is_not_mistaken_for_our_own(tmp_path):
    """pid reuse: a stale file that names this process is a file, not a lock this process holds."""
    lock = tmp_path / ".o.csv.lock"
    lock.write_text(f"{os.getpid()}\n")
    with output_lock(tmp_path / "o.csv"):
        assert lock.exists()
    assert not lock.exists()  # it was taken, then released, not skipped as re-entrant and left behind


def test_a_report_folder_from_before_the_marker_is_adopted(tmp_path):
    """reports/NAME written by an earlier evalkit (no marker) holds only evalkit's files: refreshed, not refused;
    a user file among them makes it a user folder again."""
    from evalkit.publish.experiment import Experiment
    from evalkit.publish.report import ReportError, _prepare_dirs

    old = tmp_path / "reports" / "x"
    (old / "figures").mkdir(parents=True)
    for name in ("report.html", "signature.json", "results.parquet", "figures/means.png"):
        (old / name).write_text("earlier run")
    exp = Experiment(name="x", data=str(tmp_path / "d.csv"), source=str(tmp_path / "e.yaml"))
    _prepare_dirs(old, exp, overwrite=False)
    assert (old / ".evalkit-owned").exists() and not (old / "figures" / "means.png").exists()
    mine = tmp_path / "reports" / "y"
    mine.mkdir()
    for name in ("report.html", "signature.json", "results.parquet", "my_notes.txt"):
        (mine / name).write_text("mine")
    with pytest.raises(ReportError, match="evalkit did not create"):
        _prepare_dirs(mine, Experiment(name="y", data=str(tmp_path / "d.csv"), source=str(tmp_path / "e.yaml")),
                      overwrite=False)
    assert (mine / "my_notes.txt").read_text() == "mine"


def test_a_lock_whose_release_was_cut_short_is_released_at_the_commands_end(tmp_path):
    """A stop can land inside a lock's own release, before its file goes (the full suite under load left
    `.manifest.json.lock` after SIGTERM): release_abandoned, the command's last step, removes every lock the
    process still holds, and a release that runs after it is a no-op."""
    from evalkit.base.safeio import lock_path, output_lock, release_abandoned

    out = tmp_path / "out.parquet"
    held = output_lock(out)
    held.__enter__()  # taken, and (as if interrupted) never given back
    assert lock_path(out).exists()
    assert release_abandoned() == [lock_path(out)]
    assert not lock_path(out).exists()
    with output_lock(out):  # free again for the next writer
        assert lock_path(out).exists()
    held.__exit__(None, None, None)  # the interrupted release, if it resumes, finds nothing to do
    assert not lock_path(out).exists() and release_abandoned() == []


def test_a_stop_inside_a_lock_section_is_raised_when_the_section_ends():
    """The kernel may hand SIGTERM to any thread; Python then runs the handler in the main thread at its next
    instruction, even inside a section whose signal mask blocks it. The handler defers the stop to the section's
    end, so a lock file is never made and left unrecorded."""
    import threading

    from evalkit.base import safeio

    handled = threading.Event()

    def handler(signum, frame):
        handled.set()
        safeio.stop_or_defer(KeyboardInterrupt)

    previous = signal.signal(signal.SIGTERM, handler)
    done = threading.Event()
    other = threading.Thread(target=done.wait, daemon=True)  # a thread that does not block SIGTERM
    other.start()
    reached_end = False
    try:
        with pytest.raises(KeyboardInterrupt):
            with safeio._stops_held_back():
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(5000):  # bounded: the handler runs within a few instructions of the delivery
                    if handled.is_set():
                        break
                    time.sleep(0.001)
                assert handled.is_set()
                reached_end = True  # the stop did not interrupt the section
        with pytest.raises(KeyboardInterrupt):  # outside a section a stop is raised at once
            safeio.stop_or_defer(KeyboardInterrupt)
    finally:
        done.set()
        signal.signal(signal.SIGTERM, previous)
    assert reached_end
