"""A send's value kept in its register alone while the poll runs (codegen/ends.py, restored_sends;
a poll on all lanes' local channels): into the frame only when the poll suspends at that send,
back when it resumes there. Programs whose sends suspend (a full channel, an executor shared
with the receiver, a busy receiver of a group), on the simulator, against values computed here;
a global channel's send keeps its frame word and its register both (run 97)."""

from __future__ import annotations

import textwrap

import pytest

import gasync
from gasync.codegen import generate

pytestmark = [pytest.mark.sim, pytest.mark.timeout(300)]

N = 24


def pair(offset: str, pause: str, at: str) -> str:
    """A sender of k * k + 3 (plus ``offset``) and a receiver that sums and hashes what it gets
    into out[at] and out[at + 1], running ``pause`` after each receive."""
    return f"""\
task a {{
    for k in 0..{N} {{
        let v = k * k + 3{offset};
        c.send(v * 2 - k).await;
    }}
}}
task b {{
    let s: i64 = 0;
    let x: i64 = 0;
    for k in 0..{N} {{
        let v = c.recv().await;
        s = s + v;
        x = x * 31 + v;{pause}
    }}
    out[{at}] = s;
    out[{at} + 1] = x;
}}
"""


# one executor for both tasks: the sender's send of a full slot cannot wait in place (the
# receiver waits in the run queue), so it suspends with its value and resumes to send it
GLOBAL = "buffer out: i64[2] = zeros;\nchannel c: i64[1];\n" + pair("", "\n        yield_now().await;", "0")

# the same in a group whose polls run on all lanes (codegen/warppoll.py): a lone sender whose
# tries (two a poll on the simulator) run out while its receiver is busy, so that its poll
# returns pending, the value kept in the (shared-memory) frame until it is polled again
GROUP = (
    "buffer out: i64[4] = zeros;\ngroup pair for g in 0..2 {\n    local channel c: i64[1];\n"
    + textwrap.indent(pair(" + (g as i64)", "", "2 * (g as i64)"), "    ")
    + "}\n"
)


def expected(g: int = 0) -> tuple[int, int]:
    s, x = 0, 0
    for k in range(N):
        v = (k * k + 3 + g) * 2 - k
        s += v
        x = (x * 31 + v + 2**63) % 2**64 - 2**63  # i64 wraps as the device does
    return s, x


def test_the_send_value_goes_to_the_frame_only_at_its_suspend() -> None:
    gen = generate(gasync.compile_source(GROUP, "<restored_group>", {}).plan)
    poll_a = gen.source.split("def poll_a(")[1].split("\n@cuda.jit")[0]
    assert "svlok_c" not in poll_a  # no flag: the register holds it wherever the send is attempted
    assert poll_a.count("svl_c = FI[fb_i + ") == 1  # restored at its state's resume
    assert poll_a.count("] = svl_c") == 1  # spilled at the suspend exit to its state
    assert "dgroups.lch_send_warp(L.ch_c, L.chv_c, 0, 1, int64(svl_c)," in poll_a
    # a global channel's send: its register and its frame word (restored_sends' caller)
    glob = generate(gasync.compile_source(GLOBAL, "<kept>", {}).plan).source
    assert "(sv_c if svok_c else FI[fb_i + " in glob


def test_a_suspended_send_resumes_with_its_value() -> None:
    prog = gasync.compile_source(GLOBAL, "<restored>", {})
    res = prog.run(backend="sim", timeout=120, executors=1)
    assert tuple(int(v) for v in res.buffers["out"]) == expected()
    assert res.stats["polls"] > 2 * N  # the sender suspended and was polled again


def test_a_group_send_resumes_with_its_value() -> None:
    prog = gasync.compile_source(GROUP, "<restored_group>", {})
    res = prog.run(backend="sim", timeout=240)
    assert [int(v) for v in res.buffers["out"]] == [*expected(0), *expected(1)]
