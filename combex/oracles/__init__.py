"""Decision classes with exact linear maximization oracles: the plug-in point of combex.

A decision class is a finite family of subsets of ``{0, ..., n-1}`` given by an oracle
``argmax(weights)``; see :class:`DecisionClass`. Built-in classes:

- :class:`TopK` — subsets of exactly k elements;
- matroids, as independent sets (``base=False``) or bases (``base=True``):
  :class:`Matroid` (any independence oracle), :class:`UniformMatroid`,
  :class:`PartitionMatroid`, :class:`GraphicMatroid`, :class:`LinearMatroid`, and
  :class:`SpanningTrees` (bases of a connected graph's graphic matroid);
- graphs: :class:`STPaths` (s-t paths in a DAG), :class:`Matchings`;
- :class:`ExplicitFamily` (members listed), :class:`ConstraintFamily` (0-1 solutions
  of linear constraints, solved by OR-Tools CP-SAT).

New classes plug in by subclassing :class:`DecisionClass`; the registry
(:func:`register_decision_class`, entry-point group ``combex.oracles``) lets the CLI name
them.
"""


from ._base import DecisionClass
from ._registry import (
    DECISION_CLASSES,
    get_decision_class,
    list_decision_classes,
    make_decision_class,
    register_decision_class,
)
from ._topk import TopK
from ._matroids import (
    GraphicMatroid,
    LinearMatroid,
    Matroid,
    PartitionMatroid,
    SpanningTrees,
    UniformMatroid,
)
from ._graphs import Matchings, STPaths
from ._explicit import ExplicitFamily
from ._cpsat import ConstraintFamily
from .quadratic import (
    DKS_ORACLES,
    QuadraticCertificate,
    QuadraticMaximization,
    get_dks_oracle,
    solve_qp_exact,
    upper_bound_qp,
)

__all__ = [
    "DecisionClass",
    "TopK",
    "Matroid",
    "UniformMatroid",
    "PartitionMatroid",
    "GraphicMatroid",
    "LinearMatroid",
    "SpanningTrees",
    "STPaths",
    "Matchings",
    "ExplicitFamily",
    "ConstraintFamily",
    "DECISION_CLASSES",
    "register_decision_class",
    "get_decision_class",
    "make_decision_class",
    "list_decision_classes",
    "QuadraticMaximization",
    "QuadraticCertificate",
    "upper_bound_qp",
    "solve_qp_exact",
    "DKS_ORACLES",
    "get_dks_oracle",
]
