"""Rendering: an indenting emitter, and a block IR machine as a dispatch loop.

:class:`Lines` keeps the indentation, so no renderer pastes indents into its
text. :func:`dispatch` writes a :class:`~gasync.codegen.blockir.Machine` as
``while True: if lbl == k: ...``: a block that one jump alone reaches (not a
resume state's, not the entry) is written in place at that jump, so the
cases are the entry, the resume blocks and the joins of control flow. A
``Suspend`` sets ``st`` (the state) and ``rc`` (what the poll returns) and
breaks to the suspend exit the poll writes after the loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from gasync.codegen.blockir import Block, Branch, Finish, Goto, Machine, Suspend, predecessors

INLINE_DEPTH = 8  # blocks nested deeper than this in their case become cases of their own
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

    def block(self, b: Block, em: Lines, depth: int) -> None:
        for op in b.ops:
            em.lines(op.lines)
        term = b.term
        if isinstance(term, Goto):
            self.jump(term.target, em, depth)
        elif isinstance(term, Branch):
            if term.then in self.alone or term.orelse in self.alone:
                with em.block(f"if {term.cond}:"):
                    self.jump(term.then, em, depth + 1)
                self.jump(term.orelse, em, depth)
            else:
                em.lines([f"lbl = {term.then} if {term.cond} else {term.orelse}", "continue"])
        elif isinstance(term, Suspend):
            em.lines([f"st = {term.state}", f"rc = {term.code}  # {CODE_NAMES.get(term.code, '')}", "break"])
        elif isinstance(term, Finish):
            em.line(f"return {term.value}" if term.value else "return")

    def jump(self, target: int, em: Lines, depth: int) -> None:
        if target in self.alone and depth <= INLINE_DEPTH:
            self.block(self.m.block(target), em, depth)
            return
        if target in self.alone:  # too deep to write in place
            self.alone.discard(target)
            self.todo.append(target)
        em.lines([f"lbl = {target}", "continue"])


def dispatch(m: Machine, em: Lines) -> int:
    """Write ``m``'s dispatch loop at ``em``'s level; return how many cases it has."""
    d = _Dispatch(m)
    cases: dict[int, list[str]] = {}
    while d.todo:
        label = d.todo.pop(0)
        if label in cases:
            continue
        case = Lines(em.level + 2)
        d.block(m.block(label), case, 0)
        cases[label] = case.out
    with em.block("while True:"):
        for label in sorted(cases):
            em.line(f"if lbl == {label}:")
            em.out += cases[label]
    return len(cases)
