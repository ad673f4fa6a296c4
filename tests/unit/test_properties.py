"""Property tests: whatever the input, the parser answers quickly and cleanly.

Every input either parses or raises one of gasync's own diagnostics
(:class:`GasyncError`) whose span lies inside the text; rendering that
diagnostic never fails; no parse takes a second. Inputs come from random
gasync-ish text and from token-level mutations of every sample (a token
deleted, duplicated, or swapped with its neighbour). The tokeniser here is a
small regular expression of its own, so that a bug in the real lexer cannot
hide itself.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gasync.dsl.diagnostics import GasyncError, render
from gasync.dsl.parser import parse

SAMPLES = sorted((Path(__file__).parents[2] / "samples").glob("*.gasync"))
SAMPLE_TEXT = [p.read_text(encoding="utf-8") for p in SAMPLES]

TIME_LIMIT_S = 1.0
# Examples per test; the whole file runs well over 2,000.
RANDOM_TEXT_EXAMPLES = 1200
RANDOM_CHAR_EXAMPLES = 600
MUTATION_EXAMPLES = 500  # for each of the three mutations

FRAGMENTS = [
    *"const buffer shared signal channel fn async extern from task after for in let if else while loop".split(),
    *"parallel bulk break continue return select await as true false".split(),
    *"i32 i64 u32 u64 f32 f64 zeros iota input random fill join sleep yield_now min atomic_add".split(),
    *"x y N t _ 0 1 42 1_000 0xff 0b101 0xfg 12abc 1.5 2e-3 1e 1e+".split(),
    *"{ } ( ) [ ] ; : , . .. -> => = == != < > <= >= << >> += -= & && | || ^ ~ ! + - * / %".split(),
    "// c\n",
    "/*",
    "*/",
    '"m.k:f"',
    '"',
    " ",
    " ",
    "\n",
    "\t",
    "@",
    "é",
    "\f",
    "\r\n",
]
CHARS = "abcxyz_019 \n\t{}()[];:,.=<>!&|^~+-*/%\"'@#$\\é\f"

TOKEN_RE = re.compile(
    r"""\s+|//[^\n]*|/\*[\s\S]*?\*/|"[^"\n]*"|\d\w*(?:\.\d\w*)?|[A-Za-z_]\w*
      |<<=|>>=|\.\.|->|=>|==|!=|<=|>=|&&|\|\||<<|>>|[-+*/%&|^]=|.""",
    re.VERBOSE,
)


def split_tokens(text: str) -> list[str]:
    """Tokens and the whitespace between them; joining them gives ``text`` back."""
    return TOKEN_RE.findall(text)


def check_parses_or_diagnoses(text: str) -> None:
    """The property itself, shared by every test below."""
    start = time.perf_counter()
    try:
        parse(text, "p.gasync")
    except GasyncError as err:
        elapsed = time.perf_counter() - start
        n_lines = text.count("\n") + 1
        assert 1 <= err.span.line <= n_lines + 1, (err.message, err.span)
        assert err.span.column >= 1, (err.message, err.span)
        rendered = render(err, "p.gasync", text)
        assert rendered.startswith(f"p.gasync:{err.span.line}:{err.span.column}: error: ")
    else:
        elapsed = time.perf_counter() - start
    assert elapsed < TIME_LIMIT_S, f"parse took {elapsed:.2f} s"


@st.composite
def mutated_sample(draw: st.DrawFn, mutation: str) -> str:
    tokens = split_tokens(draw(st.sampled_from(SAMPLE_TEXT)))
    solid = [k for k, tok in enumerate(tokens) if not tok.isspace()]
    pick = draw(st.integers(0, len(solid) - 2))
    at, nxt = solid[pick], solid[pick + 1]
    if mutation == "delete":
        tokens[at] = ""
    elif mutation == "duplicate":
        tokens[at] = tokens[at] + " " + tokens[at]
    else:
        tokens[at], tokens[nxt] = tokens[nxt], tokens[at]
    return "".join(tokens)


def examples(n: int) -> settings:
    """Hypothesis settings: ``n`` examples, our own time limit instead of a deadline."""
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


def setup_module() -> None:
    parse("signal warm_up;", "warm.gasync")  # build the parser outside the timed examples


def test_tokeniser_round_trips_every_sample() -> None:
    for text in SAMPLE_TEXT:
        assert "".join(split_tokens(text)) == text


@examples(RANDOM_TEXT_EXAMPLES)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=60).map(" ".join))
def test_random_fragments(text: str) -> None:
    check_parses_or_diagnoses(text)


@examples(RANDOM_CHAR_EXAMPLES)
@given(st.text(alphabet=CHARS, max_size=200))
def test_random_characters(text: str) -> None:
    check_parses_or_diagnoses(text)


@pytest.mark.parametrize("mutation", ["delete", "duplicate", "swap"])
def test_mutated_samples(mutation: str) -> None:
    @examples(MUTATION_EXAMPLES)
    @given(mutated_sample(mutation))
    def run(text: str) -> None:
        check_parses_or_diagnoses(text)

    run()


def test_the_run_covers_at_least_two_thousand_examples() -> None:
    assert RANDOM_TEXT_EXAMPLES + RANDOM_CHAR_EXAMPLES + 3 * MUTATION_EXAMPLES >= 2000
