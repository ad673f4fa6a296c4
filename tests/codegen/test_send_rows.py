"""Which loops of sends run their sends below the credit in a row (codegen/sendloops.py, _send_run).

Their values are checked on every backend by the contract cases with flagged, crediting
channels (``flagged_values_*``); this checks the choice itself and what the row is made of.
"""

from __future__ import annotations

import gasync
from gasync.codegen import generate

ROW = "# a row of sends below the credit"


def source(text: str) -> str:
    return generate(gasync.compile_source(text, "<rows>").plan).source


def test_a_loop_of_sends_to_ticket_holders_runs_rows() -> None:
    src = source(
        "const N: i64 = 64;\nchannel c: i64[8];\nbuffer out: i64[N] = zeros;\n"
        "task s { let n = N; for t in 0..n { c.send(t * 3).await; } c.close(); }\n"  # (not counted: codegen/counted.py)
        "task r for w in 0..4 { for await v in c { out[v / 3] = v; } }\n"
    )
    assert src.count(ROW) == 1
    assert "dsync.put_credited(G.chan, CH_c, CAP_c, int64(int64((v_t * 3))), TICKETS_c, HOW_c, cur_c)" in src
    assert "counted_take" not in src


def test_no_row_where_a_send_has_more_to_do_or_the_loop_more_than_a_send() -> None:
    lone = "task r { let k: i64 = 0; for await v in c { out[k] = v; k += 1; } }\n"  # a bell receiver
    head = "const N: i64 = 64;\nconst M: i64 = 32;\nchannel c: i64[8];\nbuffer out: i64[N] = zeros;\n"
    bell = source(head + "task s { for t in 0..N { c.send(t).await; } }\n" + lone)
    assert "dsync.credited_send(" in bell and ROW not in bell  # credits, but each put rings the bell
    crowd = "task r for w in 0..4 { for await v in c { out[v] = v; } }\n"
    two = "task s { for t in 0..M { c.send(t).await; c.send(t + M).await; } }\n"
    twice = source(head + two + crowd)
    assert "dsync.credited_send(" in twice and ROW not in twice
