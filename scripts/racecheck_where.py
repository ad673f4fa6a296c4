"""Each hazard pair of a racecheck log, by the generated lines its accesses are at.

``python3 scripts/racecheck_where.py LOG GENERATED.py``: LOG is compute-sanitizer's racecheck
output for a run of scripts/racecheck_lines.py (line information on), GENERATED.py the module
it copied. For every reported pair: Error or Warning, then each access (Read or Write) with its
generated line number and text, and the nearest `# line N: ...` comment above it (the
`.gasync` line that code came from).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ACCESS = re.compile(r"(Read|Write) access at .*?\+0x[0-9a-f]+ in (\S+?):(\d+)", re.S)


def source_of(lines: list[str], k: int) -> str:
    """The `.gasync` line the generated line ``k`` (1-based) came from: the nearest mark above."""
    for j in range(k - 1, -1, -1):
        m = re.search(r"# line (\d+): (.*)", lines[j])
        if m:
            return f"{m.group(1)}: {m.group(2).strip()}"
    return "?"


def main() -> int:
    log, gen = Path(sys.argv[1]).read_text(), Path(sys.argv[2]).read_text().splitlines()
    for block in re.split(r"========= (?=Error|Warning)", log)[1:]:
        kind = block.split(":", 1)[0]
        print(kind)
        for access, _, line in ACCESS.findall(block.replace("\n=========     ", " ")):
            k = int(line)
            text = gen[k - 1].strip() if 0 < k <= len(gen) else "?"
            print(f"  {access:5} {k:6}  {text[:90]}   [{source_of(gen, k)}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
