"""Shared test helpers."""

from __future__ import annotations

import threading
import time
import types
import typing
from collections.abc import Callable
from typing import Any

from clarion import Clarion
from clarion.types import QuestionArgs

QUESTIONS: list[QuestionArgs] = [
    {
        "title": "Colour",
        "prompt": "Which colour?",
        "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}],
    },
    {
        "question_id": "size",
        "title": "Size",
        "prompt": "Which size?",
        "options": [
            {"option_id": "s", "label": "Small", "description": "s"},
            {"option_id": "l", "label": "Large", "description": "l"},
        ],
    },
]


def answers(text: str = "") -> list[Any]:
    return [
        {"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": text},
        {"question_id": "size", "selected_options": ["l"]},
    ]


def conforms(value: Any, tp: Any, path: str = "$") -> None:
    """Asserts that `value` is what the generated type `tp` says, all the way
    down: a TypedDict's keys exactly, in order, Literals' values, unions."""
    if tp is Any:
        return
    if typing.is_typeddict(tp):
        assert isinstance(value, dict), (path, value)
        hints = typing.get_type_hints(tp)
        assert set(value) >= tp.__required_keys__, (path, sorted(tp.__required_keys__ - set(value)))
        assert set(value) <= set(hints), (path, sorted(set(value) - set(hints)))
        assert [k for k in hints if k in value] == list(value), (path, list(value), list(hints))
        for key, item in value.items():
            conforms(item, hints[key], f"{path}.{key}")
        return
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        errors = []
        for option in typing.get_args(tp):
            try:
                conforms(value, option, path)
                return
            except AssertionError as error:
                errors.append(error)
        raise AssertionError(path, value, tp, errors)
    if origin is typing.Literal:
        assert value in typing.get_args(tp), (path, value, tp)
        return
    if origin is list:
        assert isinstance(value, list), (path, value)
        (item_type,) = typing.get_args(tp)
        for i, item in enumerate(value):
            conforms(item, item_type, f"{path}[{i}]")
        return
    if origin is dict:
        assert isinstance(value, dict), (path, value)
        return
    if tp is type(None):
        assert value is None, (path, value)
        return
    if tp is int:
        assert isinstance(value, int) and not isinstance(value, bool), (path, value)
        return
    assert isinstance(value, tp), (path, value, tp)


def wait_until(condition: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    """Polls `condition` (never a fixed sleep) until it holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


class CallCounter:
    """Wraps a client's `_call` to count calls of one operation in flight."""

    def __init__(self, client: Clarion, op: str) -> None:
        self.op = op
        self.entered = 0
        self.in_flight = 0
        self._lock = threading.Lock()
        inner = client._call

        def counting(op_: str, args: dict[str, Any]) -> Any:
            if op_ != op:
                return inner(op_, args)
            with self._lock:
                self.entered += 1
                self.in_flight += 1
            try:
                return inner(op_, args)
            finally:
                with self._lock:
                    self.in_flight -= 1

        client._call = counting  # type: ignore[method-assign,assignment]
