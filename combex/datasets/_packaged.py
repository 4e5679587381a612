"""The real data sets shipped inside combex (no download, no data folder).

* the quiz domains of Li, Baba & Kashima (CIKM 2017), CC BY 4.0 -- team selection;
* the UCI wine-quality data of Cortez et al. (2009), CC BY 4.0 -- linear bandits;
* the diabetes data of Efron et al. (2004), as shipped by scikit-learn (BSD-3-Clause).

Each folder under ``combex/datasets/data/`` has a ``PROVENANCE.md`` (source, commit,
licence, citation); the files are copied byte for byte.
"""

from __future__ import annotations

import csv
import gzip
import io
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, param_error
from ..exceptions import CombexError, DataNotFoundError
from ._home import dataset_path

__all__ = [
    "QuizData",
    "TabularData",
    "load_quiz",
    "load_wine_quality",
    "load_diabetes",
    "QUIZ_DOMAINS",
    "provenance",
]

#: The six quiz domains, in the order of Table 1 of Kuroki et al. (and of Li et al.).
QUIZ_DOMAINS = ("ITMANAGE", "MEDICINE", "CHINESE", "POKEMON", "ENGLISH", "SCIENCE")
_QUIZ_ALIASES = {"IT": "ITMANAGE", "POKÉMON": "POKEMON"}
#: Folder of the quiz data in a ``COMBEX_DATA`` data root (the packaged copy is used otherwise).
QUIZ_FOLDER = "crowd-li2017-quiz"

_PACKAGED = {"quiz": "li2017_quiz", "wine": "wine_quality", "diabetes": "diabetes"}

QUIZ_CITATION = (
    "Jiyi Li, Yukino Baba, Hisashi Kashima. Hyper Questions: Unsupervised Targeting of a Few "
    "Experts in Crowdsourcing. CIKM 2017, pp. 1069-1078. doi:10.1145/3132847.3132971"
)
WINE_CITATION = (
    "P. Cortez, A. Cerdeira, F. Almeida, T. Matos, J. Reis. Modeling wine preferences by data "
    "mining from physicochemical properties. Decision Support Systems 47(4):547-553, 2009."
)
DIABETES_CITATION = (
    "B. Efron, T. Hastie, I. Johnstone, R. Tibshirani. Least Angle Regression. Annals of "
    "Statistics 32(2):407-499, 2004."
)


def _packaged(kind: str) -> Any:
    """The packaged folder of a data set (an importlib.resources Traversable)."""
    return resources.files("combex.datasets").joinpath("data", _PACKAGED[kind])


def provenance(name: str) -> str:
    """The ``PROVENANCE.md`` text of a packaged data set (source, licence, citation).

    Parameters
    ----------
    name : {"quiz", "wine", "diabetes"}

    Examples
    --------
    >>> "CC BY 4.0" in provenance("quiz")
    True
    """
    name = check_choice(name, "name", tuple(_PACKAGED), owner="provenance")
    return _packaged(name).joinpath("PROVENANCE.md").read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- quiz
@dataclass(frozen=True, eq=False)
class QuizData:
    """One quiz domain of Li, Baba & Kashima (2017): every worker answered every question.

    Attributes
    ----------
    domain : str
        ``"ITMANAGE"``, ``"MEDICINE"``, ``"CHINESE"``, ``"POKEMON"``, ``"ENGLISH"`` or
        ``"SCIENCE"``.
    answers : str array of shape (n_questions, n_workers)
        The option letter each worker chose (read-only).
    truth : str array of shape (n_questions,)
        The gold option of each question (read-only).
    worker_ids : tuple of str
        The data's own worker ids (``"worker1"``...), the column names of ``answer.csv``;
        local to the domain.
    question_ids : tuple of str
        The ``question_id`` of each row.
    questions : tuple of str
        The question texts (Japanese, English or Chinese), from ``quiz.csv``.
    options : tuple of tuple of str
        The texts of options A, B, ... of each question.
    citation : str
        The paper to cite.
    """

    domain: str
    answers: NDArray[np.str_]
    truth: NDArray[np.str_]
    worker_ids: tuple[str, ...]
    question_ids: tuple[str, ...]
    questions: tuple[str, ...] = ()
    options: tuple[tuple[str, ...], ...] = ()
    citation: str = QUIZ_CITATION
    licence: str = field(default="CC BY 4.0")

    @property
    def correct(self) -> NDArray[np.bool_]:
        """``correct[q, w]``: whether worker w answered question q correctly."""
        out = self.answers == self.truth[:, None]
        out.setflags(write=False)
        return out

    @property
    def n_workers(self) -> int:
        return int(self.answers.shape[1])

    @property
    def n_questions(self) -> int:
        return int(self.answers.shape[0])


def _quiz_domain(domain: Any) -> str:
    if isinstance(domain, str):
        key = domain.strip().upper()
        key = _QUIZ_ALIASES.get(key, key)
        if key in QUIZ_DOMAINS:
            return key
    raise param_error(
        "domain", "load_quiz", f"one of {list(QUIZ_DOMAINS)!r} (case-insensitive; alias 'IT' for 'ITMANAGE')", domain
    )


def _malformed(path: Any, why: str) -> CombexError:
    return CombexError(f"The data file {path} is malformed: {why}.")


def _read_csv(folder: Any, name: str) -> list[list[str]]:
    f = folder.joinpath(name)
    if not f.is_file():
        raise DataNotFoundError(f"The data file {f} was not found.")
    with f.open("r", encoding="utf-8-sig", newline="") as fh:
        return [row for row in csv.reader(fh) if row and any(cell.strip() for cell in row)]


def load_quiz(domain: str, *, data_home: Any = None) -> QuizData:
    """Load one quiz domain of Li, Baba & Kashima (CIKM 2017), shipped with combex.

    ``answer.csv`` (one row per question, one column per worker, cell = chosen option)
    and ``truth.csv`` (gold option per question) are joined on ``question_id``; the
    question texts of ``quiz.csv`` are joined by row position (its ids are not contiguous
    in ENGLISH). Licence CC BY 4.0: cite ``QuizData.citation``.

    Parameters
    ----------
    domain : str
        One of ``"ITMANAGE"``, ``"MEDICINE"``, ``"CHINESE"``, ``"POKEMON"``,
        ``"ENGLISH"``, ``"SCIENCE"`` (case-insensitive; ``"IT"`` means ``"ITMANAGE"``).
    data_home : str or path-like, optional
        Read ``<data_home>/crowd-li2017-quiz/<DOMAIN>/`` instead of the packaged copy.

    Returns
    -------
    QuizData

    Raises
    ------
    InvalidParameterError
        For an unknown domain (the message lists the valid names).
    DataNotFoundError
        When ``data_home`` is given and lacks the files.
    CombexError
        When a file is malformed (ragged rows, a blank answer, a question without truth).

    Examples
    --------
    >>> quiz = load_quiz("ITMANAGE")
    >>> quiz.answers.shape, quiz.worker_ids[:2], str(quiz.truth[0])
    ((25, 36), ('worker1', 'worker2'), 'C')
    >>> round(float(quiz.correct.mean(axis=0).max()), 2)   # the best worker's accuracy
    0.84
    """
    name = _quiz_domain(domain)
    if data_home is None:
        folder: Any = _packaged("quiz").joinpath(name)
    else:
        folder = dataset_path(QUIZ_FOLDER, data_home) / name
    answers = _read_csv(folder, "answer.csv")
    truths = _read_csv(folder, "truth.csv")
    apath, tpath = folder.joinpath("answer.csv"), folder.joinpath("truth.csv")
    if len(answers) < 2 or len(answers[0]) < 2:
        raise _malformed(apath, "it needs a header and at least one question and one worker")
    header = [h.strip() for h in answers[0]]
    if len(truths) < 2 or [h.strip() for h in truths[0][:2]] != ["question_id", "truth"]:
        raise _malformed(tpath, "the header must be 'question_id,truth'")
    truth: dict[str, str] = {}
    for row in truths[1:]:
        if len(row) < 2:
            raise _malformed(tpath, f"row {row!r} has no truth")
        truth[row[0].strip()] = row[1].strip().upper()
    qids: list[str] = []
    cells: list[list[str]] = []
    for i, row in enumerate(answers[1:], start=2):
        if len(row) != len(header):
            raise _malformed(apath, f"line {i} has {len(row)} cells, the header {len(header)}")
        qid = row[0].strip()
        if qid not in truth:
            raise _malformed(apath, f"question {qid!r} (line {i}) has no truth in truth.csv")
        line = [cell.strip().upper() for cell in row[1:]]
        if not all(line):
            raise _malformed(apath, f"line {i} has a blank answer (the table must be dense)")
        cells.append(line)
        qids.append(qid)
    questions: tuple[str, ...] = ()
    options: tuple[tuple[str, ...], ...] = ()
    if folder.joinpath("quiz.csv").is_file():
        quiz = _read_csv(folder, "quiz.csv")
        if len(quiz) - 1 == len(qids):  # joined by row position (see PROVENANCE.md)
            questions = tuple(r[1] for r in quiz[1:])
            options = tuple(tuple(c for c in r[2:-1]) for r in quiz[1:])
    ans = np.array(cells, dtype=np.str_)
    tru = np.array([truth[q] for q in qids], dtype=np.str_)
    ans.setflags(write=False)
    tru.setflags(write=False)
    return QuizData(
        domain=name, answers=ans, truth=tru, worker_ids=tuple(header[1:]), question_ids=tuple(qids),
        questions=questions, options=options,
    )


# ----------------------------------------------------------------------------- tables
@dataclass(frozen=True, eq=False)
class TabularData:
    """A feature table with a target (like scikit-learn's ``Bunch``, typed).

    Attributes
    ----------
    name : str
    data : float array of shape (n_samples, n_features)
        Raw (unscaled) features, read-only.
    target : float array of shape (n_samples,)
        Read-only.
    feature_names : tuple of str
    target_name : str
    citation : str
    licence : str
    """

    name: str
    data: NDArray[np.float64]
    target: NDArray[np.float64]
    feature_names: tuple[str, ...]
    target_name: str
    citation: str
    licence: str


def _frozen(a: NDArray[np.float64]) -> NDArray[np.float64]:
    a = np.ascontiguousarray(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def _wine_file(folder: Any, color: str) -> tuple[list[str], NDArray[np.float64]]:
    f = folder.joinpath(f"winequality-{color}.csv")
    if not f.is_file():
        raise DataNotFoundError(f"The data file {f} was not found.")
    text = f.read_text(encoding="utf-8")
    names = [h.strip().strip('"') for h in text.splitlines()[0].split(";")]
    return names, np.loadtxt(io.StringIO(text), delimiter=";", skiprows=1, ndmin=2)


def load_wine_quality(color: str = "red", *, data_home: Any = None) -> TabularData:
    """The UCI wine-quality data (red or white Vinho Verde), shipped with combex.

    1,599 red or 4,898 white wines: 11 physicochemical measurements and the quality, the
    median of at least three expert grades (0-10). Licence CC BY 4.0: cite
    ``TabularData.citation`` (Cortez et al. 2009).

    Parameters
    ----------
    color : {"red", "white", "both"}, default "red"
        ``"both"`` stacks the red wines then the white ones.
    data_home : str or path-like, optional
        Read ``<data_home>/linbandit-wine-quality/`` instead of the packaged copy.

    Returns
    -------
    TabularData

    Examples
    --------
    >>> wine = load_wine_quality("white")
    >>> wine.data.shape, wine.feature_names[-1], wine.target_name, int(wine.target.max())
    ((4898, 11), 'alcohol', 'quality', 9)
    """
    color = check_choice(color, "color", ("red", "white", "both"), owner="load_wine_quality")
    folder: Any = _packaged("wine") if data_home is None else dataset_path("linbandit-wine-quality", data_home)
    parts = [_wine_file(folder, c) for c in (("red", "white") if color == "both" else (color,))]
    names = parts[0][0]
    table = np.vstack([p[1] for p in parts])
    return TabularData(
        name=f"wine_quality[{color}]", data=_frozen(table[:, :-1]), target=_frozen(table[:, -1]),
        feature_names=tuple(names[:-1]), target_name=names[-1], citation=WINE_CITATION, licence="CC BY 4.0",
    )


DIABETES_FEATURES = ("age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6")


def load_diabetes(*, data_home: Any = None) -> TabularData:
    """The diabetes data of Efron et al. (2004), shipped with combex (from scikit-learn).

    442 patients, 10 raw (unscaled) baseline features (age, sex, bmi, bp, six serum
    measurements s1-s6) and the disease progression one year after baseline (25-346).
    The same numbers as ``sklearn.datasets.load_diabetes(scaled=False)``.

    Parameters
    ----------
    data_home : str or path-like, optional
        Read ``<data_home>/linbandit-diabetes-sklearn/`` instead of the packaged copy.

    Returns
    -------
    TabularData

    Examples
    --------
    >>> diabetes = load_diabetes()
    >>> diabetes.data.shape, diabetes.feature_names[:3], float(diabetes.target.min())
    ((442, 10), ('age', 'sex', 'bmi'), 25.0)
    """
    folder: Any = _packaged("diabetes") if data_home is None else dataset_path("linbandit-diabetes-sklearn", data_home)
    arrays = []
    for name in ("diabetes_data_raw.csv.gz", "diabetes_target.csv.gz"):
        f = folder.joinpath(name)
        if not f.is_file():
            raise DataNotFoundError(f"The data file {f} was not found.")
        with f.open("rb") as raw, gzip.open(raw, "rt") as fh:
            arrays.append(np.loadtxt(fh, ndmin=1))
    x, t = arrays
    if x.ndim != 2 or x.shape != (len(t), len(DIABETES_FEATURES)):
        raise _malformed(Path(str(folder)), f"expected {len(t)} rows of {len(DIABETES_FEATURES)} features, got {x.shape}")
    return TabularData(
        name="diabetes", data=_frozen(x), target=_frozen(t), feature_names=DIABETES_FEATURES,
        target_name="disease progression", citation=DIABETES_CITATION, licence="BSD-3-Clause (scikit-learn)",
    )
