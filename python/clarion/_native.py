"""The six symbols of clarion's C ABI, through ctypes.

ctypes.CDLL releases the GIL for the duration of each foreign call, so a
thread blocked in `clarion_call` (a wait) lets every other Python thread run.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

_LIBRARY_NAMES = {"darwin": "libclarion.dylib", "win32": "clarion.dll"}

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None


def library_path() -> str:
    """Where the library is: `CLARION_LIB`, else beside this package."""
    override = os.environ.get("CLARION_LIB")
    if override:
        return override
    name = _LIBRARY_NAMES.get(sys.platform, "libclarion.so")
    return str(Path(__file__).resolve().parent / name)


def lib() -> ctypes.CDLL:
    """The loaded library, loaded on first use (so that importing the
    package, for its types, needs no library)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            loaded = ctypes.CDLL(library_path())
            loaded.clarion_abi_version.restype = ctypes.c_char_p
            loaded.clarion_abi_version.argtypes = []
            loaded.clarion_open.restype = ctypes.c_void_p
            loaded.clarion_open.argtypes = [ctypes.c_char_p]
            # A raw pointer, not c_char_p: ctypes would copy and lose it, and
            # the reply must go back to clarion_string_free.
            loaded.clarion_call.restype = ctypes.c_void_p
            loaded.clarion_call.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
            loaded.clarion_string_free.restype = None
            loaded.clarion_string_free.argtypes = [ctypes.c_void_p]
            loaded.clarion_close.restype = None
            loaded.clarion_close.argtypes = [ctypes.c_void_p]
            loaded.clarion_last_error.restype = ctypes.c_char_p
            loaded.clarion_last_error.argtypes = []
            _lib = loaded
        return _lib


def abi_version() -> str:
    version: bytes = lib().clarion_abi_version()
    return version.decode("utf-8")


def open_handle(config: dict[str, Any]) -> int | None:
    """`clarion_open`: the handle, or None (then `last_error` says why)."""
    handle: int | None = lib().clarion_open(json.dumps(config).encode("utf-8"))
    return handle


def last_error() -> str:
    """Why this thread's last `clarion_open` failed (`""` if it did not)."""
    error: bytes | None = lib().clarion_last_error()
    return "" if error is None else error.decode("utf-8", "replace")


def call(handle: int, request: dict[str, Any]) -> dict[str, Any]:
    """`clarion_call`: the decoded reply `{"status", "body", "code", "field"}`."""
    library = lib()
    pointer: int | None = library.clarion_call(handle, json.dumps(request).encode("utf-8"))
    if not pointer:
        raise MemoryError("clarion_call returned NULL")
    try:
        reply: dict[str, Any] = json.loads(ctypes.string_at(pointer).decode("utf-8"))
    finally:
        library.clarion_string_free(pointer)
    return reply


def close(handle: int) -> None:
    lib().clarion_close(handle)
