"""What a program's text may become in the generated module: names, and inert text.

Names. Every name the generated module takes from a ``.gasync`` identifier is
``<tag>_<identifier>``: a tag of :data:`TAGS` (``poll``, ``CH``, ``v``, ...), an
underscore, then the identifier as the program spells it (``poll_main``,
``CH_tiles``, ``v_acc``, ``G.B_x``). A few tags take a name already made that way
(a jam copy of local ``v_acc`` is ``j1_v_acc``) or a local item's field
(``g0_b_stage``, group 0's ``L.b_stage``); none takes two identifiers joined. Two
rules keep every such name apart from every other name of the module, whatever
the identifiers are (``instance``, ``claim``, ``dl``, ``G``, ``poll_main``):

- The tags are prefix-free: no ``<tag>_`` begins another tag's ``<tag>_``
  (checked below, at import). Two names of different tags differ in their first
  characters, and two of one tag differ where their identifiers do (each
  identifier names one thing of its kind: one namespace for a program's items,
  one for a function's locals, one for a group's local items).
- No other name of the module (a helper, a constant, an import, an argument, a
  local the generator writes: ``dispatch``, ``group_claim``, ``inst``, ``lbl``)
  begins with ``<tag>_`` and then a letter or an underscore (:func:`is_fixed_ok`).
  Numbered names of the generator's own (``par_3``, ``blk_1``, temporaries
  ``t_4``) follow the underscore with a digit, which no identifier starts with;
  INTERNAL tags (``t``) never take an identifier.

tests/codegen/test_names.py checks the second rule on generated modules whose
identifiers all carry a marker, and runs programs built to collide.

Inert text. A file's path, and the source lines quoted beside what they became,
go into comments and the module's docstring through :func:`inert`, which escapes
every character that could end a comment or a string or start an escape there.
"""

from __future__ import annotations

import re
from functools import lru_cache

# tag -> what its names are. Module-level names first, then a function's, then fields.
TAGS: dict[str, str] = {
    # module level
    "poll": "a task's or a suspending async fn's poll",
    "fn": "a plain fn (or an async fn that never suspends)",
    "ext": "an extern fn, as imported",
    "dispatch": "a group's dispatch to its tasks' polls (the executor's: `dispatch`, no tag)",
    "run_group": "a group instance's runner in its block",
    "pinned": "a group's pinned loop (a warp polls one task instance)",
    "view": "a group's view of its local channels",
    "stuck": "whether a group instance's warps all wait on one view",
    "local_wait": "what a pending task instance of a group waits on",
    "run_parallel": "a group's parallel loops, run by its pinned warps",
    "Locals": "a group's namedtuple of local items",
    "FB_I": "a task's first int frame word",
    "FB_F": "a task's first float frame word",
    "SIGNAL": "a signal's number",
    "CH": "a channel's number",
    "CAP": "a channel's capacity",
    "RES_RECV": "a channel's receive side as a wait-list resource",
    "RES_SEND": "a channel's send side as a wait-list resource",
    "BELL_RECV": "a channel's bell end for receives",
    "BELL_SEND": "a channel's bell end for sends",
    "LONE_RECV": "a channel's lone receiver",
    "LONE_SEND": "a channel's lone sender",
    "TICKETS": "whether a channel's receives take tickets",
    "HOW": "a channel's relaxed words",
    "COUNT": "a counted channel's number of values",
    "NEED": "the tickets a counted channel's sender waits for",
    # a function's locals and parameters
    "v": "a local (a parameter's or a loop's variable too), by its planner name",
    "p": "an async fn's parameter, as its poll takes it",
    "a": "a buffer's array, as a map's iteration helper takes it",
    "e": "a vector load's element, as a vector map's helper takes it",
    "cur": "a crediting channel's cursor",
    "sv": "a channel send's value kept in the poll",
    "rv": "a channel receive's value (and the early look its wait took), in the poll",
    "svok": "whether sv_ holds it",
    "svl": "a local channel's send value kept in a poll on all lanes (its item name)",
    "svlok": "whether svl_ holds it",
    "seen": "a channel's early look at its next send's slot",
    "ring_recv": "a channel's receive end to ring",
    "ring_send": "a channel's send end to ring",
    "L": "a group's Locals, in the kernel",
    # fields: G's (runtime/state.py) and a group's Locals
    "B": "a buffer's array, a field of G",
    "S": "a shared scalar's word, a field of G",
    "b": "a local buffer, a field of Locals",
    "ch": "a local channel's words, a field of Locals",
    "chv": "a local channel's values, a field of Locals",
}
# numbered tags: the number is the generator's, the rest as for TAGS
FAMILIES: dict[str, str] = {
    "j": "copy k of a jammed iteration's local (codegen/jam.py): j<k>_<its name>",
    "r": "a vector load's registers at step u (codegen/vectors.py): r<u>_<buffer>",
    "g": "a local item's shared array in the kernel, group k's (codegen/groups.py): g<k>_<field>",
}
# tags that never take an identifier: the generator's own numbered names
INTERNAL: dict[str, str] = {"t": "a temporary: t_<n>, t_atom_<n>, t_j..., t_d<n>"}


def tag_of(name: str) -> str | None:
    """The tag (TAGS, or a family's ``j0``) that ``name`` begins with, followed by its
    underscore and an identifier's first character; None where there is none."""
    m = _TAGGED.match(name)
    return m.group(1) if m else None


def is_fixed_ok(name: str) -> bool:
    """Whether ``name``, one of the generator's own (no identifier of the program in it),
    stays out of every tag's names."""
    return tag_of(name) is None


def _prefix_free() -> None:
    words = [*TAGS, *INTERNAL, *(f"{f}0" for f in FAMILIES)]
    for a in words:
        for b in words:
            assert a == b or not (b + "_").startswith(a + "_"), (a, b)
    # a family's numbered tags begin no word tag, and no word tag begins one
    for f in FAMILIES:
        for w in [*TAGS, *INTERNAL]:
            assert not re.fullmatch(rf"{f}\d+(_.*)?", w) and not w.startswith(f"{f}_"), (f, w)


_prefix_free()
_TAGGED = re.compile(
    "("
    + "|".join([*(re.escape(t) for t in sorted(TAGS, key=len, reverse=True)), *(rf"{f}\d+" for f in FAMILIES)])
    + ")_[A-Za-z_]"
)


def jam_copy(name: str, k: int) -> str:
    """Copy ``k`` of a jammed iteration's local ``name`` (``v_acc`` -> ``j1_v_acc``)."""
    return f"j{k}_{name}"


def vector_register(item: str, u: int) -> str:
    """A vector load's 16-byte register of buffer ``item`` at step ``u`` (``r0_x``)."""
    return f"r{u}_{item}"


def group_array(k: int, field: str) -> str:
    """The kernel's shared array for field ``field`` of group ``k``'s Locals (``g0_b_stage``)."""
    return f"g{k}_{field}"


# -- inert text --

_UNSAFE = re.compile(r'[^\x20-\x7e]|["\\]')


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    if ch in '"\\':
        return "\\" + ch
    o = ord(ch)
    if o < 0x100:
        return f"\\x{o:02x}"
    if o < 0x10000:
        return f"\\u{o:04x}"
    return f"\\U{o:08x}"


def inert(text: str) -> str:
    """``text`` (a path, a source line) as printable ASCII that nothing can read as code:
    backslashes and double quotes escaped, and every other character that is not printable
    ASCII written as ``\\xNN``, ``\\uNNNN`` or ``\\UNNNNNNNN``. It is safe in a comment (no
    line ends in it) and inside a ``"``-quoted string or docstring, where it reads back
    as ``text``."""
    return _UNSAFE.sub(_escape, text)


@lru_cache(maxsize=8)
def source_lines(source: str) -> tuple[str, ...]:
    """The lines of ``source`` as the lexer counts them (dsl/lexer.py): they end at "\n" only."""
    return tuple(source.split("\n"))


def source_line_text(source: str, line: int) -> str:
    """Line ``line`` (from 1) of ``source``, stripped and inert ('' where there is none)."""
    lines = source_lines(source)
    return inert(lines[line - 1].strip()) if 1 <= line <= len(lines) else ""
