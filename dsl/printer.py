"""A compact, indented printer for the AST (``gasync compile --emit ast``).

Each node prints as ``NodeName(field=value, ...)`` on one line when that fits
in 88 columns, else with one field per line, indented. Spans are shown as a
trailing ``@line:col`` so a reader can find the source of each node.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gasync.dsl.ast import NOSPAN, Program

WIDTH = 88


def dump(node: Any, spans: bool = True) -> str:
    """Render ``node`` (a Program or any AST node) as text."""
    out: list[str] = []
    for item in node.items if isinstance(node, Program) else (node,):
        _emit(item, 0, spans, out)
    return "\n".join(out) + "\n"


def _emit(node: Any, indent: int, spans: bool, out: list[str], lead: str | None = None) -> None:
    """Append the lines of ``node`` to ``out``, the first one starting with ``lead`` (by
    default the indentation). Lines are joined once, at the end, so a deep tree costs
    time in proportion to its text."""
    pad = " " * indent
    first = pad if lead is None else lead
    flat = _flat(node, spans, WIDTH - indent)
    if flat is not None:
        out.append(first + flat)
    elif isinstance(node, tuple):
        out.append(first + "(")
        for x in node:
            _emit(x, indent + 2, spans, out)
            out[-1] += ","
        out.append(pad + ")")
    elif dataclasses.is_dataclass(node):
        out.append(first + type(node).__name__ + "(" + _where(node, spans))
        for f in _fields(node):
            _emit(getattr(node, f), indent + 4, spans, out, f"{pad}  {f}=")
        out.append(pad + ")")
    else:
        out.append(first + repr(node))  # a leaf too long for its line


def _flat(node: Any, spans: bool, budget: int) -> str | None:
    """``node`` on one line, or None as soon as it is longer than ``budget``: a deep
    tree is then printed in time linear in its size, not quadratic."""
    if budget <= 0:
        return None
    if isinstance(node, tuple):
        parts = _flat_parts(list(node), spans, budget - 2)
        text = None if parts is None else "(" + ", ".join(parts) + ("," if len(node) == 1 else "") + ")"
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        head = type(node).__name__ + "("
        fields = _fields(node)
        parts = _flat_parts([getattr(node, f) for f in fields], spans, budget - len(head) - 1)
        if parts is None:
            return None
        body = ", ".join(f"{f}={part}" for f, part in zip(fields, parts, strict=True))
        text = f"{head}{body}){_where(node, spans)}"
    else:
        text = repr(node)
    return text if text is not None and len(text) <= budget else None


def _flat_parts(values: list[Any], spans: bool, budget: int) -> list[str] | None:
    parts: list[str] = []
    for v in values:
        part = _flat(v, spans, budget)
        if part is None:
            return None
        budget -= len(part) + 2
        parts.append(part)
    return parts


def _fields(node: Any) -> list[str]:
    return [f.name for f in dataclasses.fields(node) if f.compare]


def _where(node: Any, spans: bool) -> str:
    span = getattr(node, "span", NOSPAN)
    if not spans or span == NOSPAN or not hasattr(span, "line"):
        return ""
    return f"@{span.line}:{span.column}"
