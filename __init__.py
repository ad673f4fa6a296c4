"""gasync: async/await for GPUs.

The compiler's path, one stage per folder:
``dsl.parse(text, path) -> Program`` then ``planner.plan(program, options) ->
Plan`` then ``codegen.generate(plan) -> Generated`` then
``runtime.run(generated, ...)``. :mod:`gasync.pipeline` chains them.
"""

__version__ = "0.1.0"


def compile(path, defines=None, strict=False):  # type: ignore[no-untyped-def]  # noqa: A001
    """Compile a ``.gasync`` file into a runnable :class:`gasync.api.Program`."""
    from gasync.api import compile as _compile

    return _compile(path, defines, strict)


def compile_source(text, path="<input>", defines=None, strict=False):  # type: ignore[no-untyped-def]
    """Compile program text into a runnable :class:`gasync.api.Program`."""
    from gasync.api import compile_source as _compile_source

    return _compile_source(text, path, defines, strict)
