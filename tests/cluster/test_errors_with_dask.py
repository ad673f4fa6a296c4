"""gasync's errors once Dask is imported: Dask installs tblib's pickling of exceptions, which
changes what ``copy.copy`` of an exception does, and the errors must keep working through it."""

from __future__ import annotations

import pickle

import pytest

from gasync.runtime.errors import input_error

pytest.importorskip("distributed")


def test_the_command_lines_wording_is_a_copy_and_the_apis_stays() -> None:
    import distributed  # noqa: F401 - what installs tblib's pickling

    err = input_error("x", "shape [3] does not match the declaration f32[4]")
    err.path = "p.gasync"
    cli = err.in_cli_words()
    assert cli.message == "--input x: shape [3] does not match the declaration f32[4]"
    assert err.message == "inputs['x']: shape [3] does not match the declaration f32[4]"
    assert (type(cli), cli.code, cli.path) == (type(err), "E0301", "p.gasync")


def test_an_error_pickles_whole_as_it_travels_from_a_worker() -> None:
    import distributed  # noqa: F401

    err = input_error("x", "bad")
    err.path = "p.gasync"
    back = pickle.loads(pickle.dumps(err))
    assert (type(back), back.message, back.cli_message, back.path, str(back)) == (
        type(err), err.message, err.cli_message, "p.gasync", "p.gasync: error[E0301]: inputs['x']: bad",
    )  # fmt: skip
