"""Drawings of a Plan: the task graph as DOT text (graphviz's Python package)."""

from gasync.viz.taskgraph import task_graph_dot

__all__ = ["task_graph_dot"]
