"""Open a ``gasync run --report`` page in headless Chromium, as a user would, and screenshot it.

    python scripts/report_view.py report.html -o shot.png [--hover TASK]

Prints what the timeline says of itself (``N polls of T tasks over ...``) and,
with ``--hover``, the tooltip of the first poll of that task's lane after
pointing at it, so a check can read what the picture holds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from browser import Browser  # noqa: E402

# the centre of the first box of a lane, from the data and the canvas's place on the page
POINT_JS = """(() => {
  const d = JSON.parse(document.getElementById('gasync-data').textContent);
  const k = d.tasks.findIndex(t => t.name === %s);
  const p = d.polls.filter(p => p[0] === k).sort((a, b) => a[2] - b[2])[0];
  const canvas = document.getElementById('timeline'), c = canvas.getBoundingClientRect();
  const left = Number(canvas.dataset.left);  // the lanes' left edge (timeline.js)
  const x = left + ((p[2] + p[3]) / 2) / Math.max(1, d.span) * (c.width - left - 10);
  return [c.left + x, c.top + 26 + k * 26 + 13];
})()"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("-o", "--output", type=Path, required=True, help="the PNG to write")
    ap.add_argument("--hover", metavar="TASK", help="point at the first poll of this task and print its tooltip")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=1800)
    args = ap.parse_args()
    with Browser(args.width, args.height) as b:
        b.goto(args.report.resolve().as_uri())
        status = b.wait_for(
            "document.getElementById('timeline-status')?.textContent.includes('polls')"
            " && document.getElementById('timeline-status').textContent",
            30,
        )
        print(status)
        if args.hover:
            b.eval("document.getElementById('timeline').scrollIntoView()")
            x, y = b.eval(POINT_JS % json.dumps(args.hover))
            b.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
            time.sleep(0.3)
            print(b.eval("document.getElementById('timeline-tip').textContent"))
        b.screenshot(args.output)
    print(f"screenshot in {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
