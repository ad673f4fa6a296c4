"""The simulator's child process: one job, or a warm worker that serves many.

``python -m gasync.runtime.worker JOB RESULT`` runs one generated program under
Numba's CUDA simulator (the parent set ``NUMBA_ENABLE_CUDASIM=1``) and pickles
back ``("ok", Result)`` or ``("error", RunError)``.

``python -m gasync.runtime.worker --serve`` stays up: it reads one line
``JOB RESULT`` per job on stdin, runs it as above, and answers ``done`` on
stdout; end of input ends it. The parent (runtime/backends.py) keeps one such
worker per process, so a second simulated run skips the child's start-up
(Python, NumPy, Numba's simulator: about 2 s) and the generated module's import;
it kills the worker when a run outlives its time limit, as it kills a one-job
child, so a hung simulated kernel still cannot hang the caller.

Either kind of child ignores SIGINT: Ctrl-C reaches the whole process group, and the
parent, which handles it, kills the child (a simulated kernel cannot be interrupted
cleanly). A child whose parent died (SIGKILL) ends itself within a second rather than
spin on an orphaned run, and removes the job's temporary folder its parent left.
"""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import sys
import threading
import time
import traceback
import warnings
from pathlib import Path

SIM_RECURSION = 100_000
SIM_THREAD_STACK = 256 * 1024 * 1024  # bytes of (reserved, mostly untouched) stack per simulated thread
DONE = "done"
JOB_FOLDER_PREFIX = "gasync-sim-"  # runtime/backends.py's temporary folder of a job
PARENT_POLL_S = 0.5
FIRST_JOB_ENV = "GASYNC_WORKER_FIRST_JOB"  # a warm worker's first job, named at its start (runtime/backends.py)
PARENT_ENV = "GASYNC_WORKER_PARENT"  # the parent's pid, set by runtime/backends.py when it starts a worker


def setup() -> None:
    import numpy as np

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C, and kills this process
    parent = int(os.environ.get(PARENT_ENV, "0") or 0) or os.getppid()  # (a parent gone already: not ours)
    _parent[:] = [parent]
    first = os.environ.get(FIRST_JOB_ENV)
    if first and not _job_folder:  # the job the parent started it for: its line may never come
        _job_folder[:] = [Path(first).parent]
    threading.Thread(target=_end_with_parent, args=(parent,), daemon=True).start()

    warnings.simplefilter("ignore")  # wrapping integer arithmetic warns in NumPy scalars
    # A chain of awaits is a chain of Python calls here (each poll calls its child's):
    # room for the deepest the compiler accepts, on the threads the simulator starts.
    sys.setrecursionlimit(SIM_RECURSION)
    threading.stack_size(SIM_THREAD_STACK)
    np.seterr(all="ignore")


_parent: list[int] = [0]  # the parent's pid (setup)
_job_folder: list[Path] = []  # the folder of the job running now (the parent's, to remove if it dies)


def _end_with_parent(parent: int) -> None:
    """Exit as soon as the parent is gone (this process is then re-parented), removing the
    folder of the job it was running: a parent killed with SIGKILL could not."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    _clean_up()
    time.sleep(0.1)  # a line the serving thread had read just before: main() records its folder first thing
    _clean_up()
    os._exit(1)


def _clean_up() -> None:
    """Remove the folders of this worker's job and of the jobs it has not read (the parent is gone)."""
    for folder in [*_job_folder, *_unread_jobs()]:
        if folder.name.startswith(JOB_FOLDER_PREFIX):
            shutil.rmtree(folder, ignore_errors=True)


def _unread_jobs() -> list[Path]:
    """The folders of the jobs whose lines the parent wrote and this worker has not read: a
    warm worker reads its first line only once its imports are done (seconds on a loaded
    machine), and a parent killed meanwhile leaves the line in the pipe."""
    try:
        os.set_blocking(0, False)
        data = os.read(0, 1 << 16)
    except OSError:  # (nothing there, or no pipe)
        return []
    return [Path(line.split("\t")[0]).parent for line in data.decode(errors="replace").splitlines() if line]


def main(job: str, result: str) -> int:
    _job_folder[:] = [Path(job).parent]  # first: the imports below take seconds, and the parent may die meanwhile
    from gasync.dsl.diagnostics import GasyncError, Note
    from gasync.runtime import devicelib
    from gasync.runtime.errors import DeviceError
    from gasync.runtime.launch import execute

    devicelib.forget_warps()  # a warm worker's earlier run may have left broken barriers
    gen, options = pickle.loads(Path(job).read_bytes())
    try:
        payload: tuple[str, object] = ("ok", execute(gen, options, sim=True))
    except GasyncError as exc:
        payload = ("error", exc)
    except Exception as exc:  # a failure inside the simulated kernel
        last = traceback.format_exception(exc)[-1].strip()
        notes: tuple[Note, ...] = ()
        if isinstance(exc, IndexError) and not gen.checked:  # undefined behaviour (decision 40)
            notes = (Note("with --unchecked no index is checked: run without it to have the access named"),)
        payload = ("error", DeviceError(f"the simulated kernel failed: {last}", notes=notes))
    Path(result).write_bytes(pickle.dumps(payload))
    return 0


def serve() -> int:
    for line in sys.stdin:
        job, result = line.rstrip("\n").split("\t")
        main(job, result)
        print(DONE, flush=True)
    if _parent[0] and os.getppid() != _parent[0]:  # the end of input because the parent died
        _clean_up()
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3:  # a one-job child: its folder is known before the imports of setup()
        _job_folder[:] = [Path(sys.argv[1]).parent]
    setup()
    if sys.argv[1:] == ["--serve"]:
        sys.exit(serve())
    sys.exit(main(sys.argv[1], sys.argv[2]))
