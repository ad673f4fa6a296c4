"""The ``gasync`` command line: a thin Typer layer over :mod:`gasync.pipeline`."""
