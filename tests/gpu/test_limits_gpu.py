"""Deep programs (tests/contract/deep.py) compiled for and run on a real GPU: the labelled
blocks and the expressions cut into parts are valid for the CUDA target too."""

from __future__ import annotations

import pytest
from contract.deep import ON_GPU

import gasync

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(300)]


@pytest.mark.parametrize("name", sorted(ON_GPU))
def test_a_deep_program_computes_its_value_on_gpu(name: str) -> None:
    source, want = ON_GPU[name]
    program = gasync.compile_source(source, f"<{name}>", {})
    assert program.run(backend="cuda", timeout=120).buffers["out"].tolist() == [want]
