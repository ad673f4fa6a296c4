"""Which locals are live where, over a poll's block IR (codegen/blockir.py).

A poll restores, when it resumes at a state, only the locals live at the
start of that state's block, and its suspend exit spills, for that state,
the same set: what a later poll may read before it writes it. The analysis
is the usual backward one over ops (``live = uses | (live - kills)``); a
:class:`~gasync.codegen.blockir.Suspend` needs what its state's block needs,
and so does an op that may leave through the suspend exit from inside
(``Op.exits``). Only ``domain`` counts (the locals with a frame word).
"""

from __future__ import annotations

from gasync.codegen.blockir import Block, Branch, Goto, Machine, Suspend


def live_at_states(m: Machine, domain: frozenset[str]) -> dict[int, frozenset[str]]:
    """For each state a poll resumes in, the locals of ``domain`` live there."""
    live_in: dict[int, frozenset[str]] = {b.label: frozenset() for b in m.blocks}
    at = dict(m.resume)
    changed = True
    while changed:
        changed = False
        for b in reversed(m.blocks):
            new = _block_in(b, live_in, at) & domain
            if new != live_in[b.label]:
                live_in[b.label] = new
                changed = True
    return {state: live_in[label] for state, label in m.resume}


def _block_in(b: Block, live_in: dict[int, frozenset[str]], at: dict[int, int]) -> frozenset[str]:
    term = b.term
    if isinstance(term, Goto):
        live = live_in[term.target]
    elif isinstance(term, Branch):
        live = live_in[term.then] | live_in[term.orelse] | term.uses
    elif isinstance(term, Suspend):
        live = live_in[at[term.state]]
    else:
        live = term.uses
    for op in reversed(b.ops):
        live = op.uses | (live - op.kills)
        for state in op.exits:
            live |= live_in[at[state]]
    return live
