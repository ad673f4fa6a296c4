"""Choosing a backend and running a program on it.

``cuda`` runs in this process on a real GPU. ``sim`` runs in a child process
with ``NUMBA_ENABLE_CUDASIM=1`` set before Numba is imported there (the mode
is process-wide), which also makes ``--timeout`` enforceable: a simulated
kernel cannot be interrupted, but its process can be killed. Both run the
same generated module through runtime/launch.py.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import dataclasses
import os
import pickle
import select
import subprocess
import sys
import tempfile
import threading
import typing
from collections.abc import Iterator
from pathlib import Path

from gasync.codegen import Generated
from gasync.runtime import outputs, worker
from gasync.runtime.errors import BackendError, RunError, RunTimeoutError, worded
from gasync.runtime.options import GROUPS_DEADLINE_S, SPIN_DEADLINE_S, Result, RunOptions

SIM_GRACE_S = 30.0  # start-up of the child (imports) on top of --timeout
SIM_DEFAULT_LIMIT_S = 600.0
MIN_TIMEOUT_S = 1e-9  # the device clock counts whole nanoseconds: a shorter timeout would be none


def gpu_present() -> bool:
    """True if the CUDA driver loads and reports at least one device (no Numba import)."""
    return gpu_count() > 0


def gpu_count() -> int:
    """The CUDA devices the driver reports (that CUDA_VISIBLE_DEVICES leaves); 0 without a driver."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    count = ctypes.c_int(0)
    if lib.cuInit(0) != 0 or lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


def choose(backend: str) -> str:
    if backend == "auto":
        return "cuda" if gpu_present() else "sim"
    if backend not in ("cuda", "sim"):
        raise BackendError(f"unknown backend '{backend}': expected auto, cuda or sim")
    if backend == "cuda" and not gpu_present():
        detail = "no CUDA GPU was found on this machine"
        raise worded(
            BackendError(f"backend 'cuda': {detail} (try backend='sim')"),
            f"--backend cuda: {detail} (try --backend sim)",
        )
    return backend


def run(gen: Generated, options: RunOptions) -> Result:
    backend = choose(options.backend)
    given = options.timeout_s
    if 0 < options.timeout_s < MIN_TIMEOUT_S:  # (the command line refuses one; Python's rounds up)
        options = dataclasses.replace(options, timeout_s=MIN_TIMEOUT_S)
    if options.executor == "spin" and not options.timeout_s:
        # the naive baseline keeps no wait states, so it cannot tell a deadlock from a wait:
        # its runs always have a deadline, whose report then says so (runtime/exits.py)
        options = dataclasses.replace(options, timeout_s=SPIN_DEADLINE_S)
    elif gen.plan.groups and not options.timeout_s:
        # a group's task that waits on a global channel, a signal or a sleep that nothing
        # will give cannot be told from one still waiting (decision 53): never a hang
        options = dataclasses.replace(options, timeout_s=GROUPS_DEADLINE_S)
    if backend == "cuda":
        from numba import config

        if config.ENABLE_CUDASIM:
            raise worded(
                BackendError("this process already runs Numba's CUDA simulator; use backend='sim'"),
                "this process already runs Numba's CUDA simulator; use --backend sim",
            )
        from gasync.runtime.launch import execute

        return execute(gen, options, sim=False)
    return _run_sim(gen, options, given > 0)


class _WarmWorker:
    """One warm simulator worker per process (runtime/worker.py ``--serve``).

    Started at the first simulated run and reused while the environment and the
    working directory stay the same; killed (and started again next time) when a
    run outlives its limit, so the limit stays as hard as a one-job child's. A run
    that finds it busy (another thread's) gets a one-job child instead.
    """

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.key: tuple[object, ...] = ()
        self.errors: typing.IO[bytes] | None = None
        self.lock = threading.Lock()
        atexit.register(self.stop)

    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None and self.proc.poll() is None else None

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for f in (self.proc.stdin, self.proc.stdout):
                if f is not None:
                    f.close()
        if self.errors is not None:
            self.errors.close()
        self.proc, self.errors = None, None

    def run(self, job: Path, out: Path, env: dict[str, str], limit: float) -> str:
        """Run one job; returns the worker's stderr tail if it died, "" if it answered."""
        key = (tuple(sorted(env.items())), os.getcwd(), sys.executable)
        if self.pid() is None or key != self.key:
            self.stop()
            self.errors = tempfile.TemporaryFile()
            cmd = [sys.executable, "-m", "gasync.runtime.worker", "--serve"]
            # (its first job named at its start too: this process may die before it writes the line)
            start_env = dict(env, **{worker.FIRST_JOB_ENV: str(job)})
            self.proc = subprocess.Popen(
                cmd, env=start_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors, text=True
            )
            self.key = key
        proc = self.proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        try:
            try:
                proc.stdin.write(f"{job}\t{out}\n")
                proc.stdin.flush()
            except BrokenPipeError:
                pass  # it died: the read below sees the end
            ready, _, _ = select.select([proc.stdout], [], [], limit)
            answer = proc.stdout.readline() if ready else ""
        except BaseException:  # Ctrl-C (KeyboardInterrupt): the worker ignores SIGINT, so end its run here
            self.stop()
            raise
        if not ready:
            self.stop()
            raise subprocess.TimeoutExpired(proc.args, limit)
        if answer.strip() == worker.DONE:
            return ""
        tail = self._stderr_tail()
        self.stop()
        return tail or "the simulator worker exited"

    def _stderr_tail(self) -> str:
        if self.errors is None:
            return ""
        self.errors.seek(0)
        return "\n".join(self.errors.read().decode(errors="replace").strip().splitlines()[-5:])


_WARM = _WarmWorker()


def sim_worker_pid() -> int | None:
    """The warm simulator worker's process id (None when none runs), for tests."""
    return _WARM.pid()


def _run_sim(gen: Generated, options: RunOptions, timeout_given: bool = True) -> Result:
    from gasync.runtime.exits import sim_state_check

    sim_state_check(gen)
    # the child gets host copies and gives back NumPy arrays (runtime/outputs.py)
    inputs = {name: outputs.to_host(x) for name, x in options.inputs.items()}
    cache_dir = os.path.abspath(options.cache_dir) if options.cache_dir else options.cache_dir
    options = dataclasses.replace(options, inputs=inputs, outputs="host", cache_dir=cache_dir)
    from gasync.pipeline import deep  # a deeply nested plan pickles recursively

    job_bytes = deep(pickle.dumps, (gen, options))
    with _job_folder() as tmp:
        job, out = Path(tmp) / "job.pkl", Path(tmp) / "result.pkl"
        try:
            job.write_bytes(job_bytes)
        except OSError as exc:
            raise _no_room(tmp, exc) from None
        # the worker ends itself once this process is gone, also where it died before the
        # worker started watching (runtime/worker.py: its parent's pid is named, not read then)
        env = dict(
            os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONWARNINGS="ignore", **{worker.PARENT_ENV: str(os.getpid())}
        )
        limit = options.timeout_s + SIM_GRACE_S if options.timeout_s else SIM_DEFAULT_LIMIT_S
        try:
            failure = _run_job(job, out, env, limit)
        except subprocess.TimeoutExpired:
            raise _hard_limit(options.timeout_s, limit, timeout_given) from None
        if not out.exists():
            raise BackendError("the simulator process failed:\n" + failure)
        status, payload = pickle.loads(out.read_bytes())
    if status == "error":
        raise payload
    assert isinstance(payload, Result)
    return payload


@contextlib.contextmanager
def _job_folder() -> Iterator[str]:
    """A temporary folder for the job and its result (removed after), or a BackendError that
    says why none can be made."""
    try:
        folder = tempfile.TemporaryDirectory(prefix=worker.JOB_FOLDER_PREFIX)
    except OSError as exc:
        raise _no_room(tempfile.gettempdir(), exc) from None
    with folder as tmp:
        yield tmp


def _no_room(folder: str, exc: OSError) -> RunError:
    why = exc.strerror or str(exc)
    hint = "set TMPDIR to a writable folder with room"
    return BackendError(f"cannot write the simulator's job in {folder}: {why} ({hint})")


def _hard_limit(timeout_s: float, limit: float, timeout_given: bool) -> RunTimeoutError:
    """The error of a simulated run stopped at its hard limit (the timeout and SIM_GRACE_S, or
    SIM_DEFAULT_LIMIT_S): in words of the deadline the run had, the user's own where it was theirs."""
    if not timeout_s:
        stopped = f"the simulated run did not finish within {limit:g}s and was stopped"
        return worded(
            RunTimeoutError(f"{stopped} (pass a timeout to bound it)"), f"{stopped} (set --timeout to bound it)"
        )
    later = f"and was stopped {limit - timeout_s:g}s later, at the simulator's hard limit of {limit:g}s"
    if not timeout_given:  # a spin executor's or a program with groups' own deadline
        return RunTimeoutError(f"the simulated run did not end at its deadline of {timeout_s:g}s {later}")
    stopped = "the simulated run did not end at {} {}"
    return worded(
        RunTimeoutError(stopped.format(f"its timeout of {timeout_s:g}s", later)),
        stopped.format(f"--timeout {timeout_s:g}s", later),
    )


def _run_job(job: Path, out: Path, env: dict[str, str], limit: float) -> str:
    """Run the job in the warm worker, or in a one-job child when it is busy; the
    child's error output if it wrote no result."""
    if _WARM.lock.acquire(blocking=False):
        try:
            return _WARM.run(job, out, env, limit)
        finally:
            _WARM.lock.release()
    cmd = [sys.executable, "-m", "gasync.runtime.worker", str(job), str(out)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=limit)
    return "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])


__all__ = ["RunError", "choose", "gpu_count", "gpu_present", "run", "sim_worker_pid"]
