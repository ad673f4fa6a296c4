"""The program-specific device helpers the executor and polls call: setting a signal,
closing a channel (each waking its waiters), whether a host signal is still to come, and
``service``, which delivers host signals that arrived and wakes due sleepers."""

from __future__ import annotations

from gasync.codegen.machine import Shared


def services(shared: Shared) -> list[str]:
    """Signals, channels, timers and the host: the program-specific device helpers."""
    plan = shared.plan
    out = ["@cuda.jit(device=True)", "def signal_set(k, w, waker, G):"]
    out += ["    if dsync.set_signal(G.signals.SIG, k):", "        " + shared.wake_all("k", "waker")]
    out += ["", "", "@cuda.jit(device=True)", "def chan_close(c, w, waker, G):"]
    out += [
        "    # what was sent before: pairs with chan_closed's acquire",
        "    dl.exch_release(G.chan.CHCLOSED, c, int32(1))",
    ]
    out += [
        "    " + shared.wake_all("N_SIGNALS + 2 * c", "waker"),
        "    " + shared.wake_all("N_SIGNALS + 2 * c + 1", "waker"),
    ]
    out += ["", "", "@cuda.jit(device=True)", "def host_pending(G):", "    # a host signal still to come?"]
    for sig in plan.signals:
        out.append(f"    if dsync.host_signal_pending(G.signals, SIGNAL_{sig.name}):")
        out.append("        return True")
    out.append("    return False")
    out += ["", "", "@cuda.jit(device=True)", "def service(w, G):", "    # host signals and due sleepers"]
    if plan.signals:
        out.append("    CTL = G.sched.CTL")
        out.append("    SIG, HOSTSIG, HOSTPEND = G.signals.SIG, G.signals.HOSTSIG, G.signals.HOSTPEND")
    for sig in plan.signals:
        k = f"SIGNAL_{sig.name}"
        arrived = f"HOSTPEND[{k}] != 0 and dsync.load_acquire_sys(HOSTSIG, {k}) != 0"
        out.append(f"    if {arrived} and not dl.signal_is_set(SIG, {k}):")
        out.append("        # in flight while it is delivered, so the deadlock check never sees it arrived")
        out.append("        # and its waiters not yet woken")
        out.append("        dl.add(CTL, dl.CTL_INFLIGHT, int64(1))  # (set_signal's release orders it first)")
        out.append(f"        signal_set({k}, w, int64(-1), G)")
        out.append("        dl.add(CTL, dl.CTL_INFLIGHT, int64(-1))")
    if shared.has_sleep:
        args = "G.sched, QMASK, G.sleep, SMASK, 4"
        if shared.trace:
            out.append(f"    dsync.wake_sleepers_traced({args}, G.TRACE, w)")
        else:
            out.append(f"    dsync.wake_sleepers({args})")
    out.append("    return")
    return out
