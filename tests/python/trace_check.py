"""Checks a Chrome trace written by kiln's profiler: every event well
formed, each nested call inside its parent on the same thread, a parent's
self time its duration less its children's. Imported by test_profiler.py;
as a program it runs a command that writes the trace first:

    trace_check.py TRACE -- kiln run --trace TRACE mlp_step.lua
"""
import json
import subprocess
import sys

PHASES = ("forward", "backward")


def _ns(microseconds):
    """The format's microseconds (three decimals) as whole nanoseconds."""
    return round(microseconds * 1000)


def _check_event(e):
    assert e["ph"] == "X", e
    assert isinstance(e["name"], str) and e["name"], e
    assert e["cat"] in PHASES, e
    assert isinstance(e["pid"], int) and isinstance(e["tid"], int) and e["tid"] >= 1, e
    assert e["ts"] >= 0 and e["dur"] >= 0, e
    args = e["args"]
    assert isinstance(args["device"], str) and isinstance(args["depth"], int) and args["depth"] >= 0, e
    assert 0 <= _ns(args["self_us"]) <= _ns(e["dur"]), e
    assert all(isinstance(shape, list) and all(isinstance(d, int) for d in shape) for shape in args["input_shapes"]), e
    if e["name"].endswith(" backward"):
        assert e["cat"] == "backward", e


def _check_nesting(events):
    """Walks each thread's calls in start order with a stack of open ones."""
    by_thread = {}
    for e in events:
        by_thread.setdefault(e["tid"], []).append(e)
    for calls in by_thread.values():
        calls.sort(key=lambda e: (_ns(e["ts"]), e["args"]["depth"]))
        stack = []
        children = {}
        for e in calls:
            depth = e["args"]["depth"]
            del stack[depth:]
            assert len(stack) == depth, f"{e['name']} at depth {depth} has no enclosing call"
            start, end = _ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])
            if stack:
                parent = stack[-1]
                assert _ns(parent["ts"]) <= start and end <= _ns(parent["ts"]) + _ns(parent["dur"]), (parent, e)
                children[id(parent)] = children.get(id(parent), 0) + _ns(e["dur"])
            stack.append(e)
        for e in calls:
            assert _ns(e["dur"]) - _ns(e["args"]["self_us"]) == children.get(id(e), 0), e


def check_trace(path):
    """The trace's complete events, after checking them; raises AssertionError."""
    with open(path) as f:
        trace = json.load(f)
    events = [e for e in trace["traceEvents"] if e.get("ph") != "M"]
    assert events, "the trace holds no events"
    for e in events:
        _check_event(e)
    _check_nesting(events)
    return events


def check_training_step(path):
    """A training step's trace: forward and backward calls of linear both there."""
    events = check_trace(path)
    names = {(e["cat"], e["name"]) for e in events}
    assert ("forward", "linear") in names, sorted(names)
    assert ("backward", "linear backward") in names, sorted(names)
    assert any(e["cat"] == "backward" and e["args"]["depth"] > 0 for e in events), "no op nested in a backward"
    return events


if __name__ == "__main__":
    trace_path, separator, *command = sys.argv[1:]
    assert separator == "--", "usage: trace_check.py TRACE -- COMMAND..."
    subprocess.run(command, check=True)
    print(f"{len(check_training_step(trace_path))} events checked")
