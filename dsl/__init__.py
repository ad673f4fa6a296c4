"""Front end: ``.gasync`` text to a frozen AST, with located diagnostics."""

from gasync.dsl.diagnostics import ErrorGroup, GasyncError, render
from gasync.dsl.parser import parse, parse_file
from gasync.dsl.printer import dump

__all__ = ["ErrorGroup", "GasyncError", "dump", "parse", "parse_file", "render"]
