"""scripts/sass_waits.py without nvdisasm or a GPU: control bits of real sm_90 encodings, and
the path walk over a small hand-written listing in nvdisasm's ``-hex -c`` format."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest


def load_script() -> ModuleType:
    """scripts/ is not a package: load the script from its path."""
    path = Path(__file__).parents[2] / "scripts" / "sass_waits.py"
    spec = importlib.util.spec_from_file_location("sass_waits", path)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = script  # dataclasses look their module up
    spec.loader.exec_module(script)
    return script


sass_waits = load_script()

# from B2's kernel (bench/programs, ptxas -arch=sm_90): a load that sets SB2 when its
# result lands, the compare that waits for it, and an exchange that sets SB5
REAL = """\
        /*0aa0*/                   LDG.E.64.STRONG.GPU R10, desc[UR16][R2.64] ;                            /* 0x00000010020a7981 */
                                                                                                           /* 0x001ea4000c1efb00 */
        /*0ab0*/                   ISETP.GT.U32.AND P0, PT, R10, RZ, PT ;                                  /* 0x000000ff0a00720c */
                                                                                                           /* 0x004fc80003f04070 */
        /*2ae0*/                   ATOMG.E.EXCH.64.STRONG.GPU PT, R54, desc[UR16][R34.64], R62 ;           /* 0x0000003e223679a8 */
                                                                                                           /* 0x000162000c1ee5d0 */
"""  # noqa: E501


def test_control_bits_of_real_encodings() -> None:
    load, compare, exchange = sass_waits.parse(REAL).instructions
    assert load.text == "LDG.E.64.STRONG.GPU R10, desc[UR16][R2.64]"
    assert load.low == 0x00000010020A7981
    assert load.control == sass_waits.Control(stall=2, yield_flag=1, write_sb=2, read_sb=7, wait_mask=0b1, reuse=0)
    assert compare.control == sass_waits.Control(stall=4, yield_flag=0, write_sb=7, read_sb=7, wait_mask=0b100, reuse=0)
    assert compare.control.waits_on(load.control.write_sb)
    assert exchange.line() == (
        "  2ae0 W5 R0 wait[-     ] S1  Y1 reuse0  ATOMG.E.EXCH.64.STRONG.GPU PT, R54, desc[UR16][R34.64], R62"
    )


def line(addr: int, text: str, write_sb: int = 7, wait_mask: int = 0) -> str:
    """One instruction as nvdisasm -hex prints it: the low word (zero here) beside it, the high word below."""
    bits = 1 | 1 << 4 | write_sb << 5 | 7 << 8 | wait_mask << 11  # stall 1, yield, no read scoreboard
    return f"        /*{addr:04x}*/  {text} ;  /* 0x{0:016x} */\n  /* 0x{bits << 41:016x} */\n"


def loop_listing(p1_lut: int) -> str:
    """An exchange (SB5) in a loop; the loop's head waits on SB5 and reads the result, the way
    out waits but does not, and a branch on P1, set to a constant, may lead to a third wait."""
    sb5 = 1 << 5
    return (
        ".L_x_0:\n"
        + line(0x00, "IMAD.MOV.U32 R10, RZ, RZ, R4", wait_mask=sb5)
        + line(0x10, "ATOMG.E.EXCH.64.STRONG.GPU PT, R4, desc[UR16][R2.64], R6", write_sb=5)
        + line(0x20, f"PLOP3.LUT P1, PT, PT, PT, PT, {p1_lut:#x}, 0x0")
        + line(0x30, "@!P1 BRA `(.L_x_1)")
        + line(0x40, "ISETP.NE.AND P0, PT, R8, RZ, PT")
        + line(0x50, "@P0 BRA `(.L_x_0)")
        + line(0x60, "IADD3 R8, R8, 0x1, RZ", wait_mask=sb5)
        + line(0x70, "EXIT")
        + ".L_x_1:\n"
        + line(0x80, "MOV R9, R4", wait_mask=sb5)
        + line(0x90, "EXIT")
    )


@pytest.mark.parametrize(
    ("p1_lut", "expected"),
    [
        # P1 true: @!P1 never branches; the loop's back edge and the way out each wait once
        (0x80, [(0x00, True, True), (0x60, False, False)]),
        # P1 false: it always branches, to the one wait past the label
        (0x08, [(0x80, False, True)]),
    ],
)
def test_first_waits_follow_constant_predicates(p1_lut: int, expected: list[tuple[int, bool, bool]]) -> None:
    listing = sass_waits.parse(loop_listing(p1_lut))
    assert listing.labels == {".L_x_0": 0x00, ".L_x_1": 0x80}
    (found,) = sass_waits.analyse(listing, "EXCH")
    assert found.atomic.addr == 0x10 and found.scoreboard == 5
    assert [(w.addr, w.crossed_back_edge, w.uses_result) for w in found.waits] == expected
