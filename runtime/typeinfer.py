"""The return type Numba's CUDA target infers for a Python function and argument types.

Only the front of numba-cuda's own pipeline runs (bytecode, untyped passes, type
inference), and then a pass that ends it: lowering would need NVVM, and
``compile_device`` a GPU as well, while type inference needs neither. This leans
on numba-cuda's pipeline classes, which is why it sits in a module of its own.
"""

from __future__ import annotations

from typing import Any

from numba.cuda.compiler import CUDACompiler
from numba.cuda.core.compiler_machinery import FunctionPass, PassManager, register_pass
from numba.cuda.core.typed_passes import NopythonTypeInference
from numba.cuda.descriptor import cuda_target
from numba.cuda.flags import CUDAFlags


@register_pass(mutates_CFG=False, analysis_only=True)
class _StopAfterTyping(FunctionPass):
    """Ends the pipeline with the inferred return type as its result."""

    _name = "gasync_stop_after_typing"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state: Any) -> bool:
        state.cr = state.return_type
        return False


class _TypeInferenceOnly(CUDACompiler):
    def define_pipelines(self) -> list[Any]:
        [full] = super().define_pipelines()
        classes = [cls for cls, _ in full.passes]
        pm = PassManager("gasync_extern_types")
        pm.passes.extend(full.passes[: classes.index(NopythonTypeInference) + 1])
        pm.add_pass(_StopAfterTyping, "stop after type inference")
        pm.finalize()
        return [pm]


def return_type(py_func: Any, args: tuple[Any, ...]) -> Any:
    """The Numba type ``py_func`` returns for ``args``; raises numba's TypingError where it cannot be typed."""
    flags = CUDAFlags()
    flags.no_compile = True
    compiler = _TypeInferenceOnly(cuda_target.typing_context, cuda_target.target_context, None, args, None, flags, {})
    compiler.compile_extra(py_func)
    return compiler.state.return_type
