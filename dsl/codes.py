"""Diagnostic codes: one stable code per kind of mistake, with its longer explanation.

Every diagnostic class (a subclass of ``GasyncError`` in ``dsl/diagnostics.py``,
``planner/errors.py``, ``runtime/errors.py`` and a few more) names its code in a
``code`` class attribute; this table is the one place that says what each code
means, for ``gasync explain CODE`` and for the table in ``docs/diagnostics.md``
(a test keeps the two equal, and checks that each example of a compile-time code
really gives that code). Codes never change meaning and are never reused:

- ``E00xx`` reading the program file;
- ``E01xx`` syntax (``dsl/``);
- ``E02xx`` names, types and the program's structure (``planner/``), and
  ``W02xx`` the planner's warnings;
- ``E03xx`` running (``runtime/``, ``reference/``);
- ``E04xx`` code generation (``codegen/``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Code:
    """What one code means: a title (the docs' table), an explanation and an example."""

    code: str
    title: str
    explanation: str
    example: str = ""  # a program that gives this diagnostic ("" where no short one can)
    checked: bool = True  # whether `gasync check` finds it (else only a run does)


# Code and title on one line: the table reads as the docs' table does.
# fmt: off
CODES: tuple[Code, ...] = (
    Code(
        "E0001", "the program file cannot be read",
        "The path does not exist, is a directory, or is not UTF-8 text. The command line reports it as a usage"
        " error (exit status 2).",
        checked=False,
    ),
    Code(
        "E0002", "usage error",
        "The command line is wrong: an option's value, a file to write, a name that the program does not"
        " have (-D, --input, --output, --signal). Exit status 2; `gasync CMD --help` lists the options.",
        checked=False,
    ),
    Code(
        "E0003", "internal error",
        "gasync failed in a way that is a bug in gasync, not in your program. Re-run with --debug to see the"
        " traceback, and please report it with the program.",
        checked=False,
    ),
    # ---- syntax ----
    Code(
        "E0101", "unexpected token",
        "The parser met a token the grammar does not allow at this place. The message lists what would have"
        " been accepted, in the words you write (';', not SEMICOLON). An item keyword inside a body usually"
        " means the body's '}' is missing: a note points at the '{' left open.",
        "task main;\n",
    ),
    Code(
        "E0102", "missing ';'",
        "A statement or item runs on into the next one: every statement, and every item other than a fn or"
        " task, ends with ';'.",
        "task main {\n    let x = 5\n    let y = 6;\n}\n",
    ),
    Code(
        "E0103", "chained comparison",
        "Comparisons do not chain, as in Rust: `a < b < c` would compare a bool with c. Write `a < b && b < c`.",
        "task main {\n    let b = 1 < 2 < 3;\n}\n",
    ),
    Code(
        "E0104", "keyword used as a name",
        "Keywords are reserved everywhere, so a keyword cannot name a variable, a field or a method.",
        "task main {\n    let fn = 1;\n}\n",
    ),
    Code(
        "E0105", "unclosed delimiter",
        "A '{', '(' or '[' that the file never closes. The note says where the file ends.",
        "task main {\n    let x = 5;\n",
    ),
    Code(
        "E0106", "unmatched or mismatched closing delimiter",
        "A '}', ')' or ']' with no opener, or one that closes a different kind of bracket than the one open.",
        "task main {\n}\n}\n",
    ),
    Code(
        "E0107", "unexpected end of file",
        "The file ends in the middle of an item; the message says what the parser still expected.",
        "task main",
    ),
    Code(
        "E0108", "invalid character",
        "A character that starts no token of the language (such as '@' or '$').",
        "task main {\n    let x = 1 @ 2;\n}\n",
    ),
    Code(
        "E0109", "unterminated block comment",
        "A '/*' with no matching '*/' before the end of the file.",
        "task main {\n    /* oops\n}\n",
    ),
    Code(
        "E0110", "unterminated string",
        "A string (only extern fn paths are strings) whose closing '\"' is missing on its line.",
        'extern fn g(v: f32) -> f32 from "m.k:g;\n',
    ),
    Code(
        "E0111", "invalid numeric literal",
        "A number with stray letters or digits that its base does not have, such as 12abc or 0xfg.",
        "const N: i64 = 12abc;\ntask main { }\n",
    ),
    Code(
        "E0112", "invalid assignment target",
        "Only a local variable or a buffer element (`buf[i]`) can be assigned; shared scalars are written with"
        " .store(v) or an atomic method.",
        "task main {\n    1 + 2 = 3;\n}\n",
    ),
    Code(
        "E0113", "invalid buffer initialiser",
        "A buffer starts as zeros, iota, input, random(seed) or fill(value), and nothing else.",
        "buffer x: f32[4] = ones;\ntask main { }\n",
    ),
    Code(
        "E0114", "method on something that is not a name",
        "Methods such as .load(), .send(v) or .is_set() are called on a shared scalar, signal or channel by"
        " its name, not on the value of an expression.",
        "task main {\n    f(x).load();\n}\n",
    ),
    Code(
        "E0115", "nesting too deep",
        "Blocks or expressions nested past the compiler's limit of 4,096 levels (dsl/depth.py). Split the"
        " program into functions.",
        checked=False,
    ),
    Code(
        "E0199", "internal parser error",
        "The parser failed in a way it has no message for. This is a bug in gasync: please report the program.",
        checked=False,
    ),
    # ---- names, types, structure ----
    Code(
        "E0201", "no task",
        "A program runs its tasks and nothing else, so a program without a task would do nothing.",
        "buffer out: i32[1] = zeros;\n",
    ),
    Code(
        "E0202", "unknown name",
        "A name that nothing in scope defines: a typo, a variable used outside the block that binds it, or an"
        " item that was never declared.",
        "task main {\n    let x = y + 1;\n}\n",
    ),
    Code(
        "E0203", "name defined twice",
        "Two items, two parameters of one fn, or a let binding and a global (const, buffer, shared, signal or"
        " channel) share a name.",
        "const x: i32 = 1;\nconst x: i32 = 2;\ntask main { }\n",
    ),
    Code(
        "E0204", "mismatched types",
        "Types that do not agree, or an operation that a type does not support. gasync converts nothing"
        " implicitly: write `x as f32`.",
        "buffer out: f32[1] = zeros;\ntask main {\n    let a: i32 = 1;\n    out[0] = a;\n}\n",
    ),
    Code(
        "E0205", "wrong number of arguments",
        "A call to a fn, async fn or builtin with more or fewer arguments than it takes.",
        "fn f(a: i32) -> i32 { return a; }\ntask main {\n    let x = f(1, 2);\n}\n",
    ),
    Code(
        "E0206", "await or async construct where none is allowed",
        "`.await`, select, `for await` and async blocks need a state machine to come back to: they are"
        " allowed in async fns, async blocks and tasks, but not in a plain fn nor inside a parallel or bulk"
        " for, whose lanes run to the end without suspending.",
        "async fn g() -> i32 { return 1; }\nfn f() -> i32 {\n    return g().await;\n}\ntask main { }\n",
    ),
    Code(
        "E0207", "future misused",
        "A future used as a plain value (an async fn called without .await), .await on something that is"
        " not a future, or a future kept in a local (let f = g(x);) that is awaited twice, awaited in a loop"
        " it was not made in, or never awaited.",
        "async fn g() -> i32 { return 1; }\ntask main {\n    let x = g() + 1;\n}\n",
    ),
    Code(
        "E0208", "control flow where it is not allowed",
        "break or continue outside a loop, return where none is allowed, or a fn that can reach the end of"
        " its body without returning its value.",
        "task main {\n    break;\n}\n",
    ),
    Code(
        "E0209", "write to a read-only variable",
        "Loop variables are read-only, and so are task locals inside a parallel or bulk for (its lanes run"
        " at once): carry results out through a buffer or an atomic. A const is read-only everywhere, and a"
        " shared scalar is read-only to `=`: write it with `.store(v)` or an atomic method.",
        "task main {\n    for i in 0..4 {\n        i = 2;\n    }\n}\n",
    ),
    Code(
        "E0210", "not a compile-time constant",
        "Sizes, consts and task ranges are known at compile time: they may use literals and consts only, and"
        " must be computable (no division by zero). A shift whose amount is known at compile time, anywhere,"
        " must shift by less than its left operand's width and not by a negative amount (`1 << 64` is an"
        " error, as in Rust).",
        "const N: i32 = 1 / 0;\ntask main { }\n",
    ),
    Code(
        "E0211", "too large",
        "A buffer or channel larger than any device could hold, or a shift by more bits than its type has.",
        "buffer big: f32[1000000000000] = zeros;\ntask main { }\n",
    ),
    Code(
        "E0212", "bad -D override",
        "A -D NAME=VALUE (or `defines=` in the API) whose value does not fit the const's type. The command"
        " line reports it as a usage error (exit status 2).",
        checked=False,
    ),
    Code(
        "E0213", "recursion",
        "Async fns and fns may not call themselves, directly or through others: every frame has a size known"
        " at compile time. The message names the cycle.",
        "async fn f() -> i32 { return f().await; }\ntask main { }\n",
    ),
    Code(
        "E0214", "cycle in after edges",
        "Tasks whose `after` clauses form a cycle could never start. The message names the cycle.",
        "task a after b { }\ntask b after a { }\n",
    ),
    Code(
        "E0215", "channel never sent on or never received from",
        "A channel that nobody sends on, or nobody receives from, would make its other side wait forever.",
        "channel c: i32[4];\ntask main {\n    c.send(1).await;\n}\n",
    ),
    Code(
        "E0216", "invalid extern path",
        'An extern fn names its Python function as "dotted.module:function".',
        'extern fn g(v: f32) -> f32 from "mylib/kernels.py";\ntask main { }\n',
    ),
    Code(
        "E0217", "concurrent writes (under --strict)",
        "W0217 promoted to an error by --strict (`strict=True` in the API).",
        checked=False,
    ),
    Code(
        "W0217", "concurrent writes",
        "Two tasks that may run at once (no `after` path between them) write overlapping elements of one"
        " buffer outside atomics, so the result depends on their timing. Order them with `after`, write"
        " disjoint elements, or use an atomic.",
        "buffer out: i32[1] = zeros;\ntask a { out[0] = 1; }\ntask b { out[0] = 2; }\n",
    ),
    Code(
        "W0218", "unused item",
        "Something the program declares and never uses: a const nothing reads (one that -D sets too), a buffer"
        " or a group's local buffer that no task reads or writes, a shared scalar never used, a signal that"
        " nothing waits on, tests with is_set() or sets, a fn or async fn that no task calls (directly or"
        " through other fns), or a `let` whose value is never read. Uses count only from code that runs: what"
        " only an unused fn names is unused too, and a note names the unused item it is reached from. A name"
        " that starts with '_' is never warned of (`let _x = ...;`). --strict leaves this a warning.",
        "buffer out: i32[1] = zeros;\ntask main {\n    let x = 5;\n    out[0] = 1;\n}\n",
    ),
    Code(
        "E0218", "index out of bounds",
        "A buffer index that is known at compile time (literals and consts) lies outside the buffer:"
        " an index must be at least 0 and less than the buffer's length along its dimension.",
        "buffer out: i32[1] = zeros;\ntask main { out[5] = 1; }\n",
    ),
    Code(
        "E0219", "wrong reduction",
        "`parallel for ... reduce OP { ...; value }` and `bulk for ... reduce OP { ... }` combine one value per"
        " iteration, the body's tail expression: `sum`, `min` and `max` take any numeric type, `and` and `or`"
        " take bool or an integer type (bitwise). A reduction is only ever the whole value of a `let` or of an"
        " assignment: one inside an expression (`1 + parallel for ...`, in parentheses, as an argument) is this"
        " error too; name it with `let` and use the name.",
        "buffer x: f32[4] = zeros;\ntask main { let b: f32 = parallel for i in 0..4 reduce and { x[i] }; }\n",
    ),
    Code(
        "E0220", "local item used outside its group",
        "A group's `local buffer` and `local channel` live in the shared memory of the block that runs"
        " each group instance, so only the group's own tasks can name them. Use a global `buffer` or"
        " `channel` for data that crosses the group's border.",
        "buffer y: f32[4] = zeros;\ngroup pipe for g in 0..2 {\n    local buffer stage: f32[4];\n"
        "    task a { stage[0] = 1.0; }\n}\ntask other { y[0] = stage[0]; }\n",
    ),
    Code(
        "E0221", "group does not fit one block",
        "Each instance of a group runs on one CUDA block, one warp per task instance: it may have at most"
        " 32 warps, and its local buffers and channels must fit the block's shared memory (the device's"
        " limit, 227 KiB on an H100 or H200, which is the limit when no device is known).",
        "group big for g in 0..2 {\n    local channel c: i32[2];\n    task a for k in 0..30 { c.send(1).await; }\n"
        "    task b for k in 0..3 { let v = c.recv().await; }\n}\n",
    ),
    Code(
        "E0222", "group rule broken",
        "The tasks of a group instance start together and keep their warps until it ends: a task inside a"
        " group has no `after` of its own (give `after` to the group), and runs no `bulk for` (its chunks"
        " would need warps that the group holds).",
        "task init { }\ngroup pipe for g in 0..2 {\n    task a after init { }\n}\n",
    ),
    # ---- running ----
    Code(
        "E0301", "bad input data",
        "An --input (or `inputs=`) for a buffer the program does not declare `= input`, one missing, or an"
        " array of the wrong shape or type, or a .npy file that cannot be read.",
        checked=False,
    ),
    Code(
        "E0302", "backend unavailable",
        "The backend asked for cannot run here: no CUDA GPU for `cuda`, or the launch failed.",
        checked=False,
    ),
    Code(
        "E0303", "deadlock",
        "Unfinished tasks wait on something that nothing can wake: a receive from a channel nobody sends on"
        " any more, a signal nobody sets. The message names what each task waits on.",
        "channel c: i32[1];\ntask a { let v = c.recv().await; }\ntask b after a { c.send(1).await; }\n",
        checked=False,
    ),
    Code(
        "E0304", "timeout",
        "The run took longer than --timeout (`timeout=` in the API) and was stopped.",
        checked=False,
    ),
    Code(
        "E0305", "device limit reached",
        "The kernel stopped on one of the executor's internal limits (its run queue filled up, lanes were"
        " lost), or a group's block does not fit this GPU (its registers, or its shared memory beyond the"
        " device's opt-in maximum per block: the error names the group and the limit).",
        checked=False,
    ),
    Code(
        "E0306", "extern fn does not import",
        "The module of an extern fn does not import, or has no function of that name.",
        checked=False,
    ),
    Code(
        "E0307", "extern fn is not a device function",
        "An extern fn must name a Numba CUDA device function (`@cuda.jit(device=True)`).",
        checked=False,
    ),
    Code(
        "E0308", "extern fn signature mismatch",
        "The extern fn's declared parameters or result do not match what Numba infers for its Python"
        " function.",
        checked=False,
    ),
    Code(
        "E0309", "run failed",
        "A run failed for a reason with no code of its own; the message says what happened.",
        checked=False,
    ),
    Code(
        "E0310", "reference run too long",
        "The reference interpreter (a test oracle) passed its step limit.",
        checked=False,
    ),
    Code(
        "E0311", "bad trace file",
        "A trace given to `gasync schedule` is not the JSON that `gasync run --trace` writes.",
        checked=False,
    ),
    Code(
        "E0312", "index out of bounds at run time",
        "A buffer index, known only at run time, lay outside the buffer: an index must be at least 0 and less"
        " than the buffer's length along its dimension. The run stops at the first such access, naming it,"
        " the index, the length and the task instance, and counts any others met before it stopped; nothing"
        " is read or written outside a buffer. Accesses the compiler proves in range are not checked (see"
        " docs/language.md), and `gasync run --unchecked` leaves out the other checks too.",
        "buffer out: i32[4] = zeros;\nbuffer at: i64[1] = fill(7);\ntask main { out[at[0]] = 1; }\n",
        checked=False,
    ),
    # ---- code generation ----
    Code(
        "E0401", "construct not supported by the code generator",
        "The program is valid, but the code generator cannot compile one of its constructs yet.",
        checked=False,
    ),
)
# fmt: on

BY_CODE: dict[str, Code] = {c.code: c for c in CODES}


def explain(code: str) -> str | None:
    """The text ``gasync explain CODE`` prints, or None for a code that does not exist."""
    info = BY_CODE.get(code.strip().upper())
    if info is None:
        return None
    lines = [f"{info.code}: {info.title}", "", info.explanation]
    if info.example:
        lines += ["", "For example:", "", *("    " + line for line in info.example.rstrip("\n").split("\n"))]
    return "\n".join(lines) + "\n"
