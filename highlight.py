"""Syntax highlighting of ``.gasync``: a Pygments lexer, and the TextMate grammar editors read.

Both are built from the compiler's own tables, so they cannot drift from the
language: the keywords of ``dsl/syntax_errors.py`` (the grammar's, every one
reserved everywhere), the scalar types of ``planner/ir.py``, the built-in
functions of ``planner/calls.py`` and the reduction operators of
``planner/reduces.py`` (``reduce max``: names in the grammar, highlighted only
there); the token patterns follow ``dsl/grammar.lark`` (numbers as loose as the
grammar's, so that ``12abc`` is one token; block comments that do not nest, and
one left open runs to the end of the text, as in an editor). The lexer is
registered with Pygments under the name ``gasync`` (the ``pygments.lexers``
entry point in pyproject.toml), so ``pygmentize -l gasync``, Sphinx and MkDocs
find it. The TextMate grammar is ``editors/vscode/syntaxes/gasync.tmLanguage.json``,
written by ``python -m gasync.highlight > FILE`` (a test checks that it is up to date).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Whitespace

from gasync.dsl.syntax_errors import KEYWORDS
from gasync.planner.calls import BUF_ATOMICS, MATH_FNS
from gasync.planner.ir import SCALARS
from gasync.planner.reduces import OPS as REDUCE_OPS

DECLARATIONS = ("const", "buffer", "shared", "signal", "channel", "fn", "extern", "task", "async", "group", "local")
CONSTANTS = ("true", "false")
CONTROL = tuple(k for k in KEYWORDS if k not in DECLARATIONS and k not in CONSTANTS)
# The built-in futures (planner/futures.py) and buffer initialisers (dsl/parser.py) are
# names, not keywords, in the grammar: highlighted where they are called.
FUTURES = ("join", "yield_now", "sleep")
INITIALISERS = ("zeros", "iota", "input", "random", "fill")
BUILTINS = (*MATH_FNS, *BUF_ATOMICS, *FUTURES, *INITIALISERS)
# `reduce OP { ... }` after a parallel or bulk for: `reduce` and OP are names in the grammar (a task
# may be called `reduce`), highlighted as a keyword and a built-in where they make a reduction.
REDUCE = rf"\b(reduce)(\s+)({'|'.join(REDUCE_OPS)})\b(?=\s*\{{)"

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
NUMBER_FLOAT = r"\d\w*\.\d\w*(?:(?<=[eE])[+-]\d\w*)?|\d+[eE][+-]?\d+\w*"
NUMBER_INT = r"\d\w*"
OPERATORS = r"<<=|>>=|[-+*/%&|^]=|==|!=|<=|>=|&&|\|\||<<|>>|=>|->|\.\.|[-+*/%<>=!~&|^]"
PUNCTUATION = r"[{}()\[\];:,.]"


class GasyncLexer(RegexLexer):
    """Pygments lexer for gasync programs."""

    name = "gasync"
    aliases = ["gasync"]
    filenames = ["*.gasync"]
    mimetypes = ["text/x-gasync"]
    url = "https://github.com/"  # the project has no home page of its own; Pygments asks for one

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//[^\n]*", Comment.Single),
            (r"/\*[\s\S]*?(?:\*/|\Z)", Comment.Multiline),  # unclosed: to the end, as the compiler reads it
            (r'"[^"\\\n]*"', String.Double),
            (rf"(fn|task|group)(\s+)({IDENT})", bygroups(Keyword.Declaration, Whitespace, Name.Function)),
            (REDUCE, bygroups(Keyword, Whitespace, Name.Builtin)),
            (words(DECLARATIONS, suffix=r"\b"), Keyword.Declaration),
            (words(CONSTANTS, suffix=r"\b"), Keyword.Constant),
            (words(CONTROL, suffix=r"\b"), Keyword),
            (words(SCALARS, suffix=r"\b"), Keyword.Type),
            (words(BUILTINS, suffix=r"\b(?=\s*\()"), Name.Builtin),
            (rf"(=)(\s*)({'|'.join(INITIALISERS)})\b", bygroups(Operator, Whitespace, Name.Builtin)),
            (NUMBER_FLOAT, Number.Float),
            (NUMBER_INT, Number.Integer),
            (OPERATORS, Operator),
            (PUNCTUATION, Punctuation),
            (IDENT, Name),
        ]
    }


def _alternatives(names: tuple[str, ...]) -> str:
    return r"\b(?:" + "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n))) + r")\b"


def textmate_grammar() -> dict[str, Any]:
    """The TextMate grammar (VS Code, Sublime Text, GitHub's linguist and others read it)."""
    return {
        "$schema": "https://raw.githubusercontent.com/martinring/tmlanguage/master/tmlanguage.json",
        "name": "gasync",
        "scopeName": "source.gasync",
        "fileTypes": ["gasync"],
        "comment": "Written by `python -m gasync.highlight` from the compiler's tables: do not edit by hand.",
        "patterns": [
            {"name": "comment.line.double-slash.gasync", "match": r"//.*$"},
            {"name": "comment.block.gasync", "begin": r"/\*", "end": r"\*/"},
            {"name": "string.quoted.double.gasync", "match": r'"[^"\\]*"'},
            {
                "match": rf"\b(fn|task|group)\s+({IDENT})",
                "captures": {"1": {"name": "storage.type.gasync"}, "2": {"name": "entity.name.function.gasync"}},
            },
            {
                "match": REDUCE,
                "captures": {"1": {"name": "keyword.control.gasync"}, "3": {"name": "support.function.builtin.gasync"}},
            },
            {
                "match": rf"(?<![=!<>])(=)\s*({'|'.join(INITIALISERS)})\b",
                "captures": {
                    "1": {"name": "keyword.operator.gasync"},
                    "2": {"name": "support.function.builtin.gasync"},
                },
            },
            {"name": "storage.type.gasync", "match": _alternatives(DECLARATIONS)},
            {"name": "constant.language.gasync", "match": _alternatives(CONSTANTS)},
            {"name": "keyword.control.gasync", "match": _alternatives(CONTROL)},
            {"name": "storage.type.primitive.gasync", "match": _alternatives(SCALARS)},
            {"name": "support.function.builtin.gasync", "match": _alternatives(BUILTINS) + r"(?=\s*\()"},
            {"name": "constant.numeric.float.gasync", "match": rf"\b(?:{NUMBER_FLOAT})"},
            {"name": "constant.numeric.integer.gasync", "match": rf"\b{NUMBER_INT}"},
            {"name": "keyword.operator.gasync", "match": OPERATORS},
            {"name": "punctuation.gasync", "match": PUNCTUATION},
        ],
    }


def textmate_json() -> str:
    """The grammar as the file ``editors/vscode/syntaxes/gasync.tmLanguage.json`` holds it."""
    return json.dumps(textmate_grammar(), indent=2) + "\n"


if __name__ == "__main__":
    sys.stdout.write(textmate_json())
