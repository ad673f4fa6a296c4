"""Which locals are live where, over a poll's block IR (codegen/blockir.py).

A poll restores, when it resumes at a state, only the locals live at the
start of that state's block, and its suspend exit spills, for that state,
the same set: what a later poll may read before it writes it. The analysis
is the usual backward one (``live = uses | (live - kills)``) with a worklist;
a :class:`~gasync.codegen.blockir.Suspend` needs what its state's block
needs, and so does an op that may leave through the suspend exit from inside
(``Op.exits``), less what the ops before it always wrote. Only ``domain``
counts (the locals with a frame word); sets are bit masks over it, so a
thousand nested loops stay quick.
"""

from __future__ import annotations

from collections import deque

from gasync.codegen.blockir import Block, Branch, Finish, Goto, Machine, Suspend


class _Flow:
    """One block's transfer: ``live_in = gen | OR over (target, killed) of (live_in[target] & ~killed)``."""

    def __init__(self, b: Block, bit: dict[str, int], at: dict[int, int]):
        def mask(names: frozenset[str]) -> int:
            return sum(bit[n] for n in names if n in bit)

        self.gen, killed = 0, 0
        self.edges: list[tuple[int, int]] = []  # (target block, what the block wrote before it)
        for op in b.ops:
            self.edges += [(at[state], killed) for state in op.exits]
            self.gen |= mask(op.uses) & ~killed
            killed |= mask(op.kills)
        term = b.term
        if isinstance(term, Branch | Finish):
            self.gen |= mask(term.uses) & ~killed
        if isinstance(term, Goto):
            self.edges.append((term.target, killed))
        elif isinstance(term, Branch):
            self.edges += [(term.then, killed), (term.orelse, killed)]
        elif isinstance(term, Suspend):
            self.edges.append((at[term.state], killed))


def live_at_states(m: Machine, domain: frozenset[str]) -> dict[int, frozenset[str]]:
    """For each state a poll resumes in, the locals of ``domain`` live there."""
    names = sorted(domain)
    bit = {n: 1 << k for k, n in enumerate(names)}
    at = dict(m.resume)
    flows = [_Flow(b, bit, at) for b in m.blocks]
    preds: list[set[int]] = [set() for _ in m.blocks]
    for label, flow in enumerate(flows):
        for target, _ in flow.edges:
            preds[target].add(label)
    live = [0] * len(m.blocks)
    todo = deque(reversed(range(len(m.blocks))))
    queued = set(todo)
    while todo:
        label = todo.popleft()
        queued.discard(label)
        flow = flows[label]
        new = flow.gen
        for target, killed in flow.edges:
            new |= live[target] & ~killed
        if new != live[label]:
            live[label] = new
            for p in preds[label] - queued:
                todo.append(p)
                queued.add(p)
    return {state: frozenset(n for n in names if live[label] & bit[n]) for state, label in m.resume}
