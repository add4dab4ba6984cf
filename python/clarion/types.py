"""The argument and result types of every operation (TypedDicts and
Literal aliases), generated from the library's declarations."""

from ._generated import *  # noqa: F403
from ._generated import __all__ as __all__
