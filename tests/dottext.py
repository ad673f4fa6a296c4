"""DOT text as tests of what is drawn read it: without the hover texts (``tooltip=...``), which
tests/unit/test_viz_graphs.py checks on every sample's SVG."""

from __future__ import annotations

import re

TOOLTIP = re.compile(r' tooltip=("(?:[^"\\]|\\.)*"|[^\s\]]+)')


def bare(dot: str) -> str:
    """``dot`` without its ``tooltip`` attributes."""
    return TOOLTIP.sub("", dot)
