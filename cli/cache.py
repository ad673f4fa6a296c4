"""``gasync cache info`` and ``gasync cache clear``: the compile cache on disk (runtime/cache.py)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from gasync.cli.common import CacheDirOpt, CacheMaxOpt, DebugOpt, QuietOpt
from gasync.cli.params import verbosity
from gasync.cli.report import Reporter
from gasync.runtime import cache

app = typer.Typer(
    name="cache",
    help="See or clear the cache of compiled programs.",
    no_args_is_help=True,
)


def human(size: int) -> str:
    """``1.5 MiB``: binary units (the default bound is 1 GiB), one decimal."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


@app.command()
def info(
    cache_dir: CacheDirOpt = None,
    cache_max: CacheMaxOpt = cache.DEFAULT_MAX_BYTES,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
    debug: DebugOpt = False,
) -> None:
    """Where the cache is, how big, how many programs, and its bound."""
    rep = Reporter(debug, as_json=as_json)
    try:
        got = cache.info(cache.root_of(cache_dir), cache_max)
        helpers, helper_bytes = cache.helper_info()
    except OSError as exc:
        rep.usage(f"cannot read the cache {cache.root_of(cache_dir)}: {exc.strerror}")
        rep.finish()
    store = cache.helper_dir()
    if as_json:
        doc = {"dir": str(got.root), "programs": got.programs, "bytes": got.size, "max_bytes": got.max_bytes,
               "helpers": {"dir": str(store), "entries": helpers, "bytes": helper_bytes}}  # fmt: skip
        sys.stdout.write(json.dumps(doc) + "\n")
    else:
        print(f"cache:    {got.root}{'' if got.root.is_dir() else ' (not created yet)'}")
        print(f"programs: {got.programs}")
        print(f"size:     {human(got.size)} of at most {human(got.max_bytes)}")
        print(f"helpers:  {helpers} compiled, {human(helper_bytes)} in {store} (gasync's own, for every program)")
    rep.finish()


@app.command()
def clear(cache_dir: CacheDirOpt = None, quiet: QuietOpt = False, debug: DebugOpt = False) -> None:
    """Remove every cached program (only gasync's own files), and gasync's compiled helpers."""
    rep = Reporter(debug, verbosity(quiet, False))
    root = cache.root_of(cache_dir)
    try:
        programs, size = cache.clear(root)
        helpers, helper_bytes = cache.clear_helpers()
    except OSError as exc:
        rep.usage(f"cannot clear the cache {root}: {exc.strerror}")
    else:
        rep.ok(f"removed {programs} program{'' if programs == 1 else 's'} ({human(size)}) from {root}")
        if helpers:
            rep.ok(f"removed {helpers} compiled helper{'' if helpers == 1 else 's'} ({human(helper_bytes)}) "
                   f"from {cache.helper_dir()}")  # fmt: skip
    rep.finish()
