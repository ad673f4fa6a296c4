"""Parsing: ``.gasync`` text to :class:`~gasync.dsl.ast.Program`.

Lark reads ``grammar.lark`` and builds its LALR(1) tables; tokens come from
dsl/lexer.py, which gives exactly the tokens of Lark's basic lexer (not the
contextual one: every keyword is a keyword everywhere, so ``let fn = 1;`` is
an error about a reserved word rather than a valid program). The program is
parsed by our own loop over Lark's tables (dsl/lalr.py); a token the loop
rejects becomes the exception Lark's own parse raises there, made from the
loop's stacks, and the exception becomes the diagnostic. AST nodes are built
during the reductions (Lark's ``transformer=`` option) by the rules of
dsl/rules.py, with spans and punctuation handled by dsl/reductions.py and
binary-operator precedence by dsl/expressions.py, so no parse tree is built
and walked again. The rules check what the grammar leaves loose on purpose
(numeric literals, assignment targets, method receivers and buffer
initialisers); such a mistake is held until the whole file has parsed, and a
syntax error in the same item replaces it. Lark's exceptions are translated
into the project's own diagnostics (dsl/syntax_errors.py); no Lark type
leaves this package. After a syntax error the file is parsed again without
the item that holds it (dsl/recovery.py), from where the parser was before
that item (dsl/reparse.py), so that each bad item gets its error. The cyclic
garbage collector is paused while a file is parsed (:mod:`gasync.dsl.gc_pause`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from lark import Lark

from gasync.dsl import ast
from gasync.dsl.diagnostics import ErrorGroup
from gasync.dsl.lalr import Tables, tables_of
from gasync.dsl.lexed import Lexed
from gasync.dsl.lexer import FastLexer, Spec
from gasync.dsl.recovery import recover
from gasync.dsl.reductions import Callbacks, punctuation
from gasync.dsl.reparse import Reparser
from gasync.dsl.rules import Rules


@cache
def _lark() -> Lark:
    grammar = (Path(__file__).with_name("grammar.lark")).read_text()
    callbacks = Callbacks(Rules())
    lark = Lark(
        grammar,
        parser="lalr",
        lexer=FastLexer,
        keep_all_tokens=True,
        maybe_placeholders=True,
        transformer=callbacks,
    )
    callbacks.drop = punctuation(lark, grammar)
    return lark


@cache
def _fast() -> tuple[Spec, Tables | None]:
    lark = _lark()
    return Spec(lark.terminals, lark.ignore_tokens), tables_of(lark)


def parse(text: str, path: str = "<input>") -> ast.Program:
    """Parse one ``.gasync`` file; raise a :class:`~gasync.dsl.diagnostics.ParseError` subclass on
    bad input, or an :class:`ErrorGroup` of them where several items are bad (dsl/recovery.py)."""
    text = text.removeprefix("\ufeff")  # a byte-order mark is no character of the program (editors add one)
    spec, tables = _fast()
    items, errors = recover(Lexed(spec, text), Reparser(_lark(), tables))
    if errors:
        raise errors[0] if len(errors) == 1 else ErrorGroup(errors)
    return ast.Program(path=path, items=tuple(items), source=text)


def parse_file(path: str | Path) -> ast.Program:
    """Read and parse a file (UTF-8)."""
    p = Path(path)
    return parse(p.read_text(encoding="utf-8"), str(p))
