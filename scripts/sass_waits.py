"""Where a kernel's SASS waits on the result of a global atomic, from ``nvdisasm -hex -c`` output.

For each ``ATOMG`` that returns a register and sets a write scoreboard, prints its control
bits and the first instruction on every feasible path after it that waits on that
scoreboard: where, whether the path crossed a backward branch to get there, and whether
that instruction names the atomic's result registers (a wait that does not is a stall the
result did not ask for). The control bits are those of sm_70 to sm_90.

Usage::

    nvdisasm -hex -c K.cubin > K.sass
    python3 scripts/sass_waits.py K.sass [SUBSTRING]   # the ATOMGs whose text holds SUBSTRING
                                                       # (default EXCH; ATOMG for all of them)
    python3 scripts/sass_waits.py K.sass --list [N]    # the first N instructions (40), decoded
    python3 scripts/sass_waits.py K.sass --touch ADDR  # from the ATOMG at ADDR (hex), the first
                                                       # instruction on each path naming its result

A cubin without a GPU: ``python3 scripts/ptx_check.py --ptx DIR [FILE.gasync]`` writes each
kernel's PTX, then ``/usr/local/cuda-13.0/bin/ptxas -arch=sm_90 -lineinfo DIR/X.ptx -o X.cubin``.
nvdisasm comes from the pip package nvidia-cuda-nvdisasm==13.4.92, its wheel unpacked under
/tmp/sass: ``/tmp/sass/nvidia/cu13/bin/nvdisasm``.

Control bits: nvdisasm prints each 128-bit instruction as two 64-bit words, the low one on
the instruction's line and the high one on the line after. Bits 41..61 of the high word
(105..125 of the instruction) schedule it: stall cycles 41-44, yield 45, the write
scoreboard it sets 46-48 and the read scoreboard 49-51 (7: none), the scoreboards it waits
for 52-57 (one bit each, SB0..SB5) and operand reuse 58-61.

Paths: a walk from the atomic follows fall-through and branches to their labels. A predicate
set to a constant by ``PLOP3.LUT P, PT, PT, PT, PT, imm, 0x0`` is remembered along the path,
and a branch guarded by it goes only the way it will; an instruction that writes a predicate
(SETP, PLOP3, LOP3, R2P, VOTE) forgets it. Other predicate writes (an IADD3's carry out, for
one) are not seen, so a remembered predicate can be stale. A path ends at the first
instruction found, or where it comes back to the atomic. Each state (instruction, back edge
crossed or not, predicates known) is visited once, up to a limit, so loops end.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

NO_SCOREBOARD = 7
WAIT_STATES = 200_000  # path states the walk from one atomic may visit
TOUCH_STATES = 400_000

INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);\s+/\* 0x([0-9a-f]{16}) \*/")
HIGH_WORD = re.compile(r"^\s+/\* 0x([0-9a-f]{16}) \*/\s*$")
LABEL = re.compile(r"^(\.L_x_\d+):")
BRANCH_TARGET = re.compile(r"\((\.L_x_\d+)\)")
BRANCH_ON_PREDICATE = re.compile(r"BRA(\.\w+)* !?U?P\d")  # an unguarded branch with a predicate operand
GUARDED_BRANCH = re.compile(r"@(!?)(P\d) BRA")
CONSTANT_PREDICATE = re.compile(r"PLOP3\.LUT (P\d), PT, PT, PT, PT, 0x(\w+), 0x0$")
PREDICATE_WRITE = re.compile(r"(?:SETP|PLOP3|LOP3|R2P|VOTE)\S* (P\d)")
SECOND_PREDICATE_WRITE = re.compile(r"\S*(?:SETP|LOP3)\S* (P\d), (P\d)")
ATOMIC_RESULT = re.compile(r"ATOMG\S* PT, (R\w+),")
REGISTER = re.compile(r"\bR\d+\b")

# opcodes whose first operand is not a register they write
NO_REGISTER_RESULT = ("ST", "RED", "BRA", "BSSY", "BSYNC")
# opcodes that write a register pair, named by its first register
PAIR_RESULT = ("IMAD.WIDE", "LDG.E.64", "LDC.64", "ATOMG.E.EXCH.64", "ATOMG.E.CAS.64", "ATOMG.E.ADD.64",
               "ATOMG.E.OR.64", "CS2R")  # fmt: skip

T = TypeVar("T")


@dataclass(frozen=True)
class Control:
    """The scheduling controls of one instruction, from bits 41..61 of its high word."""

    stall: int
    yield_flag: int
    write_sb: int  # the scoreboard it sets when its result lands; NO_SCOREBOARD for none
    read_sb: int  # the scoreboard it sets when its operands are read
    wait_mask: int  # bit i: it waits for scoreboard i
    reuse: int

    @classmethod
    def decode(cls, high: int) -> Control:
        """The controls held in the high 64-bit word of an instruction."""
        bits = high >> 41
        return cls(
            stall=bits & 0xF,
            yield_flag=(bits >> 4) & 1,
            write_sb=(bits >> 5) & 7,
            read_sb=(bits >> 8) & 7,
            wait_mask=(bits >> 11) & 0x3F,
            reuse=(bits >> 17) & 0xF,
        )

    def waits_on(self, scoreboard: int) -> bool:
        return bool(self.wait_mask >> scoreboard & 1)

    def render(self) -> str:
        """``W<write> R<read> wait[<scoreboards>] S<stall> Y<yield> reuse<mask>``, '-' for none."""
        write = "-" if self.write_sb == NO_SCOREBOARD else str(self.write_sb)
        read = "-" if self.read_sb == NO_SCOREBOARD else str(self.read_sb)
        waits = "".join(str(sb) for sb in range(6) if self.waits_on(sb)) or "-"
        return f"W{write} R{read} wait[{waits:6s}] S{self.stall:<2d} Y{self.yield_flag} reuse{self.reuse:x}"


@dataclass(frozen=True)
class Instruction:
    addr: int
    text: str  # as nvdisasm prints it, runs of spaces made one, without the ';'
    low: int
    high: int
    control: Control

    @property
    def guarded(self) -> bool:
        return self.text.startswith("@")

    @property
    def body(self) -> str:
        """The text without its guard predicate."""
        return self.text.split(" ", 1)[1] if self.guarded else self.text

    @property
    def opcode(self) -> str:
        return self.body.split()[0]

    def line(self) -> str:
        """Address, control bits and text, as the listing prints an instruction."""
        return f"{self.addr:6x} {self.control.render()}  {self.text}"


@dataclass(frozen=True)
class Listing:
    instructions: list[Instruction]
    labels: dict[str, int]  # label -> the address of the instruction after it

    def index_of(self, addr: int) -> int:
        return addr // 16  # one instruction every 16 bytes; see check_contiguous


def parse(text: str) -> Listing:
    """The instructions and labels of ``nvdisasm -hex -c`` output."""
    instructions: list[Instruction] = []
    labels: dict[str, int] = {}
    pending_labels: list[str] = []
    low_half: tuple[int, str, int] | None = None  # an instruction still waiting for its high word
    for line in text.splitlines():
        label = LABEL.match(line)
        if label:
            pending_labels.append(label.group(1))
            continue
        found = INSTRUCTION.search(line)
        if found:
            if low_half is not None:
                raise ValueError(f"no high word after the instruction at {low_half[0]:#x}")
            addr = int(found.group(1), 16)
            low_half = (addr, " ".join(found.group(2).split()), int(found.group(3), 16))
            for name in pending_labels:
                labels[name] = addr
            pending_labels = []
            continue
        high = HIGH_WORD.match(line)
        if high and low_half is not None:
            addr, body, low = low_half
            word = int(high.group(1), 16)
            instructions.append(Instruction(addr, body, low, word, Control.decode(word)))
            low_half = None
    return Listing(instructions, labels)


def check_contiguous(listing: Listing) -> None:
    """The walk finds an instruction by its address: one function, no gaps."""
    for k, ins in enumerate(listing.instructions):
        if ins.addr != 16 * k:
            raise ValueError(f"instruction {k} is at {ins.addr:#x}, not {16 * k:#x}: one function per listing")


def successors(listing: Listing, index: int) -> list[int]:
    """What can run after instruction ``index``: a branch's target first, then the next instruction."""
    ins = listing.instructions[index]
    following = [index + 1] if index + 1 < len(listing.instructions) else []
    opcode = ins.opcode
    if opcode.startswith("BRA"):
        target = BRANCH_TARGET.search(ins.text)
        targets = [listing.index_of(listing.labels[target.group(1)])] if target else []
        conditional = ins.guarded or BRANCH_ON_PREDICATE.match(ins.body) is not None
        return targets + (following if conditional else [])
    if opcode.startswith(("EXIT", "RET", "BRX", "JMX")):
        return following if ins.guarded else []
    return following


def known_after(ins: Instruction, known: dict[str, bool]) -> dict[str, bool]:
    """The constant predicates known after ``ins``, given those known before it (updated in place)."""
    constant = CONSTANT_PREDICATE.match(ins.text)
    if constant:
        # the LUT's value where all three inputs are true (PT)
        known[constant.group(1)] = int(constant.group(2), 16) & 0x80 != 0
        return known
    for written in PREDICATE_WRITE.findall(ins.text):
        known.pop(written, None)
    second = SECOND_PREDICATE_WRITE.match(ins.text)
    if second:
        known.pop(second.group(2), None)
    return known


def feasible(ins: Instruction, known: dict[str, bool], nexts: list[int]) -> list[int]:
    """``nexts`` without the way a branch on a known predicate does not go."""
    branch = GUARDED_BRANCH.match(ins.text)
    if branch and branch.group(2) in known and len(nexts) == 2:
        taken = known[branch.group(2)] != (branch.group(1) == "!")
        return [nexts[0]] if taken else [nexts[1]]
    return nexts


@dataclass(frozen=True)
class PathState:
    index: int
    crossed_back_edge: bool
    known: tuple[tuple[str, bool], ...]  # constant predicates, sorted


def first_hits(
    listing: Listing, start: int, hit: Callable[[Instruction], T | None], limit: int
) -> Iterator[tuple[PathState, T]]:
    """On each feasible path from instruction ``start``, the first instruction where ``hit`` gives a value."""
    stack = [PathState(j, j <= start, ()) for j in successors(listing, start)]
    seen: set[PathState] = set()
    while stack:
        state = stack.pop()
        if state in seen or len(seen) > limit:
            continue
        seen.add(state)
        ins = listing.instructions[state.index]
        value = hit(ins)
        if value is not None:
            yield state, value
            continue
        if state.index == start:
            continue
        known = known_after(ins, dict(state.known))
        carried = tuple(sorted(known.items()))
        for j in feasible(ins, known, successors(listing, state.index)):
            stack.append(PathState(j, state.crossed_back_edge or j <= state.index, carried))


def result_registers(atomic: Instruction) -> set[str] | None:
    """The registers an ATOMG writes its result to (none for RZ); None if it is not an ATOMG with a result."""
    found = ATOMIC_RESULT.search(atomic.text)
    if not found:
        return None
    if found.group(1) == "RZ":
        return set()
    n = int(found.group(1)[1:])
    return {f"R{n}", f"R{n + 1}"} if ".64" in atomic.opcode else {f"R{n}"}


def names_any(ins: Instruction, registers: set[str]) -> bool:
    return bool(set(REGISTER.findall(ins.text)) & registers)


@dataclass(frozen=True, order=True)
class Wait:
    addr: int
    crossed_back_edge: bool
    uses_result: bool
    text: str


@dataclass(frozen=True)
class AtomicWaits:
    atomic: Instruction
    scoreboard: int
    waits: list[Wait]  # by address, one for each (back edge crossed, result used) seen there


def waits_after(listing: Listing, index: int, registers: set[str]) -> AtomicWaits:
    """The first waits on the write scoreboard of the atomic at ``index``, on every feasible path."""
    atomic = listing.instructions[index]
    scoreboard = atomic.control.write_sb

    def uses_result_if_waiting(ins: Instruction) -> bool | None:
        return names_any(ins, registers) if ins.control.waits_on(scoreboard) else None

    hits = first_hits(listing, index, uses_result_if_waiting, WAIT_STATES)
    waits = {Wait(listing.instructions[s.index].addr, s.crossed_back_edge, used, listing.instructions[s.index].text)
             for s, used in hits}  # fmt: skip
    return AtomicWaits(atomic, scoreboard, sorted(waits))


def analyse(listing: Listing, only: str = "") -> list[AtomicWaits]:
    """The waits after each ATOMG with a result and a write scoreboard whose text holds ``only`` (all: "")."""
    check_contiguous(listing)
    found = []
    for k, ins in enumerate(listing.instructions):
        if "ATOMG" not in ins.text or (only and only not in ins.text):
            continue
        registers = result_registers(ins)
        if registers is None or ins.control.write_sb == NO_SCOREBOARD:
            continue
        found.append(waits_after(listing, k, registers))
    return found


def register_use(ins: Instruction, registers: set[str]) -> str | None:
    """'read' or 'write' if ``ins`` names one of ``registers`` as a source or as its result.

    A rough reading: the first operand is the result (the second for ATOMG, whose first is PT),
    except for stores, reductions and branches; a pair result counts both registers."""
    opcode, _, rest = ins.body.partition(" ")
    operands = [o.strip() for o in rest.split(",")] if rest else []
    if opcode.startswith("ATOMG"):
        written = set(REGISTER.findall(operands[1]))
    elif operands and not opcode.startswith(NO_REGISTER_RESULT):
        written = set(REGISTER.findall(operands[0]))
    else:
        written = set()
    read = set(REGISTER.findall(",".join(operands[1:] if written else operands)))
    if written and opcode.startswith(PAIR_RESULT):
        n = min(int(r[1:]) for r in written)
        written = {f"R{n}", f"R{n + 1}"}
    if read & registers:
        return "read"
    if written & registers:
        return "write"
    return None


@dataclass(frozen=True, order=True)
class Touch:
    addr: int
    use: str  # 'read' or 'write'
    crossed_back_edge: bool
    text: str


def first_touches(listing: Listing, addr: int) -> list[Touch]:
    """From the ATOMG at ``addr``, the first instruction on each feasible path that reads or writes
    one of its result registers, waits ignored."""
    check_contiguous(listing)
    index = listing.index_of(addr)
    registers = result_registers(listing.instructions[index])
    if not registers:
        raise ValueError(f"no ATOMG with a result register at {addr:#x}")
    hits = first_hits(listing, index, lambda ins: register_use(ins, registers), TOUCH_STATES)
    touches = {Touch(listing.instructions[s.index].addr, use, s.crossed_back_edge, listing.instructions[s.index].text)
               for s, use in hits}  # fmt: skip
    return sorted(touches)


def print_waits(found: list[AtomicWaits]) -> None:
    for item in found:
        print(item.atomic.line())
        for wait in item.waits:
            when = "after a back-edge" if wait.crossed_back_edge else "same pass      "
            use = "uses result" if wait.uses_result else "NOT using result"
            print(f"     waits SB{item.scoreboard} at {wait.addr:6x} {when} {use}: {wait.text}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sass", type=Path, help="the output of nvdisasm -hex -c")
    ap.add_argument("substring", nargs="?", default="EXCH", help="only the ATOMGs whose text holds it (default EXCH)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--list", type=int, nargs="?", const=40, metavar="N", help="the first N instructions, decoded")
    mode.add_argument("--touch", type=lambda s: int(s, 16), metavar="ADDR",
                      help="first uses of the result of the ATOMG at ADDR (hex)")  # fmt: skip
    args = ap.parse_args(argv)
    listing = parse(args.sass.read_text())
    if args.list is not None:
        for ins in listing.instructions[: args.list]:
            print(ins.line())
    elif args.touch is not None:
        for touch in first_touches(listing, args.touch):
            when = "after a back-edge" if touch.crossed_back_edge else "same pass"
            print(f"{touch.addr:6x} {touch.use:5s} {when}: {touch.text}")
    else:
        print_waits(analyse(listing, args.substring))
    return 0


if __name__ == "__main__":
    sys.exit(main())
