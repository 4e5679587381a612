"""Data-backed crowdsourcing environment: find the best team of quiz workers.

The quiz data sets of Li, Baba & Kashima (CIKM 2017), used by the full-bandit paper
(Table 1 and Table 2): every worker answered every multiple-choice question of a domain.
A *team* (a set of workers) is evaluated on one question drawn uniformly at random and
the observed reward is the number of team members who answered it correctly; individual
scores are not observed (full-bandit feedback). Because all members answer the same
question, their scores are correlated (hard questions are hard for everyone).

Data: shipped in combex (:func:`combex.datasets.load_quiz`, CC BY 4.0; see the
PROVENANCE.md next to the data).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int, param_error
from ..datasets import QUIZ_DOMAINS, load_quiz
from ..exceptions import InvalidParameterError
from ..oracles import TopK
from ._base import ArmType, Environment, NoiseModel

__all__ = ["CrowdData", "CrowdQuiz", "load_crowd_quiz", "CROWD_DATASETS", "CROWD_FOLDER"]

#: Folder of the quiz data sets inside a data root of your own (``data_dir=...``).
CROWD_FOLDER = "crowd-li2017-quiz"
#: The six domains, in the order of the paper's Table 1.
CROWD_DATASETS = QUIZ_DOMAINS
_ALIASES = {"IT": "ITMANAGE", "POKÉMON": "POKEMON"}


@dataclass(frozen=True, eq=False)
class CrowdData:
    """A dense worker-by-question correctness table.

    Attributes
    ----------
    name : str
        Data set name (``"ITMANAGE"``..., or ``"synthetic"``).
    correct : bool array of shape (n_questions, n_workers)
        ``correct[q, w]``: whether worker w answered question q correctly (read-only).
    worker_ids : tuple of str
        The data's own worker ids (column names of ``answer.csv``: ``"worker1"``...),
        local to the data set.
    question_ids : tuple of str
        ``question_id`` of each row.
    accuracies : float array of shape (n_workers,)
        Fraction of questions each worker answered correctly (read-only).
    """

    name: str
    correct: NDArray[np.bool_]
    worker_ids: tuple[str, ...]
    question_ids: tuple[str, ...]
    accuracies: NDArray[np.float64]

    @classmethod
    def from_correct(
        cls,
        correct: Any,
        *,
        name: str = "custom",
        worker_ids: Any = None,
        question_ids: Any = None,
    ) -> "CrowdData":
        """Build from a 0/1 matrix of shape (n_questions, n_workers)."""
        c = np.asarray(correct)
        if c.ndim != 2 or c.shape[0] == 0 or c.shape[1] == 0:
            raise InvalidParameterError(
                "The 'correct' parameter of CrowdData must be a non-empty 2-d 0/1 array of "
                f"shape (n_questions, n_workers). Got an array of shape {c.shape} instead."
            )
        if c.dtype != np.bool_:
            if not np.all((c == 0) | (c == 1)):
                raise param_error("correct", "CrowdData", "a 0/1 array", c)
            c = c.astype(bool)
        else:
            c = c.copy()
        q, n = c.shape
        wid = tuple(f"worker{i + 1}" for i in range(n)) if worker_ids is None else tuple(map(str, worker_ids))
        qid = tuple(str(i + 1) for i in range(q)) if question_ids is None else tuple(map(str, question_ids))
        if len(wid) != n or len(qid) != q:
            raise InvalidParameterError(
                f"CrowdData needs {n} worker ids and {q} question ids. "
                f"Got {len(wid)} and {len(qid)} instead."
            )
        acc = c.mean(axis=0)
        c.setflags(write=False)
        acc.setflags(write=False)
        return cls(name=name, correct=c, worker_ids=wid, question_ids=qid, accuracies=acc)

    @property
    def n_workers(self) -> int:
        return int(self.correct.shape[1])

    def workers_of(self, team: Any) -> list[str]:
        """The data's own ids of the workers in ``team`` (a bool mask or indices).

        Examples
        --------
        >>> CrowdData.from_correct([[1, 0, 1]], worker_ids=["ann", "bo", "cy"]).workers_of([True, False, True])
        ['ann', 'cy']
        """
        t = np.asarray(team)
        idx = np.flatnonzero(t) if t.dtype == np.bool_ else t.astype(np.intp).ravel()
        if t.dtype == np.bool_ and t.shape != (self.n_workers,):
            raise param_error("team", "CrowdData.workers_of", f"a bool mask of length {self.n_workers}", t)
        return [self.worker_ids[int(i)] for i in idx]

    @property
    def n_questions(self) -> int:
        return int(self.correct.shape[0])


def load_crowd_quiz(dataset: str, data_dir: Any = None) -> CrowdData:
    """Load one quiz domain of Li, Baba & Kashima (2017) as a correctness table.

    The packaged data of :func:`combex.datasets.load_quiz` (or a copy under
    ``<data_dir>/crowd-li2017-quiz/``), reduced to who answered what correctly.

    Parameters
    ----------
    dataset : str
        One of ``"ITMANAGE"``, ``"MEDICINE"``, ``"CHINESE"``, ``"POKEMON"``,
        ``"ENGLISH"``, ``"SCIENCE"`` (case-insensitive; ``"IT"`` means ``"ITMANAGE"``).
    data_dir : str or path-like, optional
        A data root holding ``crowd-li2017-quiz`` to read instead of the packaged copy.

    Returns
    -------
    CrowdData

    Raises
    ------
    InvalidParameterError
        For an unknown data set name (the message lists the valid names).
    DataNotFoundError
        When ``data_dir`` lacks the data.
    CombexError
        When a file is malformed (ragged rows, a blank answer, a question without truth).

    Examples
    --------
    >>> data = load_crowd_quiz("IT")
    >>> data.correct.shape, round(float(data.accuracies.max()), 2)
    ((25, 36), 0.84)
    """
    if not (isinstance(dataset, str) and dataset.strip().upper() in set(CROWD_DATASETS) | set(_ALIASES)):
        raise param_error(
            "dataset", "CrowdQuiz",
            f"one of {list(CROWD_DATASETS)!r} (case-insensitive; alias 'IT' for 'ITMANAGE')", dataset,
        )
    quiz = load_quiz(dataset, data_home=data_dir)
    return CrowdData.from_correct(quiz.correct, name=quiz.domain, worker_ids=quiz.worker_ids,
                                  question_ids=quiz.question_ids)


class CrowdQuiz(Environment):
    """Find the best team of k workers from team scores on random quiz questions
    (the crowdsourcing experiment of the full-bandit paper, Section 5, Tables 1-2).

    Pulling a team ``M`` (a bool mask over the workers) draws a question ``q`` uniformly at
    random and returns ``sum_{w in M} correct[q, w]``: how many members answered it
    correctly, an integer in ``0..|M|``. Its expectation is the sum of the members'
    accuracies, so the base-arm means are the worker accuracies and the best team is the
    top-k by accuracy. Member scores are correlated (same question), real full-bandit
    feedback.

    The sum of ``c`` pulls is drawn exactly: the numbers of times each question is drawn
    are ``(n_q) ~ Multinomial(c, uniform over the Q questions)`` and the sum is
    ``sum_q n_q * correct[q, M].sum()`` (one multinomial per team, vectorized over teams).

    Parameters
    ----------
    dataset : str or CrowdData
        A domain name (see :func:`load_crowd_quiz`) or a loaded/synthetic table.
    k : int, default 10
        Team size of the decision class ``TopK(n_workers, k)`` (the paper uses k = 10).
        Teams of any size may be pulled.
    data_dir : str or path-like, optional
        A data root holding ``crowd-li2017-quiz`` to read instead of the packaged copy.
    rng : None, int, SeedSequence or Generator
        Generator of the question draws.

    Notes
    -----
    ``noise`` is ``NoiseModel("data", sigma=0.5, bound=1.0, independent=False)``: each
    worker's score is in {0, 1}, so its noise is 1/2-sub-Gaussian and lies in [-1, 1];
    the scores of a team's members are *not* independent.
    """

    arm_type: ArmType = "mask"

    def __init__(self, dataset: Any, *, k: Any = 10, data_dir: Any = None, rng: Any = None) -> None:
        super().__init__(rng=rng)
        owner = type(self).__name__
        if isinstance(dataset, CrowdData):
            self.data = dataset
            self._origin: dict[str, Any] = {"dataset": dataset.name}
        else:
            self.data = load_crowd_quiz(dataset, data_dir=data_dir)
            self._origin = {"dataset": self.data.name}
        self.n_arms = self.data.n_workers
        self.k = check_int(k, "k", owner=owner, low=1, high=self.n_arms)

        self.decision_class = TopK(self.n_arms, self.k)
        self.noise = NoiseModel(kind="data", sigma=0.5, bound=1.0, independent=False)
        self._correct_f = self.data.correct.astype(np.float64)  # (Q, n)
        q = self.data.n_questions
        self._pvals = np.full(q, 1.0 / q)

    @property
    def dataset(self) -> str:
        """Name of the data set."""
        return self.data.name

    @classmethod
    def synthetic(
        cls,
        n_workers: int = 36,
        n_questions: int = 25,
        *,
        k: int = 10,
        seed: int = 0,
        rng: Any = None,
    ) -> "CrowdQuiz":
        """A small synthetic quiz (NOT real data) of any size, for tests and simulations.

        Worker w has an ability ``a_w ~ Uniform(0.15, 0.9)`` and question q an easiness
        ``b_q ~ N(0, 1)``; w answers q correctly with probability
        ``sigmoid(logit(a_w) + b_q)``, so scores are correlated across workers through
        the question, as in the real data. The table is drawn once from ``seed``.

        Parameters
        ----------
        n_workers, n_questions : int
            Table size (defaults: the IT domain's 36 workers and 25 questions).
        k : int, default 10
            Team size of the decision class.
        seed : int, default 0
            Seed of the table (fixed so the demo is reproducible).
        rng : None, int, SeedSequence or Generator
            Generator of the question draws (the noise).
        """
        owner = "CrowdQuiz.synthetic"
        n = check_int(n_workers, "n_workers", owner=owner, low=1)
        q = check_int(n_questions, "n_questions", owner=owner, low=1)
        s = check_int(seed, "seed", owner=owner, low=0)
        gen = np.random.default_rng(s)
        ability = gen.uniform(0.15, 0.9, size=n)
        easiness = gen.standard_normal(q)
        logit = np.log(ability / (1.0 - ability))[None, :] + easiness[:, None]
        correct = gen.random((q, n)) < 1.0 / (1.0 + np.exp(-logit))
        env = cls(CrowdData.from_correct(correct, name="synthetic"), k=k, rng=rng)
        env._origin = {"dataset": "synthetic", "n_workers": n, "n_questions": q, "seed": s}
        return env

    def means(self) -> NDArray[np.float64]:
        """Worker accuracies (fraction of questions answered correctly)."""
        return np.array(self.data.accuracies, dtype=np.float64)

    def _pull_many(self, arms: NDArray[Any], counts: NDArray[np.int64]) -> NDArray[np.float64]:
        m = len(arms)
        if m == 0:
            return np.zeros(0)
        draws = self.rng.multinomial(counts, self._pvals)  # (m, Q): times each question is drawn
        team_scores = arms.astype(np.float64) @ self._correct_f.T  # (m, Q)
        return np.einsum("mq,mq->m", draws.astype(np.float64), team_scores)

    def params(self) -> dict[str, Any]:
        return {**self._origin, "k": self.k}
