"""Data-backed crowdsourcing environment: find the best team of quiz workers.

The quiz data sets of Li, Baba & Kashima (CIKM 2017), used by the full-bandit paper
(Table 1 and Table 2): every worker answered every multiple-choice question of a domain.
A *team* (a set of workers) is evaluated on one question drawn uniformly at random and
the observed reward is the number of team members who answered it correctly; individual
scores are not observed (full-bandit feedback). Because all members answer the same
question, their scores are correlated (hard questions are hard for everyone).

Data: ``<data root>/crowd-li2017-quiz/<DATASET>/{answer,truth}.csv`` (CC BY 4.0; see the
PROVENANCE.md next to the data). The data root is found by
:func:`combex.environments.data_dir`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int, param_error
from ..exceptions import CombexError, DataNotFoundError, InvalidParameterError
from . import _data
from ._base import ArmType, Environment, NoiseModel

__all__ = ["CrowdData", "CrowdQuiz", "load_crowd_quiz", "CROWD_DATASETS", "CROWD_FOLDER"]

#: Folder of the quiz data sets inside the data root.
CROWD_FOLDER = "crowd-li2017-quiz"
#: The six domains (folder names), in the order of the paper's Table 1.
CROWD_DATASETS = ("ITMANAGE", "MEDICINE", "CHINESE", "POKEMON", "ENGLISH", "SCIENCE")
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
        Column names of ``answer.csv`` (``"worker1"``...), local to the data set.
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

    @property
    def n_questions(self) -> int:
        return int(self.correct.shape[0])


def _canonical_name(dataset: Any) -> str:
    if isinstance(dataset, str):
        key = dataset.strip().upper()
        key = _ALIASES.get(key, key)
        if key in CROWD_DATASETS:
            return key
    raise param_error(
        "dataset",
        "CrowdQuiz",
        f"one of {list(CROWD_DATASETS)!r} (case-insensitive; alias 'IT' for 'ITMANAGE')",
        dataset,
    )


def _malformed(path: Path, why: str) -> CombexError:
    return CombexError(f"The crowd data file {path} is malformed: {why}.")


def _read_rows(path: Path) -> list[list[str]]:
    if not path.is_file():
        raise DataNotFoundError(
            f"The crowd data file {path} was not found. Set the {_data.ENV_VAR} environment "
            f"variable (or pass data_dir=...) to the folder holding the combex data sets."
        )
    with open(path, newline="", encoding="utf-8-sig") as fh:
        return [row for row in csv.reader(fh) if row and any(cell.strip() for cell in row)]


def load_crowd_quiz(dataset: str, data_dir: Any = None) -> CrowdData:
    """Load one quiz domain of Li, Baba & Kashima (2017) as a correctness table.

    ``answer.csv`` (one row per question, one column per worker, cell = chosen option)
    and ``truth.csv`` (gold option per question) are joined on ``question_id``.

    Parameters
    ----------
    dataset : str
        One of ``"ITMANAGE"``, ``"MEDICINE"``, ``"CHINESE"``, ``"POKEMON"``,
        ``"ENGLISH"``, ``"SCIENCE"`` (case-insensitive; ``"IT"`` means ``"ITMANAGE"``).
    data_dir : str or path-like, optional
        The data root (the folder holding ``crowd-li2017-quiz``); default as in
        :func:`combex.environments.data_dir`.

    Returns
    -------
    CrowdData

    Raises
    ------
    InvalidParameterError
        For an unknown data set name (the message lists the valid names).
    DataNotFoundError
        When the data are absent.
    CombexError
        When a file is malformed (ragged rows, a blank answer, a question without truth).

    Examples
    --------
    >>> data = load_crowd_quiz("IT")  # doctest: +SKIP
    >>> data.correct.shape, round(float(data.accuracies.max()), 2)  # doctest: +SKIP
    ((25, 36), 0.84)
    """
    name = _canonical_name(dataset)
    folder = _data.dataset_path(CROWD_FOLDER, data_dir) / name
    answer_path, truth_path = folder / "answer.csv", folder / "truth.csv"
    answers = _read_rows(answer_path)
    truths = _read_rows(truth_path)
    if len(answers) < 2 or len(answers[0]) < 2:
        raise _malformed(answer_path, "it needs a header and at least one question and one worker")
    header = [h.strip() for h in answers[0]]
    workers = tuple(header[1:])
    if len(truths) < 2 or [h.strip() for h in truths[0][:2]] != ["question_id", "truth"]:
        raise _malformed(truth_path, "the header must be 'question_id,truth'")
    truth: dict[str, str] = {}
    for row in truths[1:]:
        if len(row) < 2:
            raise _malformed(truth_path, f"row {row!r} has no truth")
        truth[row[0].strip()] = row[1].strip().upper()
    qids: list[str] = []
    rows: list[list[bool]] = []
    for i, row in enumerate(answers[1:], start=2):
        if len(row) != len(header):
            raise _malformed(answer_path, f"line {i} has {len(row)} cells, the header {len(header)}")
        qid = row[0].strip()
        if qid not in truth:
            raise _malformed(answer_path, f"question {qid!r} (line {i}) has no truth in {truth_path.name}")
        cells = [cell.strip().upper() for cell in row[1:]]
        if not all(cells):
            raise _malformed(answer_path, f"line {i} has a blank answer (the table must be dense)")
        rows.append([cell == truth[qid] for cell in cells])
        qids.append(qid)
    return CrowdData.from_correct(np.array(rows, dtype=bool), name=name, worker_ids=workers, question_ids=qids)


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
        The data root, as in :func:`combex.environments.data_dir`.
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
        from ..oracles import TopK  # lazy: oracles may import environments

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
        """A small synthetic quiz (NOT real data), for demos when the data are absent.

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
