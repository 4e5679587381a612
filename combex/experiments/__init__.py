"""Named instances from the papers and the seeded experiment runner."""

from ._instances import INSTANCES, get_instance, list_instances, make_instance, register_instance
from ._runner import run_many, run_once, summarize

__all__ = ["INSTANCES", "get_instance", "list_instances", "make_instance", "register_instance",
           "run_many", "run_once", "summarize"]
