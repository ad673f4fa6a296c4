"""Programs nested as deep as generated code gets (issue 10: 1,000 levels), with the value
each must compute: nested ifs, nested whiles (in a task and in a plain fn), a 1,000-term
sum, a chain of unary minus, and a chain of async fns that each await the next."""

from __future__ import annotations


def nested_ifs(n: int) -> tuple[str, int]:
    body = "if x > 0 {\n" * n + "out[0] = 7;\n" + "}\n" * n
    return f"buffer out: i32[1] = zeros;\ntask main {{\nlet x: i32 = 1;\n{body}}}\n", 7


def nested_whiles(n: int, in_fn: bool = False) -> tuple[str, int]:
    """``n`` whiles, each running once; the innermost adds 3."""
    opens = "".join(f"let c{k}: i32 = 0;\nwhile c{k} < 1 {{\nc{k} += 1;\n" for k in range(n))
    nest = opens + "r += 3;\n" + "}\n" * n
    if in_fn:
        fn = f"fn f() -> i32 {{\nlet r: i32 = 0;\n{nest}return r;\n}}\n"
        return f"buffer out: i32[1] = zeros;\n{fn}task main {{ out[0] = f(); }}\n", 3
    return f"buffer out: i32[1] = zeros;\ntask main {{\nlet r: i32 = 0;\n{nest}out[0] = r;\n}}\n", 3


def long_sum(n: int) -> tuple[str, int]:
    terms = " + ".join(f"x{k % 3}" for k in range(n))
    lets = "let x0: i32 = 1; let x1: i32 = 2; let x2: i32 = 3;"
    return f"buffer out: i32[1] = zeros;\ntask main {{ {lets} out[0] = {terms}; }}\n", sum(k % 3 + 1 for k in range(n))


def unary_chain(n: int) -> tuple[str, int]:
    want = 5 if n % 2 == 0 else -5
    return f"buffer out: i32[1] = zeros;\ntask main {{ let x: i32 = 5; out[0] = {'-' * n}x; }}\n", want


def await_chain(n: int) -> tuple[str, int]:
    """f0 awaits f1 awaits ... f(n-1), which suspends once; each adds 1 on the way back."""
    fns = "".join(f"async fn f{k}() -> i32 {{ return f{k + 1}().await + 1; }}\n" for k in range(n - 1))
    last = f"async fn f{n - 1}() -> i32 {{ yield_now().await; return 0; }}\n"
    return f"buffer out: i32[1] = zeros;\n{fns}{last}task main {{ out[0] = f0().await; }}\n", n - 1


DEEP = {
    "nested_ifs": nested_ifs(1000),
    "nested_whiles": nested_whiles(1000),
    "nested_whiles_in_fn": nested_whiles(1000, in_fn=True),
    "sum_of_1000_terms": long_sum(1000),
    "unary_chain": unary_chain(1001),
    "await_chain_3000": await_chain(3000),
}

# The same shapes at sizes a GPU compiles in seconds: Numba-CUDA's passes grow with the
# square of a dispatch loop's blocks (gasync run warns before a compile of minutes), so
# the 1,000-deep statement nests are checked there at a depth that still cuts them into
# blocks (past codegen/blocks.py's DEEP), and the expression chains at full size.
ON_GPU = {
    "nested_ifs_40": nested_ifs(40),
    "nested_whiles_30": nested_whiles(30),
    "nested_whiles_in_fn_30": nested_whiles(30, in_fn=True),
    "sum_of_1000_terms": long_sum(1000),
    "unary_chain": unary_chain(1001),
    "await_chain_100": await_chain(100),
}
