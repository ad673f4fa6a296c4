"""Runs fuzzing inputs through the ``gasync`` command and judges each outcome (scripts/fuzz.py).

In-process inputs go to a worker process (this file, run with ``--serve``) that
calls ``gasync.cli.app.main`` (what the console script calls) with the output
captured, one JSON request per line on stdin, one JSON answer per line on
stdout. The parent waits for each answer under a wall-clock limit; a worker that
does not answer in time is a hang: its process group (the worker and its
simulator child) is killed and a fresh worker serves the next input. A slice of
inputs goes through the real command instead (``python -m gasync`` in a
subprocess, under the same limit).

An outcome is a defect when: a Python traceback is printed; the exit status is
not one ``gasync`` documents for the case (0 or 1; 2 only for a ``run`` whose
program needs ``--input``, which the harness gives); it is 3 (an internal
error, E0003); the simulated kernel raised a Python exception (E0305's
"the simulated kernel failed": the GPU would not); the executor stopped on a
fault of its own (E0305's "internal error in the executor", or an exit code it
does not know); a failure prints no error diagnostic, or a compile error, or a
run-time bounds fault (E0312), without a line; the JSON output does not parse;
or the answer takes longer than the limit.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# E0305s that are the executor's own faults (runtime/exits.py: "... please report it"), not a limit of the program
EXECUTOR_FAULTS = ("internal error", "the executor stopped with code")
UNLOCATED_OK = ("E0301", "E0302", "E0303", "E0304", "E0305", "E0309", "E0310")  # about a run or its data, not a place
DOCUMENTED = {"check": (0, 1), "run": (0, 1)}
MAX_INPUT = 1 << 22  # elements of a random --input the harness makes; a larger buffer gets a wrong shape


@dataclass(frozen=True)
class Outcome:
    status: int  # the exit status; -1 for a hang
    codes: tuple[str, ...]  # the error diagnostics' codes
    defect: str  # "" when the outcome is as documented
    secs: float
    output: str = ""  # stderr (and stdout), kept for a defect


def judge(command: str, status: int, stdout: str, stderr: str) -> tuple[tuple[str, ...], str]:
    """The error codes of one answer, and what is wrong with it ("" if nothing)."""
    if "Traceback (most recent call last)" in stderr or "Traceback (most recent call last)" in stdout:
        return (), "a Python traceback"
    if status == 3:
        return ("E0003",), "an internal error (exit status 3)"
    try:
        parsed = json.loads(stdout) if stdout.strip() else []
    except json.JSONDecodeError:
        return (), "output that is not JSON"
    diags = parsed.get("diagnostics", []) if isinstance(parsed, dict) else parsed
    errors = [d for d in diags if d.get("severity") == "error"]
    codes = tuple(d.get("code", "") for d in errors)
    if status not in DOCUMENTED[command]:
        return codes, f"exit status {status}, not one of {DOCUMENTED[command]}"
    if status == 1 and not errors:
        return codes, "a failure without an error diagnostic"
    if status == 0 and errors:
        return codes, "exit status 0 with an error diagnostic"
    for d in errors:
        if "the simulated kernel failed" in d.get("message", ""):
            return codes, "an exception inside the simulated kernel"
        if d.get("message", "").startswith(EXECUTOR_FAULTS):
            return codes, "an internal error of the executor"
        if not d.get("code") or not d.get("message"):
            return codes, "an error without a code or message"
        if d.get("line", 0) < 1 and d["code"] not in UNLOCATED_OK:
            return codes, f"{d['code']} without a line"
    return codes, ""


def _call_cli(args: list[str]) -> tuple[int, str, str]:
    from gasync.cli import source
    from gasync.cli.app import main

    # a command reads its program once (cli/source.py caches it by path, as one process of the
    # CLI should); this worker writes each input to the same path: without this, every call
    # after the first ran the first input again
    source._file.cache_clear()

    out, err = io.StringIO(), io.StringIO()
    status = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 1
        except BaseException as exc:  # escaped main: a defect, reported as a traceback
            import traceback

            err.write("Traceback (most recent call last):\n" + "".join(traceback.format_exception(exc)))
            status = 3
    return status, out.getvalue(), err.getvalue()


def run_args(path: Path, workdir: Path, rng_seed: int, timeout_s: float) -> list[str] | None:
    """``gasync run``'s arguments for the program at ``path``: random ``--input`` files for
    its input buffers and some of its signals from the host; None if it does not compile."""
    import numpy as np

    import gasync
    from gasync.dsl.diagnostics import ErrorGroup, GasyncError

    try:
        plan = gasync.compile(str(path)).plan
    except (GasyncError, ErrorGroup):
        return ["run", "--backend", "sim", "--json", "-q", "--timeout", f"{timeout_s}s", str(path)]
    rng = np.random.default_rng(rng_seed)
    args = ["run", "--backend", "sim", "--json", "-q", "--timeout", f"{timeout_s}s"]
    for b in plan.buffers:
        if b.init == "input":
            f = workdir / f"in_{b.name}.npy"
            shape = b.shape if b.size <= MAX_INPUT else (1,)  # too large to make: a wrong shape (E0301)
            np.save(f, _random_array(rng, b.elem, shape))
            args += ["--input", f"{b.name}={f}"]
    for s in plan.signals:
        if rng.random() < 0.5:
            args += ["--signal", f"{s.name}={int(rng.integers(0, 20))}ms"]
    return [*args, str(path)]


def _random_array(rng: Any, elem: str, shape: tuple[int, ...]) -> Any:
    import numpy as np

    if elem == "bool":
        return rng.integers(0, 2, shape).astype(np.bool_)
    dtype = np.dtype({"i": "int", "u": "uint", "f": "float"}[elem[0]] + elem[1:])
    if dtype.kind == "f":
        return rng.normal(0, 4, shape).astype(dtype)
    return rng.integers(-8 if dtype.kind == "i" else 0, 64, shape).astype(dtype)


def serve() -> None:
    """The worker's loop: {"command", "text", "seed", "timeout"} in, {"status", "stdout", "stderr"} out."""
    os.environ.setdefault("NO_COLOR", "1")
    workdir = Path(tempfile.mkdtemp(prefix="gasync-fuzz-"))
    cache = workdir / "cache"
    for line in sys.stdin:
        req = json.loads(line)
        path = workdir / "fuzz.gasync"
        path.write_text(req["text"])
        if req["command"] == "check":
            args: list[str] | None = ["check", "--json", "-q", str(path)]
        else:
            args = run_args(path, workdir, req["seed"], req["timeout"])
            args = [*(args or []), "--cache-dir", str(cache)]
        status, out, err = _call_cli(args or [])
        sys.stdout.write(json.dumps({"status": status, "stdout": out, "stderr": err}) + "\n")
        sys.stdout.flush()


class Worker:
    """A ``serve`` process, restarted after a hang."""

    def __init__(self, keep_output: bool = False) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.keep_output = keep_output  # the output of every answer, not only of defects

    def _start(self) -> subprocess.Popen[str]:
        env = {**os.environ, "NO_COLOR": "1"}
        return subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, start_new_session=True,
        )  # fmt: skip

    def ask(self, command: str, text: str, limit_s: float, seed: int = 0, timeout_s: float = 2.0) -> Outcome:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        t0 = time.monotonic()
        self.proc.stdin.write(json.dumps({"command": command, "text": text, "seed": seed, "timeout": timeout_s}) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], limit_s)
        line = self.proc.stdout.readline() if ready else ""
        secs = time.monotonic() - t0
        if not line:
            why = f"no answer within {limit_s:g}s (a hang)" if not ready else "the worker died"
            self.close()
            return Outcome(-1, (), why, secs)
        answer = json.loads(line)
        codes, defect = judge(command, answer["status"], answer["stdout"], answer["stderr"])
        keep = defect or (self.keep_output and codes)
        return Outcome(answer["status"], codes, defect, secs, answer["stderr"] + answer["stdout"] if keep else "")

    def close(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            self.proc = None


def through_cli(text: str, limit_s: float) -> Outcome:
    """``python -m gasync check --json FILE`` as a user runs it."""
    with tempfile.TemporaryDirectory(prefix="gasync-fuzz-") as d:
        path = Path(d) / "fuzz.gasync"
        path.write_text(text)
        t0 = time.monotonic()
        try:
            done = subprocess.run(
                [sys.executable, "-m", "gasync", "check", "--json", "-q", str(path)],
                capture_output=True, text=True, timeout=limit_s, env={**os.environ, "NO_COLOR": "1"},
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return Outcome(-1, (), f"no answer within {limit_s:g}s (a hang)", time.monotonic() - t0)
        codes, defect = judge("check", done.returncode, done.stdout, done.stderr)
        return Outcome(
            done.returncode, codes, defect, time.monotonic() - t0, done.stderr + done.stdout if defect else ""
        )


if __name__ == "__main__" and sys.argv[1:] == ["--serve"]:
    serve()
