"""scripts/sass_path.py and scripts/ncu_path.py without a GPU: the shortest path through a small
listing in nvdisasm's ``-c -g`` format (labels, a predicated branch taken both ways, an EXIT that
ends a path, a waypoint that forces a branch), and a small source page in Nsight Compute's CSV
(instructions executed a unit of work, the straight path summed by generated statement)."""

from __future__ import annotations

import gzip
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).parents[2] / "scripts"


def load(name: str) -> ModuleType:
    """scripts/ is not a package: load the script from its path."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = script  # dataclasses look their module up
    spec.loader.exec_module(script)
    return script


sass_path, ncu_path = load("sass_path"), load("ncu_path")

# 0x00 compares; a predicated branch to .L_x_1 (0x40) skips two instructions; 0x30 exits
LISTING = """\
\t//## File "/c/gen.py", line 10
        /*0000*/                   ISETP.NE.U32.AND P0, PT, R1, R2, PT ;
        /*0010*/              @!P0 BRA `(.L_x_1) ;
\t//## File "/c/gen.py", line 11
        /*0020*/                   IADD3 R3, R3, 0x1, RZ ;
        /*0030*/                   EXIT ;
.L_x_1:
\t//## File "/c/devicechan.py", line 90
        /*0040*/                   IMAD.MOV.U32 R4, RZ, RZ, R3 ;
        /*0050*/                   BRA `(.L_x_2) ;
        /*0060*/                   NOP ;
.L_x_2:
        /*0070*/                   ATOMG.E.EXCH.64.STRONG.GPU PT, R6, desc[UR4][R8.64], R10 ;
"""


def run_path(tmp_path: Path, *args: str) -> str:
    listing = tmp_path / "k.sass"
    listing.write_text(LISTING)
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "sass_path.py"), str(listing), *args], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_listing_is_read_with_its_labels_and_source_lines(tmp_path: Path) -> None:
    listing = tmp_path / "k.sass"
    listing.write_text(LISTING)
    instrs, order, labels = sass_path.read(listing)
    assert order == [0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70]
    assert labels == {".L_x_1": 0x40, ".L_x_2": 0x70}
    assert instrs[0x20][1:] == ("gen.py", 11) and instrs[0x40][1:] == ("devicechan.py", 90)
    after = dict(zip(order, order[1:], strict=False))
    assert sass_path.successors(0x10, instrs[0x10][0], after[0x10], labels) == [0x40, 0x20]  # both ways
    assert sass_path.successors(0x30, instrs[0x30][0], after[0x30], labels) == []  # EXIT
    assert sass_path.successors(0x50, instrs[0x50][0], after[0x50], labels) == [0x70]  # taken only


def test_the_shortest_path_takes_the_branch_and_skips_the_dead_code(tmp_path: Path) -> None:
    out = run_path(tmp_path, "0", "70", "--listing")
    assert out.splitlines()[0] == "5 instructions from 0 to 70"  # 00 10 40 50 70: never 20, 30, 60
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["00000", "00010", "00040", "00050", "00070"]


def test_a_path_the_code_cannot_take_is_said_so(tmp_path: Path) -> None:
    listing = tmp_path / "k.sass"
    listing.write_text(LISTING)
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "sass_path.py"), str(listing), "20", "70"], capture_output=True, text=True
    )
    assert proc.returncode == 1 and proc.stdout.strip() == "no path from 20 to 70"  # (20 falls into the EXIT)


def test_find_lists_the_matching_instructions(tmp_path: Path) -> None:
    out = run_path(tmp_path, "--find", "EXCH|EXIT")
    assert [line.split()[0] for line in out.splitlines()] == ["00030", "00070"]


HEADER = '"Line No","Source","Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed"'
PAGE = f"""\
"File Path","/tmp/gasync_abc.py"
"Function Name","k"
{HEADER}
"7","x = recv()","-","-","0","0"
"","","0x100","LDG R1","30","100"
"","","0x110","ISETP P0","10","100"
"8","while spin:","-","-","0","0"
"","","0x120","BRA","50","400"
"File Path","/tmp/devicechan.py"
"Line No","Source","Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed"
"90","exch(...)","-","-","0","0"
"","","0x130","ATOMG.E.EXCH","10","100"
"""


def test_the_straight_path_is_summed_by_generated_statement(tmp_path: Path) -> None:
    page = tmp_path / "src.csv.gz"
    with gzip.open(page, "wt") as f:
        f.write(PAGE)
    instrs, generated = ncu_path.read(page)
    assert generated == "gasync_abc.py"
    assert {a: (i.count, i.samples) for a, i in instrs.items()} == {
        0x100: (100, 30),
        0x110: (100, 10),
        0x120: (400, 50),
        0x130: (100, 10),
    }
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "ncu_path.py"), str(page), "--per", "50", "--path", "100"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "4 instructions, 700 executed: 14.0 per unit; 100 samples"
    # the spin's branch ran 400 times: not on the path; the exchange inlined after line 8 counts for it
    assert "the straight path: 3 instructions run 100 +- 2 times, 50.0% of the samples" in proc.stdout
    assert "     2  40.0%      7  x = recv()" in lines
    assert "     1  10.0%      8  while spin:" in lines
