"""Names and text in the generated module (codegen/names.py).

A program's identifiers become ``<tag>_<identifier>`` names, and no other name of the module
begins like one: checked on every sample and contract program with each identifier marked.
Then, for every fixed name of a generated module (its defs, module-level assignments and
imports, and its functions' own arguments and locals, found in generated samples) and every
piece of one between underscores, programs that use those names in each category of
identifier compile to a module without a name defined twice (tests/sim/test_program_text_sim.py
runs a subset). And a file's path or source line quoted in the module stays inert text.
"""

from __future__ import annotations

import ast
import keyword

import pytest
from contract.programs import CASES
from names_programs import (
    CATEGORIES,
    IDENT,
    LANGUAGE,
    MARK,
    SAMPLES,
    candidates,
    category_program,
    fixed_names,
    from_the_program,
    marked,
    module_names,
    top_level_once,
    untagged,
)

import gasync
from gasync.codegen import names

CORPUS = [(f"sample-{p.stem}", p.read_text(), {}) for p in SAMPLES] + [(c.name, c.source, c.defines) for c in CASES]


@pytest.mark.parametrize(("name", "source", "defines"), CORPUS, ids=[c[0] for c in CORPUS])
def test_the_programs_names_are_tagged_and_no_other_name_looks_like_one(
    name: str, source: str, defines: dict[str, object]
) -> None:
    program = gasync.compile_source(marked(source), f"{name}.gasync", {MARK + k: v for k, v in defines.items()})
    bad_program, bad_fixed = [], []
    for n in module_names(program.generated.source):
        if MARK in n:
            if not from_the_program(n):
                bad_program.append(n)
        elif not names.is_fixed_ok(n) and untagged(n) not in LANGUAGE:  # (an identifier such as `sum` stays unmarked)
            bad_fixed.append(n)
    assert not bad_program, f"names from the program outside the scheme: {sorted(bad_program)}"
    assert not bad_fixed, f"the generator's own names inside a tag's: {sorted(bad_fixed)}"


def test_the_tags_are_prefix_free_and_tag_of_finds_them() -> None:
    names._prefix_free()
    assert names.tag_of("poll_main") == "poll" and names.tag_of("poll_3") is None
    assert names.tag_of("j12_v_x") == "j12" and names.tag_of("dispatch") is None
    assert names.tag_of("dispatch_pipe") == "dispatch" and names.is_fixed_ok("group_claim")
    assert not names.is_fixed_ok("poll_instance")  # what the executor's dispatch once was


def test_the_fixed_names_include_the_executors_and_helpers() -> None:
    top, inner = fixed_names()
    assert {"dispatch", "executor", "claimable", "gasync_kernel", "dl", "cuda", "int64", "State", "math"} <= top
    assert {"dx", "np", "EX", "TASKS", "SUCC", "ex_enter", "ex_next", "ex_polled", "HAS_POINT", "TRACED"} <= top
    assert {"group_claim", "group_want", "group_wanted", "run_group", "namedtuple"} <= top
    assert {"inst", "w", "lane", "k", "hi", "G", "lbl"} <= inner
    assert len(candidates()) > 300


@pytest.mark.parametrize("category", CATEGORIES)
def test_identifiers_named_after_the_modules_own_names_compile(category: str) -> None:
    idents = candidates()
    if category in ("local", "parameter", "signal", "async fn"):
        chunks = [idents[k : k + 150] for k in range(0, len(idents), 150)]  # (one poll's size)
    else:
        chunks = [idents]
    for chunk in chunks:
        source, _ = category_program(category, chunk)
        program = gasync.compile_source(source, f"{category}.gasync")
        text = program.generated.source
        compile(text, f"{category}.py", "exec")  # a SyntaxError (a repeated argument, ...) fails here
        assert not top_level_once(text), f"{category}: defined twice: {top_level_once(text)}"


@pytest.mark.parametrize("category", CATEGORIES)
def test_python_keywords_and_builtins_as_identifiers_compile(category: str) -> None:
    idents = tuple(
        n for n in (*keyword.kwlist, "print", "len", "range", "object", "type", "self", "__init__", "__name__")
        if n not in LANGUAGE and IDENT.fullmatch(n)
    )  # fmt: skip
    source, _ = category_program(category, idents)
    text = gasync.compile_source(source, f"{category}.gasync").generated.source
    compile(text, f"{category}.py", "exec")
    assert not top_level_once(text)


# -- inert text --

PATHS = [
    'x""";open("PWNED", "w");"""y.gasync',
    "x''';open('PWNED', 'w');'''y.gasync",
    "a\\ub.gasync",
    "a\\N{x}\\x.gasync",
    "new\nline.gasync",
    'quote"d.gasync',
    "quote'd.gasync",
    "caf\u00e9_\u03b1\u03b2\u03b3_\u65e5\u672c_\U0001f600.gasync",
    "nul\x00and\r\x0b\x0c\x1c\x85\u2028end.gasync",
    "trailing\\",
]


@pytest.mark.parametrize("path", PATHS)
def test_a_path_is_inert_in_the_docstring_and_the_comments(path: str) -> None:
    source = "buffer out: i32[2] = zeros;\nfn f(x: i32) -> i32 { return x + 1; }\ntask main { out[0] = f(1); }\n"
    text = gasync.compile_source(source, path).generated.source
    tree = ast.parse(text)
    assert ast.get_docstring(tree, clean=False).startswith(f"Generated by gasync {gasync.__version__} from {path} --")
    assert not [n for n in tree.body[1:] if isinstance(n, ast.Expr)], "a statement of the path's"
    assert text.isascii() and "\x00" not in text
    assert f"# {names.inert(path)}:3: task main {{ out[0] = f(1); }}" in text


SOURCE_TEXT = [
    '/* """ */ // """ \\ \\u \\N{x} \'\'\' " ',
    "// \u00e9\u65e5 \U0001f600 \x85 \u2028 \x0c \x1c \x0b",
    "/* a\rcarriage */",
    "// a comment with a NUL \x00 in it",
]


@pytest.mark.parametrize("note", SOURCE_TEXT)
def test_source_text_quoted_in_comments_is_inert(note: str) -> None:
    source = f"buffer out: i32[2] = zeros; {note}\ntask main {{ out[0] = 1; {note}\n out[1] = 2; }} {note}\n"
    try:
        program = gasync.compile_source(source, "notes.gasync")
    except (gasync.ErrorGroup, gasync.GasyncError):
        pytest.skip("the language does not take this text")
    text = program.generated.source
    tree = ast.parse(text)
    assert not [n for n in tree.body[1:] if isinstance(n, ast.Expr)]
    assert text.isascii() and "\x00" not in text
    # the line numbers in comments are the lexer's (lines end at "\n" only)
    assert "# notes.gasync:3: out[1] = 2; }" in text


def test_inert_reads_back_in_a_string_and_keeps_printable_ascii() -> None:
    for s in [*PATHS, *SOURCE_TEXT, "plain/path.gasync"]:
        assert ast.literal_eval(f'"""{names.inert(s)}"""') == s
        assert ast.literal_eval(f'"{names.inert(s)}"') == s
        assert "\n" not in names.inert(s) and names.inert(s).isascii()
    assert names.inert("plain/path-1.gasync") == "plain/path-1.gasync"


def test_an_extern_path_with_a_python_keyword_imports_through_importlib() -> None:
    source = """\
buffer out: f32[1] = zeros;
extern fn f(x: f32) -> f32 from "pkg.class:def";
extern fn g(x: f32) -> f32 from "mylib.kernels:gelu";
task main { out[0] = f(1.0) + g(2.0); }
"""
    text = gasync.compile_source(source, "externs.gasync").generated.source
    compile(text, "externs.py", "exec")
    assert 'ext_f = getattr(importlib.import_module("pkg.class"), "def")' in text
    assert "from mylib.kernels import gelu as ext_g" in text
