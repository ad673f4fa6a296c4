"""Fuzzing inputs: the seed programs, and random mutations of them (scripts/fuzz.py).

The seeds are every sample, every contract case's program (tests/contract) and
programs drawn from the differential generator (tests/differential: valid,
small, and with inputs). A mutant is a seed with one to three edits on its
tokens: a deletion, a duplication, a swap, a truncation, a random identifier or
number, another scalar type, a stray token, or a line taken from another seed.
Every draw comes from one ``random.Random``, so a seed number gives the same
inputs again.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOKEN = re.compile(
    r"//[^\n]*|/\*.*?\*/|\s+|[A-Za-z_][A-Za-z_0-9]*|\d[\w.]*|\.\.=?|->|=>|::|[=!<>]=|&&|\|\||<<|>>|[-+*/%&|^]=|.",
    re.S,
)
TYPES = ("i32", "i64", "u32", "u64", "f32", "f64", "bool", "unit")
KEYWORDS = (
    "task", "fn", "async", "await", "let", "mut", "if", "else", "while", "loop", "for", "in", "break",
    "continue", "return", "parallel", "bulk", "select", "join", "after", "buffer", "shared", "signal",
    "channel", "const", "input", "zeros", "iota", "random", "fill", "extern", "as", "true", "false",
)  # fmt: skip
PUNCT = ("(", ")", "{", "}", "[", "]", ";", ",", ".", "..", "..=", "=", "==", "->", "=>", "+", "-", "*",
         "/", "%", "<<", ">>", "&", "|", "^", "!", "~", "<", ">", "&&", "||", ":", "?", "@", "\"", "'")  # fmt: skip
NUMBERS = ("0", "1", "-1", "2", "3", "7", "31", "32", "33", "63", "64", "65", "255", "1024", "65536",
           "2147483647", "2147483648", "4294967295", "4294967296", "9223372036854775807",
           "9223372036854775808", "18446744073709551615", "18446744073709551616",
           "99999999999999999999999999", "0.0", "0.5", "1.0", "1e40", "1e-40", "3.4e38", "1e308", "0x10",
           "1_000", "00", "1.", "1e", "12abc")  # fmt: skip


@dataclass(frozen=True)
class Seed:
    name: str
    text: str
    small: bool  # cheap enough to run on the simulator


def seeds(differential: int = 24, seed: int = 0) -> list[Seed]:
    """The samples, the contract cases and ``differential`` generated programs."""
    out = [Seed(p.stem, p.read_text(), p.stem in SMALL_SAMPLES) for p in sorted((ROOT / "samples").glob("*.gasync"))]
    from contract.programs import CASES

    out += [Seed(f"contract/{c.name}", c.source, True) for c in CASES]
    out += [Seed(f"differential/{k}", text, True) for k, text in enumerate(generated(differential, seed))]
    return out


SMALL_SAMPLES = ("async_double", "counter", "join_select", "warp_specialized")


def generated(n: int, seed: int) -> list[str]:
    """``n`` programs of the differential generator, drawn with a fixed seed."""
    if n <= 0:
        return []
    from differential.programs import programs
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    texts: list[str] = []

    @hseed(seed)
    @settings(max_examples=n, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(programs())
    def draw(program: object) -> None:
        texts.append(program.text)  # type: ignore[attr-defined]

    draw()
    return texts[:n]


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def _solid(toks: list[str]) -> list[int]:
    """Indices of the tokens that are not whitespace or comments."""
    return [k for k, t in enumerate(toks) if not t.isspace() and not t.startswith(("//", "/*"))]


def _pick(rng: random.Random, toks: list[str], test: Callable[[str], bool]) -> int | None:
    found = [k for k in _solid(toks) if test(toks[k])]
    return rng.choice(found) if found else None


def _identifier(rng: random.Random) -> str:
    head = rng.choice("abcdefghijklmnopqrstuvwxyz_")
    return head + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789_") for _ in range(rng.randrange(0, 6)))


def _is_name(t: str) -> bool:
    return t[0].isalpha() or t[0] == "_"


def delete(rng: random.Random, toks: list[str], _: list[Seed]) -> None:
    k = rng.choice(_solid(toks))
    del toks[k]


def duplicate(rng: random.Random, toks: list[str], _: list[Seed]) -> None:
    k = rng.choice(_solid(toks))
    toks.insert(k, toks[k])


def swap(rng: random.Random, toks: list[str], _: list[Seed]) -> None:
    solid = _solid(toks)
    a = rng.randrange(len(solid))
    b = min(len(solid) - 1, a + 1) if rng.random() < 0.7 else rng.randrange(len(solid))
    i, j = solid[a], solid[b]
    toks[i], toks[j] = toks[j], toks[i]


def truncate(rng: random.Random, toks: list[str], _: list[Seed]) -> None:
    del toks[rng.randrange(1, len(toks)) :]


def rename(rng: random.Random, toks: list[str], _: list[Seed]) -> None:
    k = _pick(rng, toks, _is_name)
    if k is not None:
        names = [t for t in toks if t and _is_name(t)]
        choice = rng.random()
        toks[k] = _identifier(rng) if choice < 0.4 else rng.choice(KEYWORDS) if choice < 0.6 else rng.choice(names)


def renumber(rng: random.Random, toks: list[str], _: list[Seed]) -> None:
    k = _pick(rng, toks, lambda t: t[0].isdigit())
    if k is not None:
        toks[k] = rng.choice(NUMBERS) if rng.random() < 0.8 else str(rng.randrange(-(2**40), 2**40))


def retype(rng: random.Random, toks: list[str], _: list[Seed]) -> None:
    k = _pick(rng, toks, lambda t: t in TYPES)
    if k is not None:
        toks[k] = rng.choice(TYPES)


def stray(rng: random.Random, toks: list[str], _: list[Seed]) -> None:
    pool = PUNCT if rng.random() < 0.6 else KEYWORDS
    toks.insert(rng.randrange(len(toks) + 1), f" {rng.choice(pool)} ")


def splice(rng: random.Random, toks: list[str], corpus: list[Seed]) -> None:
    """A line of another seed, inserted at a line break."""
    lines = [ln for ln in rng.choice(corpus).text.splitlines() if ln.strip()]
    breaks = [k for k, t in enumerate(toks) if "\n" in t]
    if lines and breaks:
        toks.insert(rng.choice(breaks) + 1, rng.choice(lines) + "\n")


MUTATIONS: tuple[Callable[[random.Random, list[str], list[Seed]], None], ...] = (
    delete, duplicate, swap, truncate, rename, renumber, renumber, retype, stray, splice,
)  # fmt: skip


def mutant(rng: random.Random, base: Seed, corpus: list[Seed]) -> tuple[str, str]:
    """One mutant of ``base``: its text and the names of the edits made."""
    toks = tokens(base.text)
    done = []
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        if not _solid(toks):
            break
        edit = rng.choice(MUTATIONS)
        edit(rng, toks, corpus)
        done.append(edit.__name__)
    return "".join(toks), "+".join(done)


def inputs(
    corpus: list[Seed], rng: random.Random, count: int, small_only: bool = False, with_seeds: bool = True
) -> Iterator[tuple[str, str]]:
    """``count`` inputs: each seed once (in order; not without ``with_seeds``), then mutants
    of random seeds; yields (text, label)."""
    pool = [s for s in corpus if s.small] if small_only else corpus
    for k in range(count):
        if with_seeds and k < len(pool):
            yield pool[k].text, f"{pool[k].name} (seed)"
            continue
        base = rng.choice(pool)
        text, edits = mutant(rng, base, corpus)
        yield text, f"{base.name} ({edits})"
