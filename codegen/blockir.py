"""The block IR a function's labelled blocks are built in before they are rendered.

A :class:`Machine` is a list of :class:`Block`\\ s, each a run of :class:`Op`\\ s
(straight-line statements, already rendered, with the locals they read and the
ones they always write) and exactly one terminator: :class:`Goto`,
:class:`Branch`, :class:`Suspend` (save the state, leave the poll through the
function's one shared suspend exit) or :class:`Finish` (return). The builder
(codegen/blocks.py) may leave blocks nobody jumps to and blocks that only jump
on; :func:`tidy` drops the first, threads jumps through the second and
numbers what is left in order, and :func:`check` verifies the result
(mypyc's ``ircheck`` is the model): every target exists, labels run 0..n-1 in
order, every block is reachable from the entry or a resume state, and each
state a poll can resume in has one block. An op may also leave the poll from
inside its statements (``exits``: a child's FORK, which breaks to the same
suspend exit), or return from there (an ABORT, or a ``return`` in an if):
those carry nothing into another block.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Op:
    lines: tuple[str, ...]  # statements, indented relative to the block
    uses: frozenset[str] = frozenset()  # locals it may read
    kills: frozenset[str] = frozenset()  # locals it always writes (after its reads)
    exits: tuple[int, ...] = ()  # states it may suspend to from inside (a child's FORK)


@dataclass(frozen=True)
class Goto:
    target: int


@dataclass(frozen=True)
class Branch:
    cond: str
    then: int
    orelse: int
    uses: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Suspend:
    state: int  # saved in the state word; the poll resumes at that state's block
    code: int  # what the poll returns: PENDING, or FORK (its warp runs a parallel loop first)


@dataclass(frozen=True)
class Finish:
    value: str  # what the function returns (READY for a poll, and an async fn's value)
    uses: frozenset[str] = frozenset()  # the locals that value reads


Terminator = Goto | Branch | Suspend | Finish


@dataclass(frozen=True)
class Block:
    label: int
    ops: tuple[Op, ...]
    term: Terminator


@dataclass(frozen=True)
class Machine:
    blocks: tuple[Block, ...]  # in label order; blocks[0] is the entry (state 0)
    resume: tuple[tuple[int, int], ...]  # (state, label of the block it resumes at), states ascending

    def block(self, label: int) -> Block:
        return self.blocks[label]

    def resume_label(self, state: int) -> int:
        return dict(self.resume)[state]


class IRError(Exception):
    """The builder produced a machine that breaks one of the rules above (a compiler bug)."""


def successors(term: Terminator) -> tuple[int, ...]:
    if isinstance(term, Goto):
        return (term.target,)
    if isinstance(term, Branch):
        return (term.then, term.orelse)
    return ()


def predecessors(m: Machine) -> dict[int, int]:
    """How many jumps lead to each block (a resume state counts as one more)."""
    count = dict.fromkeys(range(len(m.blocks)), 0)
    count[0] += 1
    for b in m.blocks:
        for t in successors(b.term):
            count[t] += 1
    for _, label in m.resume:
        count[label] += 1
    return count


def tidy(blocks: dict[int, Block], order: list[int], resume: dict[int, int]) -> Machine:
    """Thread jumps through blocks that only jump on, drop unreachable blocks, and number
    the rest 0..n-1 in ``order`` (the order they were built in; the entry first)."""
    keep = {0, *resume.values()}

    def through(label: int) -> int:
        seen = set()
        while label not in keep and not blocks[label].ops and isinstance(blocks[label].term, Goto):
            if label in seen:  # an empty loop: keep one of its blocks
                return label
            seen.add(label)
            label = blocks[label].term.target  # type: ignore[union-attr]
        return label

    def retarget(term: Terminator) -> Terminator:
        if isinstance(term, Goto):
            return Goto(through(term.target))
        if isinstance(term, Branch):
            return replace(term, then=through(term.then), orelse=through(term.orelse))
        return term

    fixed = {k: replace(b, term=retarget(b.term)) for k, b in blocks.items()}
    reached, todo = set(), [0, *resume.values()]
    while todo:
        label = todo.pop()
        if label not in reached:
            reached.add(label)
            todo += successors(fixed[label].term)
    kept = [k for k in dict.fromkeys(order) if k in reached]
    new = {old: n for n, old in enumerate(kept)}

    def renumber(term: Terminator) -> Terminator:
        if isinstance(term, Goto):
            return Goto(new[term.target])
        if isinstance(term, Branch):
            return replace(term, then=new[term.then], orelse=new[term.orelse])
        return term

    out = tuple(Block(new[k], fixed[k].ops, renumber(fixed[k].term)) for k in kept)
    machine = Machine(out, tuple(sorted((s, new[label]) for s, label in resume.items())))
    check(machine)
    return machine


def check(m: Machine) -> None:
    """Raise :class:`IRError` where ``m`` breaks a rule of the block IR."""
    if not m.blocks or m.blocks[0].label != 0:
        raise IRError("a machine starts with block 0")
    for k, b in enumerate(m.blocks):
        if b.label != k:
            raise IRError(f"block {b.label} is at position {k}: labels run in order")
        if not isinstance(b.term, Goto | Branch | Suspend | Finish):
            raise IRError(f"block {k} has no terminator")
        for t in successors(b.term):
            if not 0 <= t < len(m.blocks):
                raise IRError(f"block {k} jumps to block {t}, which does not exist")
    states = [s for s, _ in m.resume]
    if len(set(states)) != len(states):
        raise IRError("a state resumes at two blocks")
    for s, label in m.resume:
        if not 0 <= label < len(m.blocks):
            raise IRError(f"state {s} resumes at block {label}, which does not exist")
    resumable = set(states) | {0}
    for b in m.blocks:
        exits = [b.term.state] if isinstance(b.term, Suspend) else []
        for s in [*exits, *(x for op in b.ops for x in op.exits)]:
            if s not in resumable:
                raise IRError(f"block {b.label} suspends to state {s}, where no block resumes")
    if any(n == 0 for n in predecessors(m).values()):
        raise IRError("a block is unreachable")
