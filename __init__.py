"""gasync: async/await for GPUs.

The compiler's path, one stage per folder:
``dsl.parse(text, path) -> Program`` then ``planner.plan(program, options) ->
Plan`` then ``codegen.generate(plan) -> Generated`` then
``runtime.run(generated, ...)``. :mod:`gasync.pipeline` chains them.
"""

__version__ = "0.1.0"
