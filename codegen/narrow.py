"""Each generated function's ``G`` narrowed to the fields of the state it and its callees use.

Why. Numba passes a namedtuple of arrays by value, as every field of every array (stencil2d's
``State``: 341 scalars), so each call that hands ``G`` on, and each function that takes it, is
lowered as hundreds of LLVM instructions that NVVM then folds away again: the executor's
``dispatch`` was 2,096 lines of LLVM IR for three calls (bench/NOTES.md, the thirty-fifth
session). Lowering them, printing them and NVVM's reading them were a cold compile's largest
program-sized share (B6).

What. A pass over the rendered module, read with :mod:`ast` (the module is plain Python; nothing
is parsed by hand): for every function with a parameter ``G``, the fields it reads (``G.sched``)
and the functions of the module it hands ``G`` on to whole; what a function needs is its own
fields and everything its callees need. A function whose every call passes ``G`` itself gets a
namedtuple of just those fields (``G_1``, ``G_2``, ...: one a set of fields, listed after the
``State``), built at each call from the caller's ``G`` (which holds them: a caller needs what its
callees need). The kernels keep the whole ``State``; so does a function that uses ``G`` otherwise
(stores it, returns it, passes it to a runtime helper), and every function that hands ``G`` to
it. Inside a function ``G`` keeps its name and its fields theirs, so the rendered bodies do not
change: only the calls do, at the exact positions :mod:`ast` gives. (It replaced parallel.py's
narrowing of the loop bodies alone; the eighth session's first try, when G's marshalling was a
small share of ~36 functions, won no time and was not merged.)

``ENABLED = False`` renders every function with the whole ``State`` (for measuring the pass).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

ENABLED = True
STATE = "State"  # the module's namedtuple of the whole state (codegen/__init__.py's header)


@dataclass
class _Fn:
    """One function of the module that takes ``G``: where, what it reads and whom it hands G to."""

    node: ast.FunctionDef
    g_index: int  # the position of its parameter G
    kernel: bool  # a kernel (it gets the whole State from the launch)
    fields: set[str] = field(default_factory=set)
    calls: list[tuple[str, ast.Name]] = field(default_factory=list)  # (callee, the G passed)
    whole: bool = False  # uses G otherwise than reading a field or handing it to a function here


def narrow_state(source: str) -> str:
    """``source`` with each function that can take less than the whole State given only that."""
    if not ENABLED:
        return source
    tree = ast.parse(source)
    state = _state(tree)
    if state is None:
        return source
    order, at = state
    fns, named, called = _functions(tree)
    if not fns:
        return source
    needs = _needs(fns, set(order))
    narrowed = _narrowable(order, fns, needs, named, called)
    if not narrowed:
        return source
    classes = _classes(fns, narrowed)
    lines = source.split("\n")
    edits: dict[int, list[tuple[int, int, str]]] = {}  # line -> (start, end, text), byte offsets
    for caller, fn in fns.items():
        for callee, name in fn.calls:
            if callee in narrowed and classes.get(caller) != classes[callee]:
                args = ", ".join(f"G.{f}" for f in narrowed[callee])
                edits.setdefault(name.lineno - 1, []).append(
                    (name.col_offset, name.end_col_offset or name.col_offset + 1, f"{classes[callee]}({args})")
                )
    for k, spans in edits.items():
        raw = lines[k].encode()
        for start, end, text in sorted(spans, reverse=True):
            raw = raw[:start] + text.encode() + raw[end:]
        lines[k] = raw.decode()
    # the classes together, right after the State they are parts of
    notes = ["# each function's part of G (codegen/narrow.py): the fields it and its callees read"]
    for cls in dict.fromkeys(classes.values()):
        users = ", ".join(n for n, c in classes.items() if c == cls)
        fields = narrowed[next(n for n, c in classes.items() if c == cls)]
        quoted = ", ".join(f'"{f}"' for f in fields) + ("," if len(fields) == 1 else "")
        notes.append(f'{cls} = namedtuple("{cls}", ({quoted}))  # {users}')
    lines[at:at] = notes
    return "\n".join(lines)


def _classes(fns: dict[str, _Fn], narrowed: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """Each narrowed function's namedtuple, one a set of fields, numbered in the module's order
    (``G_1``: the generator's own numbered name, codegen/names.py): a call between two functions
    of one class passes G as it is, and Numba types each function for one class of G."""
    by_fields: dict[tuple[str, ...], str] = {}
    out: dict[str, str] = {}
    for name in sorted(narrowed, key=lambda n: fns[n].node.lineno):
        out[name] = by_fields.setdefault(narrowed[name], f"G_{len(by_fields) + 1}")
    return out


def _state(tree: ast.Module) -> tuple[list[str], int] | None:
    """The whole State's fields in their order, and the line just after its definition (0-based,
    an index into the lines); None where the module has no State."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [STATE]:
            call = node.value
            if isinstance(call, ast.Call) and len(call.args) == 2 and isinstance(call.args[1], ast.Tuple):
                fields = [e.value for e in call.args[1].elts if isinstance(e, ast.Constant)]
                return fields, node.end_lineno or node.lineno
    return None


def _is_kernel(node: ast.FunctionDef) -> bool:
    """A kernel: ``cuda.jit`` without ``device=True`` (other decorators make device functions)."""
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if ast.unparse(target) == "cuda.jit":
            keywords = d.keywords if isinstance(d, ast.Call) else []
            return not any(k.arg == "device" and isinstance(k.value, ast.Constant) and k.value.value for k in keywords)
    return False


def _functions(tree: ast.Module) -> tuple[dict[str, _Fn], dict[str, int], dict[str, int]]:
    """Every module-level function with a parameter G and its uses of G; and how often each of
    them is named anywhere, and called (by its name), in the module. One walk of the tree."""
    fns: dict[str, _Fn] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            params = [a.arg for a in node.args.args]
            if "G" in params and not node.args.vararg and not node.args.kwarg:
                fns[node.name] = _Fn(node, params.index("G"), _is_kernel(node))
    named: dict[str, int] = {}
    called: dict[str, int] = {}
    for node in tree.body:
        fn = fns.get(node.name) if isinstance(node, ast.FunctionDef) else None
        handled: set[int] = set()  # the G names that are a field's base or a call's argument
        uses: list[ast.Name] = []
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                if sub.id in fns:
                    named[sub.id] = named.get(sub.id, 0) + 1
                elif sub.id == "G" and fn is not None:
                    uses.append(sub)
            elif isinstance(sub, ast.Attribute):
                if fn is not None and isinstance(sub.value, ast.Name) and sub.value.id == "G":
                    fn.fields.add(sub.attr)
                    handled.add(id(sub.value))
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in fns:
                called[sub.func.id] = called.get(sub.func.id, 0) + 1
                k = fns[sub.func.id].g_index
                if fn is not None and not sub.keywords and k < len(sub.args):
                    arg = sub.args[k]
                    if isinstance(arg, ast.Name) and arg.id == "G":
                        fn.calls.append((sub.func.id, arg))
                        handled.add(id(arg))
        if fn is not None:
            fn.whole = any(id(n) not in handled or isinstance(n.ctx, ast.Store) for n in uses)
    return fns, named, called


def _needs(fns: dict[str, _Fn], every: set[str]) -> dict[str, set[str]]:
    """What each function needs of G: its own fields and its callees' needs (all, if whole)."""
    needs = {name: (set(every) if fn.whole else set(fn.fields)) for name, fn in fns.items()}
    changed = True
    while changed:  # a fixed point (the call graph is small; no recursion is assumed)
        changed = False
        for name, fn in fns.items():
            for callee, _ in fn.calls:
                if not needs[callee] <= needs[name]:
                    needs[name] |= needs[callee]
                    changed = True
    return needs


def _narrowable(
    fields: list[str], fns: dict[str, _Fn], needs: dict[str, set[str]], named: dict[str, int], called: dict[str, int]
) -> dict[str, tuple[str, ...]]:
    """The functions given a narrowed G, each with its fields in State's order: device functions
    that need less than all of it, named nowhere but as the callee of a call that passes G."""
    order = {f: k for k, f in enumerate(fields)}
    every = set(fields)
    passed: dict[str, int] = {}  # calls that pass G itself
    for fn in fns.values():
        for callee, _ in fn.calls:
            passed[callee] = passed.get(callee, 0) + 1
    out: dict[str, tuple[str, ...]] = {}
    for name, fn in fns.items():
        if fn.kernel or not passed.get(name) or needs[name] >= every:
            continue
        if passed[name] != called.get(name, 0) or named.get(name, 0) != called.get(name, 0):
            continue  # called with something else as G, or named otherwise than called
        out[name] = tuple(sorted(needs[name] & every, key=order.__getitem__))
    return out
