"""Programs whose identifiers are named to meet the generated module's own names, and what
tells a program's names in a generated module from the generator's (codegen/names.py):
tests/codegen/test_names.py compiles them, tests/sim/test_program_text_sim.py runs some."""

from __future__ import annotations

import ast
import keyword
import re
from functools import cache
from pathlib import Path

import gasync
from gasync.codegen import names
from gasync.codegen.exprs import MATH, NP
from gasync.dsl.syntax_errors import KEYWORDS
from gasync.planner.symbols import BUILTIN_NAMES

ROOT = Path(__file__).parents[1]
SAMPLES = sorted((ROOT / "samples").glob("*.gasync"))
MARK = "zq"  # no fixed name of the module has it
GRAMMAR_WORDS = set(re.findall(r'"(\w+)"', (ROOT / "dsl" / "grammar.lark").read_text()))
# words of the language that are no program's identifiers: keywords, builtins, types,
# buffer inits, reduction operators
LANGUAGE = {*KEYWORDS, *GRAMMAR_WORDS, *BUILTIN_NAMES, *MATH, *NP, "floor", "ceil", "_"}
LANGUAGE |= {"zeros", "iota", "random", "fill", "input", "reduce", "sum", "min", "max", "and", "or"}
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def marked(source: str) -> str:
    """``source`` with each of its identifiers given the MARK in front (methods, the words of
    LANGUAGE, atomics and extern paths kept)."""
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    source = re.sub(r"//[^\n]*", "", source)
    parts = re.split(r'("[^"\n]*")', source)  # (an extern's path stays as it is)

    def mark(m: re.Match[str]) -> str:
        word = m.group()
        return word if word in LANGUAGE or word.startswith("atomic_") else MARK + word

    # not a method (after one '.', not a range's '..'), not inside a number (1e3, 0xff)
    ident = re.compile(r"(?<![\w.])[A-Za-z_]\w*|(?<=\.\.)[A-Za-z_]\w*")
    return "".join(p if p.startswith('"') else ident.sub(mark, p) for p in parts)


def module_names(source: str) -> set[str]:
    """Every name the module defines or reads: globals, arguments, locals, attributes."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.FunctionDef):
            out.add(node.name)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.alias):
            out.add(node.asname or node.name.split(".")[0])
    return out


def untagged(name: str) -> str:
    """``name`` without its tags (``j0_v_acc`` -> ``acc``)."""
    while (tag := names.tag_of(name)) is not None:
        name = name[len(tag) + 1 :]
    return name


def from_the_program(name: str) -> bool:
    """Whether a name with the MARK keeps to the scheme: a tag, then the identifier (or, after a
    numbered tag, a name that keeps to it)."""
    tag = names.tag_of(name)
    if tag is None:
        return False
    rest = name[len(tag) + 1 :]
    if tag not in names.TAGS and tag not in names.INTERNAL:  # a family's j0, r1, g2
        return rest.startswith(MARK) or from_the_program(rest)
    return rest.startswith(MARK)


@cache
def fixed_names() -> tuple[frozenset[str], frozenset[str]]:
    """(module level, inside functions): the generator's own names in the modules of the samples."""
    top: set[str] = set()
    inner: set[str] = set()
    for path in SAMPLES:
        tree = ast.parse(gasync.compile_source(marked(path.read_text()), path.name).generated.source)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                top.add(node.name)
            elif isinstance(node, ast.Assign):
                top |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            elif isinstance(node, ast.Import | ast.ImportFrom):
                top |= {a.asname or a.name.split(".")[0] for a in node.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.arg):
                inner.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                inner.add(node.id)
    mine = {n for n in top | inner if MARK not in n and untagged(n) not in LANGUAGE}
    return frozenset(top & mine), frozenset((inner & mine) - top)


def pieces(name: str) -> set[str]:
    """``name`` and what it begins or ends with between underscores (``group_claim``:
    ``group``, ``claim``), as an identifier might meet it under a tag."""
    parts = name.split("_")
    return {
        name,
        *("_".join(parts[k:]) for k in range(1, len(parts))),
        *("_".join(parts[:k]) for k in range(1, len(parts))),
    }


# names that met the generator's before: a task `instance` (poll_instance), groups `claim`,
# `want`, `wanted` (group_claim, ...), a task `grouped_pipe` beside a group `pipe`
EXTRA = {"instance", "claim", "want", "wanted", "grouped_pipe", "grouped", "pipe", *names.TAGS, *names.INTERNAL}
EXTRA |= {f"{t}_x" for t in names.TAGS} | {"j0", "r0", "g0", "j0_v_x", "x_j0", "e_x", "x_v0", "pipe__b_x"}


@cache
def candidates() -> tuple[str, ...]:
    top, inner = fixed_names()
    found = set(EXTRA)
    for n in top | inner:
        found |= pieces(n)
    ok = (
        n
        for n in found
        if IDENT.fullmatch(n)
        and n not in LANGUAGE
        and not n.startswith(("atomic_", MARK))
        and not keyword.iskeyword(n)  # (allowed, but Python's: they are tested apart below)
    )
    return tuple(sorted(ok))


# Each category's program: an item per name, and what the task `zqmain` does with it. Every
# result goes to its own element of zq_out (k: the name's place), which a run checks.
def category_program(category: str, idents: tuple[str, ...]) -> tuple[str, dict[int, int]]:
    """A program with one thing of ``category`` per identifier, and the values it leaves in
    ``zq_out``: element k for identifier k."""
    n = len(idents)
    head = [f"buffer zq_out: i32[{n}] = zeros;"]
    items: list[str] = []
    main: list[str] = []
    want = {k: k + 1 for k in range(n)}
    for k, c in enumerate(idents):
        if category == "task":
            items.append(f"task {c} {{ zq_out[{k}] = {k + 1}; }}")
        elif category == "instance variable":
            items.append(f"task zq_w{k} for {c} in {k}..{k + 1} {{ zq_out[{c}] = {c} + 1; }}")
        elif category == "async fn":
            items.append(f"async fn {c}(zq_x: i32) -> i32 {{ yield_now().await; return zq_x + 1; }}")
            main.append(f"zq_out[{k}] = {c}({k}).await;")
        elif category == "fn":
            items.append(f"fn {c}(zq_x: i32) -> i32 {{ return zq_x + 1; }}")
            main.append(f"zq_out[{k}] = {c}({k});")
        elif category == "group":
            items.append(
                f"group {c} for zq_g in 0..1 {{ local buffer zq_b: i32[1];"
                f" task zq_t{k} {{ zq_b[0] = {k + 1}; zq_out[{k}] = zq_b[zq_g]; }} }}"
            )
        elif category == "group variable":
            items.append(f"group zq_g{k} for {c} in {k}..{k + 1} {{ task zq_t{k} {{ zq_out[{c}] = {c} + 1; }} }}")
        elif category == "local buffer":
            items.append(
                f"group zq_g{k} {{ local buffer {c}: i32[2];"
                f" task zq_t{k} {{ {c}[1] = {k + 1}; zq_out[{k}] = {c}[1]; }} }}"
            )
        elif category == "local channel":
            items.append(
                f"group zq_g{k} {{ local channel {c}: i32[1];"
                f" task zq_s{k} {{ {c}.send({k + 1}).await; }} task zq_r{k} {{ zq_out[{k}] = {c}.recv().await; }} }}"
            )
        elif category == "buffer":
            head.append(f"buffer {c}: i32[1] = zeros;")
            main.append(f"{c}[0] = {k + 1}; zq_out[{k}] = {c}[0];")
        elif category == "channel":
            head.append(f"channel {c}: i32[1];")
            items.append(f"task zq_c{k} {{ {c}.send({k + 1}).await; zq_out[{k}] = {c}.recv().await; }}")
        elif category == "signal":
            head.append(f"signal {c};")
            main.append(f"{c}.set(); {c}.wait().await; if {c}.is_set() {{ zq_out[{k}] = {k + 1}; }}")
        elif category == "shared":
            head.append(f"shared {c}: i32 = {k};")
            main.append(f"{c}.fetch_add(1); zq_out[{k}] = {c}.load();")
        elif category == "const":
            head.append(f"const {c}: i32 = {k};")
            main.append(f"zq_out[{k}] = {c} + 1;")
        elif category == "local":  # kept across an await, in a task and in an async fn
            main.append(f"let {c}: i32 = {k + 1}; yield_now().await; zq_out[{k}] = {c};")
        elif category == "parameter":
            items.append(f"fn zq_f{k}({c}: i32) -> i32 {{ let zq_y = {c} + 1; return zq_y; }}")
            items.append(f"async fn zq_a{k}({c}: i32) -> i32 {{ yield_now().await; return {c}; }}")
            main.append(f"zq_out[{k}] = zq_a{k}(zq_f{k}({k})).await;")
        elif category == "parallel local":  # a parallel loop's variable, and a local of its body
            items.append(
                f"task zq_p{k} {{ parallel for {c} in {k}..{k + 1} {{ let zq_v = {c} + 1; zq_out[{c}] = zq_v; }}\n"
                f"    parallel for zq_i in {k}..{k + 1} {{ let {c} = zq_i + 1; zq_out[zq_i] = {c}; }} }}"
            )
        else:
            raise AssertionError(category)
    body = "\n".join(f"    {line}" for line in main)
    tail = [f"task zqmain {{\n{body}\n}}"] if main else []
    return "\n".join([*head, *items, *tail]) + "\n", want


CATEGORIES = (
    "task", "instance variable", "async fn", "fn", "group", "group variable", "local buffer", "local channel",
    "buffer", "channel", "signal", "shared", "const", "local", "parameter", "parallel local",
)  # fmt: skip


def top_level_once(source: str) -> list[str]:
    """The module-level names defined more than once."""
    seen: dict[str, int] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            got = [node.name]
        elif isinstance(node, ast.Assign):
            got = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            got = [a.asname or a.name.split(".")[0] for a in node.names]
        else:
            got = []
        for n in got:
            seen[n] = seen.get(n, 0) + 1
    return sorted(n for n, c in seen.items() if c > 1)
