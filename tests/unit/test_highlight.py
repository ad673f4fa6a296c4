"""Syntax highlighting: the Pygments lexer (registered as `gasync`), the tagged doc fences, the TextMate grammar."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import Comment, Error, Keyword, Name, Number, Operator, Punctuation, Text

from gasync.dsl.syntax_errors import KEYWORDS
from gasync.highlight import GasyncLexer, textmate_json

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "samples").glob("*.gasync"))
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench/README.md", ROOT / "editors/README.md"]
GRAMMAR = ROOT / "editors" / "vscode" / "syntaxes" / "gasync.tmLanguage.json"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)


def test_pygments_finds_the_lexer_by_name_and_by_file_name() -> None:
    assert isinstance(get_lexer_by_name("gasync"), GasyncLexer)
    assert isinstance(get_lexer_for_filename("pipeline.gasync"), GasyncLexer)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_sample_lexes_without_an_error_token(path: Path) -> None:
    text = path.read_text()
    tokens = list(GasyncLexer().get_tokens(text))
    assert [v for t, v in tokens if t in Error] == []
    assert "".join(v for _, v in tokens) == (text if text.endswith("\n") else text + "\n")  # nothing lost


def _tokens(text: str) -> list[tuple[object, str]]:
    return [(t, v) for t, v in GasyncLexer().get_tokens(text) if t not in Text]


def test_the_tokens_of_a_line() -> None:
    assert _tokens("buffer b: i32[4] = zeros;\ntask t for i in 0..4 { atomic_add(b[i], 1.5e3 as i32); }") == [
        (Keyword.Declaration, "buffer"), (Name, "b"), (Punctuation, ":"), (Keyword.Type, "i32"), (Punctuation, "["),
        (Number.Integer, "4"), (Punctuation, "]"), (Operator, "="), (Name.Builtin, "zeros"), (Punctuation, ";"),
        (Keyword.Declaration, "task"), (Name.Function, "t"), (Keyword, "for"), (Name, "i"), (Keyword, "in"),
        (Number.Integer, "0"), (Operator, ".."), (Number.Integer, "4"), (Punctuation, "{"),
        (Name.Builtin, "atomic_add"), (Punctuation, "("), (Name, "b"), (Punctuation, "["), (Name, "i"),
        (Punctuation, "]"), (Punctuation, ","), (Number.Float, "1.5e3"), (Keyword, "as"), (Keyword.Type, "i32"),
        (Punctuation, ")"), (Punctuation, ";"), (Punctuation, "}"),
    ]  # fmt: skip


def test_every_keyword_is_a_keyword_and_a_bad_character_an_error() -> None:
    for word in KEYWORDS:
        [(kind, value)] = _tokens(word)
        assert kind in Keyword and value == word
    assert _tokens("let x = 1 @ 2;")[4] == (Error, "@")


def test_every_fence_in_the_docs_is_tagged_and_gasync_fences_lex() -> None:
    gasync_fences = 0
    for doc in DOCS:
        for lang, body in FENCE.findall(doc.read_text()):
            assert lang, f"{doc.name}: an untagged fence: {body[:60]!r}"
            if lang == "gasync":
                gasync_fences += 1
                assert [v for t, v in GasyncLexer().get_tokens(body) if t in Error] == [], (doc.name, body)
    assert gasync_fences >= 6


def test_pygmentize_highlights_a_sample() -> None:
    sample = ROOT / "samples" / "async_double.gasync"
    cmd = [sys.executable, "-m", "pygments", "-l", "gasync", "-f", "html", str(sample)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True).stdout
    assert '<span class="kd">async</span><span class="w"> </span><span class="kd">fn</span>' in out


def test_the_textmate_grammar_is_up_to_date_and_its_patterns_compile() -> None:
    assert GRAMMAR.read_text() == textmate_json(), "run: python -m gasync.highlight > " + str(GRAMMAR)
    grammar = json.loads(GRAMMAR.read_text())
    assert grammar["scopeName"] == "source.gasync" and grammar["fileTypes"] == ["gasync"]
    for pattern in grammar["patterns"]:
        for key in ("match", "begin", "end"):
            if key in pattern:
                re.compile(pattern[key])
    package = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    [entry] = package["contributes"]["grammars"]
    assert (GRAMMAR.parent.parent / entry["path"]).resolve() == GRAMMAR.resolve()
    assert "*.gasync linguist-language=" in (ROOT / ".gitattributes").read_text()


REDUCTIONS = (
    "buffer x: f32[8] = input;\n"
    "task t { let m: f32 = parallel for i in 0..8 reduce max { abs(x[i]) };\n"
    "let n: i64 = bulk for i in 0..8 reduce sum { 1 }; }"
)


def test_a_reduction_highlights_reduce_and_its_operator() -> None:
    tokens = _tokens(REDUCTIONS)
    assert [tokens[k] for k, (_, v) in enumerate(tokens) if v in {"reduce", "max", "sum"}] == [
        (Keyword, "reduce"), (Name.Builtin, "max"), (Keyword, "reduce"), (Name.Builtin, "sum"),
    ]  # fmt: skip
    # `reduce` is a name elsewhere (docs/language.md): a task may be called so, and `after` name it
    assert _tokens("task reduce after w { }")[1] == (Name.Function, "reduce")
    assert _tokens("task r after w, reduce { }")[5] == (Name, "reduce")


def _scopes(line: str) -> list[tuple[str, str]]:
    """(text, scope) of each captured or named match of the TextMate grammar's one-line patterns,
    scanned as TextMate does: the leftmost match wins, the earlier pattern on a tie."""
    patterns = [(re.compile(p["match"]), p) for p in json.loads(GRAMMAR.read_text())["patterns"] if "match" in p]
    out, pos = [], 0
    while found := [(m.start(), k, m, p) for k, (rx, p) in enumerate(patterns) if (m := rx.search(line, pos))]:
        _, _, m, p = min(found, key=lambda f: f[:2])
        if "name" in p:
            out.append((m.group(0), p["name"]))
        out += [(m.group(int(g)), c["name"]) for g, c in p.get("captures", {}).items()]
        pos = max(m.end(), pos + 1)
    return out


def test_the_textmate_grammar_highlights_reductions_and_initialisers() -> None:
    scopes = _scopes(REDUCTIONS.replace("\n", " "))
    builtin, control = "support.function.builtin.gasync", "keyword.control.gasync"
    assert ("input", builtin) in scopes
    assert [s for s in scopes if s[0] in {"reduce", "max", "sum"}] == [
        ("reduce", control), ("max", builtin), ("reduce", control), ("sum", builtin),
    ]  # fmt: skip
    assert _scopes("buffer y: i32[4] = zeros;")[-3:] == [("=", "keyword.operator.gasync"), ("zeros", builtin),
                                                          (";", "punctuation.gasync")]  # fmt: skip
    assert ("reduce", "entity.name.function.gasync") in _scopes("task reduce after w { }")


def test_a_block_comment_left_open_runs_to_the_end_as_in_an_editor() -> None:
    assert _tokens("task main {\n    /* oops\n}\n") == [
        (Keyword.Declaration, "task"), (Name.Function, "main"), (Punctuation, "{"), (Comment.Multiline, "/* oops\n}\n"),
    ]  # fmt: skip
    assert _tokens("/* a */ x /* b */") == [(Comment.Multiline, "/* a */"), (Name, "x"), (Comment.Multiline, "/* b */")]
