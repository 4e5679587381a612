"""Maximum inner product search (MIPS): exact, HNSW, LSH, bandit (BoundedME), adaptive.

* :func:`exact_top_k` / :func:`exact_nn_top_k`: one BLAS product + argpartition;
  :class:`ExactIndex`: a growable exact index with insertion and deletion.
* :func:`mips_top_k` / :func:`nn_top_k`: BoundedME on the MAB-BP formulation (Liu, Wu and
  Mozafari 2019), epsilon-optimal with probability >= 1 - delta, no preprocessing and no
  copy of V; :class:`BoundedMEIndex` prepares V once for contiguous reads; the cost model
  :func:`read_cost` (fraction of V's bytes a schedule reads, best speedup possible) picks
  between BoundedME and exact search.
* BoundedME the algorithm: :func:`bounded_me_schedule`, :func:`bounded_me` (the direct
  loop over a ``pull`` callback); the ask / tell solver ``"bounded-me"`` in
  :mod:`combex.solvers.mips` uses them.
* :class:`HNSWIndex`, :func:`hnsw_top_k`: HNSW through hnswlib (the ``mips`` extra).
* :class:`SignLSHIndex`, :func:`lsh_top_k`, :func:`mips_to_nns`: sign-random-projection
  LSH through the standard MIPS-to-NNS transform.
* :class:`AdaptiveMIPS`: the adaptive MIPS solver M(c, r, epsilon, delta) of Yang et al.
  (2022), Algorithm 1, used by the sublinear-time linear bandits.
"""


from ._adaptive import AdaptiveMIPS
from ._bandit import BoundedMEIndex, mips_top_k, nn_top_k
from ._bounded_me import BoundedMEOutcome, BoundedMERound, bounded_me, bounded_me_schedule
from ._common import MIPSResult
from ._cost import ReadCost, read_cost
from ._exact import ExactIndex, exact_nn_top_k, exact_top_k
from ._hnsw import HNSWIndex, hnsw_top_k
from ._lsh import SignLSHIndex, lsh_top_k, mips_to_nns, nns_query

__all__ = [
    "MIPSResult",
    "exact_top_k",
    "exact_nn_top_k",
    "ExactIndex",
    "mips_top_k",
    "nn_top_k",
    "BoundedMEIndex",
    "read_cost",
    "ReadCost",
    "bounded_me",
    "bounded_me_schedule",
    "BoundedMERound",
    "BoundedMEOutcome",
    "HNSWIndex",
    "hnsw_top_k",
    "SignLSHIndex",
    "lsh_top_k",
    "mips_to_nns",
    "nns_query",
    "AdaptiveMIPS",
]
