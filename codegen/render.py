"""Rendering: an indenting emitter, and a block IR machine as a dispatch loop.

:class:`Lines` keeps the indentation, so no renderer pastes indents into its
text. :func:`dispatch` writes a :class:`~gasync.codegen.blockir.Machine` as
``while True: if lbl == k: ...``: a block that one jump alone reaches (not a
resume state's, not the entry) is written in place at that jump, so the
cases are the entry, the resume blocks and the joins of control flow. A
``Suspend`` sets ``st`` (the state) and ``rc`` (what the poll returns) and
breaks to the suspend exit the poll writes after the loop.

A jump to a later case that is the last thing its case does falls through
(``lbl = k`` and no ``continue``): the cases after it test ``lbl`` in order, so
it reaches case k without going round the loop. Only jumps backwards (the
program's own loops) and jumps from inside an arm that other code follows
take the loop's back edge. This matters on the GPU: LLVM does not thread a
jump through a loop's header, so each ``continue`` is a real trip round the
dispatch loop, and an await of an async fn that is ready at once was three
of them a level of the chain; a forward edge it threads to its case.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from gasync.codegen.blockir import Block, Branch, Finish, Goto, Machine, Suspend, predecessors

INLINE_DEPTH = 8  # blocks nested deeper than this in their case become cases of their own
# a forward jump at the end of its case falls through (False: every jump goes round the loop, as
# before; for measuring the change beside the code before it: scripts/bench_stage.sh)
FALL_THROUGH = True
CODE_NAMES = {0: "PENDING", 2: "FORK"}


class Lines:
    """Lines of Python at an indentation level that :meth:`block` raises."""

    def __init__(self, level: int = 0):
        self.out: list[str] = []
        self.level = level

    def line(self, text: str) -> None:
        self.out.append("    " * self.level + text if text else "")

    def lines(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.line(text)

    @contextmanager
    def block(self, head: str) -> Iterator[None]:
        self.line(head)
        self.level += 1
        try:
            yield
        finally:
            self.level -= 1


class _Dispatch:
    def __init__(self, m: Machine):
        self.m = m
        preds = predecessors(m)
        fixed = {0, *(label for _, label in m.resume)}
        self.alone = {b.label for b in m.blocks if preds[b.label] == 1 and b.label not in fixed}
        self.cases = sorted({b.label for b in m.blocks} - self.alone)
        self.todo = list(self.cases)
        self.case = 0  # the case being written

    def block(self, b: Block, em: Lines, depth: int, tail: bool) -> bool:
        """Write ``b`` and what it alone leads to; ``tail``: nothing in its case follows it.
        Whether the written code can run off its end (a jump that falls through)."""
        for op in b.ops:
            em.lines(op.lines)
        term = b.term
        if isinstance(term, Goto):
            return self.jump(term.target, em, depth, tail)
        if isinstance(term, Branch):
            if term.then in self.alone or term.orelse in self.alone:
                then = Lines(em.level + 1)
                falls = self.jump(term.then, then, depth + 1, tail)
                em.line(f"if {term.cond}:")
                em.out += then.out
                if not falls:  # the arm ends in continue, break or return: the other needs no else
                    return self.jump(term.orelse, em, depth, tail)
                with em.block("else:"):
                    return self.jump(term.orelse, em, depth + 1, tail) or falls
            em.line(f"lbl = {term.then} if {term.cond} else {term.orelse}")
            return self.go_on(min(term.then, term.orelse), em, tail)
        if isinstance(term, Suspend):
            em.lines([f"st = {term.state}", f"rc = {term.code}  # {CODE_NAMES.get(term.code, '')}", "break"])
        elif isinstance(term, Finish):
            em.line(f"return {term.value}" if term.value else "return")
        return False

    def jump(self, target: int, em: Lines, depth: int, tail: bool) -> bool:
        if target in self.alone and depth <= INLINE_DEPTH:
            return self.block(self.m.block(target), em, depth, tail)
        if target in self.alone:  # too deep to write in place
            self.alone.discard(target)
            self.todo.append(target)
        em.line(f"lbl = {target}")
        return self.go_on(target, em, tail)

    def go_on(self, target: int, em: Lines, tail: bool) -> bool:
        """After ``lbl = ...``: fall through to a later case (True), else round the loop."""
        if FALL_THROUGH and tail and target > self.case:
            return True
        em.line("continue")
        return False


def dispatch(m: Machine, em: Lines) -> int:
    """Write ``m``'s dispatch loop at ``em``'s level; return how many cases it has."""
    d = _Dispatch(m)
    cases: dict[int, list[str]] = {}
    while d.todo:
        label = d.todo.pop(0)
        if label in cases:
            continue
        case = Lines(em.level + 2)
        d.case = label
        d.block(m.block(label), case, 0, tail=True)
        cases[label] = case.out
    with em.block("while True:"):
        for label in sorted(cases):
            em.line(f"if lbl == {label}:")
            em.out += cases[label]
    return len(cases)
