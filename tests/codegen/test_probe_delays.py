"""The critical-path probe of a wait in place (runtime/devicelib.py, PROBE_WAIT_CYCLES and
PROBE_SEEN_CYCLES; scripts/handoff_probe.py --set): a delay at each of its two points, each
behind a test of its constant, which Numba folds away at 0 (the default: no code)."""

from __future__ import annotations

from pathlib import Path

import gasync
from gasync.runtime import devicelib as dl

PINGPONG = (Path(__file__).parents[2] / "bench" / "programs" / "b2_pingpong.gasync").read_text()


def test_the_probes_are_off_unless_a_probe_sets_them() -> None:
    assert dl.PROBE_WAIT_CYCLES == 0 and dl.PROBE_SEEN_CYCLES == 0


def test_each_probe_point_is_behind_its_constant() -> None:
    text = gasync.compile_source(PINGPONG, "<probe>").generated.source
    wait = text[text.index("def await_in_place(") :].split("\n\n\n")[0].splitlines()
    for name in ("PROBE_WAIT_CYCLES", "PROBE_SEEN_CYCLES"):
        at = next(i for i, line in enumerate(wait) if f"if dl.{name} > 0:" in line)
        assert wait[at + 1].strip() == f"dl.delay_cycles(dl.{name})"
    # the re-entry's delay comes before the wait's first load, the seen one inside its success
    first_load = next(i for i, line in enumerate(wait) if "G.exec.EXS[w, dl.EXS_SPIN]" in line)
    seen = next(i for i, line in enumerate(wait) if "if seq == 2 * ticket + 1 - side" in line)
    assert [i for i, line in enumerate(wait) if "PROBE_WAIT_CYCLES > 0" in line][0] < first_load
    assert "PROBE_SEEN_CYCLES > 0" in wait[seen + 1]
