"""Groups on a real GPU beyond the contract cases: locals over 48 KiB a block, in dynamic shared
memory that the launch opts the kernel in to (codegen/groups.py, runtime/kernelargs.py,
``opt_in_shared``), through the prepared launch and the compiled kernel's own."""

from __future__ import annotations

import pytest
from contract import bigshared

import gasync
from gasync.runtime import prepared

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(300)]


@pytest.mark.parametrize("name", sorted(bigshared.PROGRAMS))
def test_groups_over_48_kib_run_from_dynamic_shared_memory_on_gpu(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    program = gasync.compile_source(bigshared.PROGRAMS[name][0], f"{name}.gasync")
    assert program.generated.dynamic_shared > 48 * 1024
    for _ in range(2):  # the second run reuses the prepared launch
        result = program.run(backend="cuda", timeout=60)
        assert result.stats["launch_path"] == "prepared"
        bigshared.check(name, result.buffers)
    with monkeypatch.context() as m:
        m.setattr(prepared.CACHE, "max_entries", 0)
        result = program.run(backend="cuda", timeout=60)
    assert result.stats["launch_path"].startswith("compiled kernel: prepared launches are off")
    bigshared.check(name, result.buffers)


def test_a_group_of_200_kib_runs_on_gpu() -> None:
    """Near the H200's 227 KiB: 2 x 12800 f64, a channel (slots with their mbarriers), the kernel's 288 bytes."""
    program = gasync.compile_source(bigshared.sized(12800), "big200.gasync")
    assert program.generated.dynamic_shared == 204944
    result = program.run(backend="cuda", timeout=60)
    bigshared.check("one_group", result.buffers, bigshared.one_group_expect(12800))
