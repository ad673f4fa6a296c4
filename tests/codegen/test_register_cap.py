"""The kernel's register cap for programs with groups (codegen/occupancy.py): a
cap only where a group's instances outnumber an H200's SMs and more than one of its blocks
could share an SM, at what lets them; the generated module says which and why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import gasync
from gasync.codegen import occupancy

ROOT = Path(__file__).resolve().parents[2]
B7 = ROOT / "bench" / "programs" / "b7_staged.gasync"
MATMUL = ROOT / "samples" / "tiled_matmul.gasync"


def cap(path: Path, defines: dict[str, int]) -> str:
    source = gasync.compile(path, defines=defines).generated.source
    found = re.findall(r"^MAX_REGISTERS = (\w+)$", source, re.M)
    assert len(found) == 1 and "@cuda.jit(cache=True, **KERNEL_OPTIONS)\ndef gasync_kernel" in source
    return found[0]


@pytest.mark.parametrize(
    ("path", "defines", "want"),
    [
        (B7, {}, "None"),  # 128 instances of 8 warps: one block an SM is all they call for
        (B7, {"GROUPS": 256, "STAGES": 4}, "128"),  # two 8-warp blocks: 65,536 / 512
        (MATMUL, {"N": 2048, "T": 32}, "96"),  # 4,096 two-warp instances, 10 an SM by shared memory
        (MATMUL, {}, "None"),  # the simulator's size: 16 instances
    ],
)
def test_the_cap_leaves_room_for_the_blocks_an_sm_wants(path: Path, defines: dict[str, int], want: str) -> None:
    assert cap(path, defines) == want


def test_no_cap_where_it_would_be_below_what_ptxas_can_use_without_spilling_much() -> None:
    # 600 instances of 32 warps: two blocks an SM would leave 32 registers a thread
    warps = "\n".join(f"    task t{k} {{ x[g] = 1.0; }}" for k in range(32))
    src = f"buffer x: f32[600] = zeros;\ngroup big for g in 0..600 {{\n{warps}\n}}\n"
    source = gasync.compile_source(src, "big.gasync").generated.source
    assert "\nMAX_REGISTERS = None\n" in source


def test_without_the_cap_every_kernel_takes_what_ptxas_likes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(occupancy, "CAP_REGISTERS", False)
    assert cap(B7, {"GROUPS": 256, "STAGES": 4}) == "None"
