"""Writing a drawing (``gasync graph``, ``gasync schedule``, ``run --schedule``) in the format asked for.

The format is ``--format``'s, else the output's suffix: ``.dot`` (text, needs
nothing), ``.svg``, ``.png``, ``.pdf`` (rendered by Graphviz's ``dot``) or
``.html`` (a page holding the SVG inline). Any other suffix, or none, is a
usage error before anything is compiled or run, rather than DOT text in a
file named ``x.pdf``.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path

import click
import graphviz

from gasync.cli.report import Reporter
from gasync.viz.html_report import svg_page


class GraphFormat(StrEnum):
    dot = "dot"
    svg = "svg"
    png = "png"
    pdf = "pdf"
    html = "html"


SUFFIXES = ", ".join(f".{f.value}" for f in list(GraphFormat)[:-1]) + f" or .{list(GraphFormat)[-1].value}"


def graph_format(output: Path | None, format: GraphFormat | None, option: str = "-o") -> GraphFormat:
    """The format to write: ``--format``, else ``output``'s suffix (DOT on stdout); a usage error otherwise."""
    if format is not None:
        return format
    if output is None:
        return GraphFormat.dot
    suffix = output.suffix.lstrip(".").lower()
    if suffix not in {f.value for f in GraphFormat}:
        found = f"suffix '.{suffix}'" if suffix else "no suffix"
        other = ", or give --format" if option == "-o" else ""
        raise click.UsageError(f"{option} {output}: {found}; use {SUFFIXES}{other}")
    return GraphFormat(suffix)


def emit_graph(rep: Reporter, g: graphviz.Digraph, format: GraphFormat, output: Path | None, title: str) -> None:
    """Write ``g`` as DOT text or an image; an image needs -o and Graphviz's ``dot`` (else exit 2)."""
    if format is GraphFormat.dot:
        write_bytes(rep, str(g.source).encode(), output)
        return
    if output is None:
        rep.usage(f"--format {format.value} writes an image: give -o FILE")
        return
    try:
        image = g.pipe(format="svg" if format is GraphFormat.html else format.value)
    except graphviz.ExecutableNotFound:
        rep.usage("Graphviz's 'dot' program is not installed: use --format dot, or run 'make dot'")
        return
    if format is GraphFormat.html:
        image = svg_page(title, image.decode("utf-8")).encode("utf-8")
    write_bytes(rep, image, output)


def write_bytes(rep: Reporter, data: bytes, output: Path | None) -> bool:
    """Write ``data`` to ``output`` (stdout when None); an unwritable file is a usage error."""
    if output is None:
        sys.stdout.write(data.decode())
        return True
    try:
        output.write_bytes(data)
    except OSError as exc:
        rep.usage(f"cannot write {output}: {exc.strerror}")
        return False
    return True
