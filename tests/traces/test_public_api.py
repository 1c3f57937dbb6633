"""The public surface of toolaudit.traces is exactly what ``__all__`` lists."""

from __future__ import annotations

import toolaudit.traces as traces


def test_traces_all_names_resolve_and_are_documented() -> None:
    for name in traces.__all__:
        obj = getattr(traces, name)
        if callable(obj) and name != "TraceFormat":  # a typing.Literal alias
            assert obj.__doc__, name
    public = {n for n in dir(traces) if not n.startswith("_")}
    assert set(traces.__all__) <= public
    assert {"load_episodes", "load_examples", "detect_format", "load_domain"} <= set(traces.__all__)
