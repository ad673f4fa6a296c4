"""Drawings of a Plan and of a traced run.

- ``taskgraph``: the task graph (``gasync graph``).
- ``states``: each async fn's and task's state machine (``gasync graph --states``).
- ``statespage``: where those machines go on the page (rows near a page's shape).
- ``perfetto``: a RawTrace as Chrome trace-event JSON (``gasync run --trace``).
- ``schedule``: a RawTrace as a per-executor timeline (``gasync schedule``).

Each returns a ``graphviz.Digraph`` or a dict; writing and rendering happen in the CLI.
"""

from gasync.viz.perfetto import from_chrome_trace, to_chrome_trace
from gasync.viz.schedule import schedule_dot, schedule_graph
from gasync.viz.states import states_graph, states_graph_dot
from gasync.viz.taskgraph import task_graph_dot

__all__ = [
    "from_chrome_trace",
    "schedule_dot",
    "schedule_graph",
    "states_graph",
    "states_graph_dot",
    "task_graph_dot",
    "to_chrome_trace",
]
