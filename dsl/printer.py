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
    if isinstance(node, Program):
        return "\n".join(_fmt(item, 0, spans) for item in node.items) + "\n"
    return _fmt(node, 0, spans) + "\n"


def _fmt(node: Any, indent: int, spans: bool) -> str:
    flat = _flat(node, spans)
    if len(flat) + indent <= WIDTH:
        return " " * indent + flat
    pad = " " * indent
    if isinstance(node, tuple):
        inner = [_fmt(x, indent + 2, spans) + "," for x in node]
        return pad + "(\n" + "\n".join(inner) + "\n" + pad + ")"
    if dataclasses.is_dataclass(node):
        lines = [pad + type(node).__name__ + "(" + _where(node, spans)]
        for f in _fields(node):
            sub = _fmt(getattr(node, f), indent + 4, spans).lstrip()
            lines.append(f"{pad}  {f}={sub}")
        lines.append(pad + ")")
        return "\n".join(lines)
    return pad + flat


def _flat(node: Any, spans: bool) -> str:
    if isinstance(node, tuple):
        return "(" + ", ".join(_flat(x, spans) for x in node) + ("," if len(node) == 1 else "") + ")"
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        body = ", ".join(f"{f}={_flat(getattr(node, f), spans)}" for f in _fields(node))
        return f"{type(node).__name__}({body}){_where(node, spans)}"
    return repr(node)


def _fields(node: Any) -> list[str]:
    return [f.name for f in dataclasses.fields(node) if f.compare]


def _where(node: Any, spans: bool) -> str:
    span = getattr(node, "span", NOSPAN)
    if not spans or span == NOSPAN or not hasattr(span, "line"):
        return ""
    return f"@{span.line}:{span.column}"
