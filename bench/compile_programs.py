"""Generated ``.gasync`` programs that stress the compiler's front end (issue 10).

Each function returns the text of one valid program whose size grows with
its argument, so that ``gasync check`` (parse + plan) can be timed against
the size of the input: ``compile_time.py`` times the full sizes, and
``tests/unit/test_compile_time.py`` a CI-sized slice with generous bounds.
Nothing here imports gasync.
"""

from __future__ import annotations


def many_tasks(n: int) -> str:
    """``n`` independent tasks, each writing its own constant element of one buffer."""
    lines = [f"buffer out: i64[{n}] = zeros;"]
    for k in range(n):
        lines.append(f"task t{k} {{\n    let v: i64 = {k} * 2;\n    out[{k}] = v + 1;\n}}")
    return "\n".join(lines) + "\n"


def after_chain(n: int) -> str:
    """``n`` tasks, each ``after`` the one before, all writing ``out[0]`` (ordered, so no race)."""
    lines = ["buffer out: i64[1] = zeros;", "task t0 { out[0] = 0; }"]
    for k in range(1, n):
        lines.append(f"task t{k} after t{k - 1} {{\n    out[0] = out[0] + {k};\n}}")
    return "\n".join(lines) + "\n"


def nested_async(depth: int) -> str:
    """Async blocks nested ``depth`` deep, each awaiting the next and adding one."""
    inner = "7"
    for _ in range(depth):
        inner = f"async {{ let v = {inner}; v + 1 }}.await"
    return f"buffer out: i32[1] = zeros;\ntask main {{\n    let v = {inner};\n    out[0] = v;\n}}\n"


# One unit of a realistic pipeline: consts, buffers, a channel and a signal, a plain fn,
# suspending async fns, a task array with a parallel loop, a loader and a consumer, with
# comments as the samples have them, though fewer: samples/ average 6.4 bytes per token,
# this unit 5.2 (a 1 MB file is about 193,000 tokens).
_UNIT = """\
// Pipeline {k}: a data-parallel stage fills y{k} and a histogram, then a loader
// sends tile numbers to a consumer that scales them through two async fns;
// a reporter waits for the consumer's signal.
const N{k}: i64 = 256;
buffer x{k}: f32[N{k}] = random({k});
buffer y{k}: f32[N{k}] = zeros;
buffer hist{k}: i32[16] = zeros;
shared total{k}: u64 = 0;
signal done{k};
channel tiles{k}: i64[4];

// Clamp to [0, 1]: a plain device function, inlined in its callers.
fn clamp{k}(v: f32) -> f32 {{
    return min(max(v, 0.0), 1.0);
}}

// Scale v n times, yielding to the other tasks on this warp between steps.
async fn scaled{k}(v: f32, n: i64) -> f32 {{
    let acc: f32 = 0.0;
    for j in 0..n {{
        if j % 2 == 0 {{
            acc = acc + v * 2.0;
        }} else {{
            acc = acc - clamp{k}(v);
        }}
        yield_now().await;
    }}
    return acc;
}}

// One element of the consumer's work.
async fn step{k}(i: i64) -> i64 {{
    let r = scaled{k}(x{k}[i], 4).await;
    y{k}[i] = r;
    return i + 1;
}}

// Eight instances, one warp each, 32 elements per instance.
task stage{k} for i in 0..8 {{
    parallel for j in 0..32 {{
        let g = i * 32 + j;
        y{k}[g] = 2.0 * x{k}[g] + 1.0;
        atomic_add(hist{k}[g % 16], 1);
    }}
}}

// The loader: 16 tiles, then close the channel so the consumer's loop ends.
task load{k} after stage{k} {{
    for t in 0..16 {{
        tiles{k}.send(t as i64).await;
    }}
    tiles{k}.close();
}}

// The consumer: receive until the channel is closed and empty.
task use{k} after stage{k} {{
    for await t in tiles{k} {{
        let n = step{k}(t).await;
        total{k}.fetch_add(n as u64);
    }}
    done{k}.set();
}}

// Whichever comes first: a short sleep or the consumer's signal.
task report{k} after load{k}, use{k} {{
    done{k}.wait().await;
    let s: i32 = 0;
    select {{
        v = async {{ sleep(1_000).await; 1 }} => {{ s = v; }}
        _ = done{k}.wait() => {{ s = 2; }}
    }}
    hist{k}[0] = s;
}}
"""


def large_file(size: int) -> str:
    """Copies of one realistic pipeline (distinct names) until the text reaches ``size`` bytes."""
    parts: list[str] = []
    total, k = 0, 0
    while total < size:
        unit = _UNIT.format(k=k)
        parts.append(unit)
        total += len(unit) + 1
        k += 1
    return "\n".join(parts)
