"""Recovery goes on from where it was, and reports what parsing every text from its start did.

After a syntax error, recovery (dsl/recovery.py) parses the text again with the bad item
blanked, but from the parser's state saved before that item (dsl/reparse.py), over the tokens
kept from the parse before (dsl/lexed.py), and finds items from the last start it knows
(``ItemStarts``). The errors must be those it gave when every parse read the whole text: the
same messages and notes, at the same lines and columns. The oracle here parses each text with
Lark's own parser from its first character, lexed afresh.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import pytest
from lark.exceptions import UnexpectedCharacters

from gasync.dsl import reparse
from gasync.dsl.diagnostics import ErrorGroup, GasyncError, render
from gasync.dsl.lexed import Lexed
from gasync.dsl.parser import _fast, _lark, parse
from gasync.dsl.recovery import ItemStarts, recover
from gasync.dsl.reparse import Reparser

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
import compile_programs as cp  # noqa: E402

SAMPLES = sorted((Path(__file__).parents[2] / "samples").glob("*.gasync"))

# A pipeline with a mistake in most items: a missing operand, an unknown initialiser, missing
# ';'s, a missing '}' (the next item's keyword), a bad character, a bad literal, a mismatched
# delimiter in a group's task, a loop without its 'reduce', an unclosed string, two more literals.
MULTI = """\
// A pipeline with a mistake in most items.
const N: i64 = 64;
const M: i64 = N * ;
buffer xs: f32[N] = random(1);
buffer ys: f32[N] = ones;
shared total: u64 = 0;
channel tiles: i64[4]
signal done;

fn clamp(v: f32) -> f32 {
    return min(max(v, 0.0), 1.0)
}

async fn scaled(v: f32, n: i64) -> f32 {
    let acc: f32 = 0.0;
    for j in 0..n {
        acc = acc + v * 2.0;
        yield_now().await;
    return acc;
}

task stage for i in 0..2 {
    parallel for j in 0..32 {
        let g = i * 32 + j;
        ys[g] = 2.0 * xs[g] @ 1.0;
    }
}

task load after stage {
    for t in 0..16 {
        tiles.send(t as i64).await;
    }
    tiles.close();
    let big = 0xfg;
}

group pair {
    local buffer tmp: i64[32];
    task a { tmp[0] = (1 + 2 }; }
    task b { tmp[1] = 2; }
}

task use after stage {
    for await t in tiles {
        let r = parallel for k in 0..4 { k };
        total.fetch_add(t as u64);
    }
    done.set();
}

task report after load, use {
    let s = "unterminated;
    done.wait().await;
}

task last {
    let v = 1.;
    let w = .5;
}
"""

# What recovery reported for MULTI when every parse read the whole text (before dsl/reparse.py).
MULTI_ERRORS = [
    "m.gasync:3:20: error[E0101]: expected expression, found ';'",
    "m.gasync:5:21: error[E0113]: unknown buffer initialiser 'ones'; expected zeros, iota, input, random(seed)"
    " or fill(value)",
    "m.gasync:7:22: error[E0102]: expected ';', found keyword 'signal'",
    "m.gasync:11:33: error[E0102]: expected ';', found '}'",
    "m.gasync:22:1: error[E0101]: expected statement or '}', found keyword 'task'"
    " / note: 14:40: unclosed delimiter: this '{' is not closed before the item at 22:1"
    " / note: 20:1: this '}' closes the '{' at 16:19 but is indented differently: a '}' may be missing before it",
    "m.gasync:25:29: error[E0108]: unexpected character '@'",
    "m.gasync:34:15: error[E0111]: invalid numeric literal '0xfg'",
    "m.gasync:39:30: error[E0106]: mismatched closing delimiter: expected ')', found '}'"
    " / note: 39:23: '(' opened here",
    "m.gasync:45:40: error[E0101]: expected 'reduce' and an operator before the loop's body, found '{'"
    " / note: a 'parallel for' that is the value of a 'let' or an assignment is a reduction:"
    " 'parallel for i in a..b reduce OP { ...; value }' (OP: 'sum', 'min', 'max', 'and' or 'or');"
    " a loop that gives no value is a statement of its own",
    "m.gasync:52:13: error[E0110]: unterminated string: a '\"' with no closing quote on this line"
    " / note: 1 more error not shown: at most 10 syntax errors are shown per file",
]


def heads(errors: list[GasyncError], src: str) -> list[str]:
    """Each diagnostic's first line (code, place and message), then its notes, each with its place if it has one."""
    out = []
    for e in errors:
        notes = [f"{n.span.line}:{n.span.column}: {n.message}" if n.span else n.message for n in e.notes]
        out.append(" / note: ".join([render(e, "m.gasync", src, code=True).splitlines()[0], *notes]))
    return out


def parsed(src: str) -> list[str]:
    try:
        parse(src, "m.gasync")
    except GasyncError as exc:
        return heads(exc.errors if isinstance(exc, ErrorGroup) else [exc], src)
    return []


def from_the_start(src: str) -> list[str]:
    """Recovery's errors where each parse is Lark's own, of the whole text, lexed afresh."""
    spec, _ = _fast()
    _, errors = recover(Lexed(spec, src), lambda lexed: Reparser(_lark(), None)(Lexed(spec, lexed.text)))
    return heads(errors, src)


def broken_pipelines() -> str:
    """bench/compile_programs.py's pipelines, about 2,000 tokens each, with a mistake in some."""
    units = cp.large_file(40_000).split("\n// Pipeline ")
    breaks = [
        ("    let r = scaled", "    let r = scaled scaled"),
        ("        y{k}[g] = 2.0 * x{k}[g] + 1.0;", "        y{k}[g] = 2.0 * x{k}[g] + ;"),
        ("    tiles{k}.close();\n}", "    tiles{k}.close();\n"),
        ("    let s: i32 = 0;", "    let s: i32 = 0 # 1;"),
        ("    hist{k}[0] = s;", "    hist{k}[0] = 1.;"),
    ]
    out = []
    for k, unit in enumerate(units):
        if k % 3 == 1:
            old, new = breaks[k % len(breaks)]
            unit = unit.replace(old.replace("{k}", str(k)), new.replace("{k}", str(k)), 1)
        out.append(unit)
    return "\n// Pipeline ".join(out)


def too_deep() -> str:
    """Two items nested past the limit around a syntax error: one nesting error, held once."""
    deep = "task d{k} {{ let v = " + "(" * 5 + "1" + " + 1" * 4200 + ")" * 5 + "; }}\n"
    return deep.format(k=0) + "task e { let w = ; }\n" + deep.format(k=1) + "task f { let x = 1 }\n"


def test_a_program_with_a_mistake_in_most_items_gives_the_errors_it_gave_before() -> None:
    assert parsed(MULTI) == MULTI_ERRORS
    assert from_the_start(MULTI) == MULTI_ERRORS


@pytest.mark.parametrize("every", [1, 3, 1000])
@pytest.mark.parametrize("program", ["multi", "pipelines"])
def test_parsing_from_saved_states_gives_the_errors_of_parsing_from_the_start(
    program: str, every: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = MULTI if program == "multi" else broken_pipelines()
    monkeypatch.setattr(reparse, "_EVERY", every)  # a state saved every `every` tokens
    found = parsed(src)
    assert len(found) >= 6
    assert found == from_the_start(src)


@pytest.mark.parametrize("every", [97, 1000])
def test_the_nesting_limit_is_held_once_across_the_parses(every: int, monkeypatch: pytest.MonkeyPatch) -> None:
    src = too_deep()
    monkeypatch.setattr(reparse, "_EVERY", every)
    found = parsed(src)
    assert [h.split("error[")[1][:5] for h in found] == ["E0115", "E0101", "E0102"]
    assert found == from_the_start(src)


def tokens_of(lexed: Lexed) -> tuple[Any, ...]:
    """Every token with its ``first`` as recovery scans them, the diagnostics' view, and the
    parser's view with its lexing error."""
    lexed.has(1 << 40)  # lexed to the end
    scanned = [(t.type, t.start_pos, t.column, f) for t, f in zip(lexed.toks, lexed.first, strict=True)]
    shown = [(t.type, str(t), t.start_pos, t.line, t.column, t.end_line, t.end_column) for t in lexed]
    taken: list[int | None] = []
    try:
        taken.extend(t.start_pos for t in lexed.tokens())
    except UnexpectedCharacters as exc:
        taken.append(-(exc.pos_in_stream or 0) - 1)
    return scanned, shown, taken


def test_the_tokens_kept_after_a_blank_are_those_of_the_blanked_text_lexed_afresh() -> None:
    rng = random.Random(7)
    texts = [p.read_text(encoding="utf-8") for p in SAMPLES] + [MULTI, "task a { /* x }\n", 'task b { "x }\n@']
    spec, _ = _fast()
    for text in texts:
        for _ in range(4):
            lexed = Lexed(spec, text)
            starts = ItemStarts(lexed)
            for _ in range(rng.randint(1, 4)):
                lexed.index(rng.randrange(len(lexed.text) + 1))  # lexed as far as someone asked
                if lexed.toks:
                    starts.start(rng.randrange(len(lexed.toks)))
                a = rng.randrange(len(lexed.text))
                if not lexed.blank(a, min(len(lexed.text), a + rng.randint(1, 400))):
                    continue
                starts.kept(lexed.kept or 0)
                fresh = Lexed(spec, lexed.text)
                assert tokens_of(lexed) == tokens_of(fresh)
                again = ItemStarts(fresh)
                marks = [starts.start(k) for k in range(len(lexed.toks))]
                assert marks == [again.start(k) for k in range(len(fresh.toks))]
