"""Larger crowd-labelling data sets: read from ``COMBEX_DATA``, or fetched on demand.

These are not shipped in the package. Each is read from ``<data root>/<folder>/`` (the
data root is ``data_home`` or the environment variable ``COMBEX_DATA``), every file
checked against its SHA-256. A set whose licence allows it (``CrowdLabelSet.fetchable``)
can also be downloaded once from its original public location into the cache of
:mod:`pooch` (``load_crowd_labels(name, download=True)``; needs ``pip install
combex[data]``); the others state no licence, so combex only tells where their authors
publish them.

Answers keep the data's own ids: :attr:`CrowdLabels.workers` and :attr:`CrowdLabels.items`
are the strings of the files (AMT worker ids, urls, question numbers), and the answer
arrays index into them.
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_bool, param_error
from ..exceptions import CombexError, DataNotFoundError
from ._home import ENV_VAR, _resolve_root

__all__ = ["CrowdLabels", "CrowdLabelSet", "CROWD_LABEL_SETS", "load_crowd_labels"]


@dataclass(frozen=True)
class CrowdLabelSet:
    """Where a crowd-labelling data set comes from (one entry of :data:`CROWD_LABEL_SETS`).

    Attributes
    ----------
    name : str
        combex's name (``"zheng2017-duck"``).
    folder : str
        Folder inside the data root (``"crowd-zheng2017-truthinfer/duck"``).
    files : dict
        ``{file name: (sha256, original URL)}``: the answers file first, then the gold file
        (the same file for the Snow et al. sets).
    fmt : str
        Parser: ``"zheng"`` (csv ``question,worker,answer`` / ``question,truth``), ``"snow"``
        (tsv with a gold column), ``"zhang"`` (``item worker label`` / ``item label``),
        ``"ipeirotis"`` (tsv ``worker url label`` / ``url label``).
    licence : str
        As stated by the source.
    fetchable : bool
        Whether the licence allows combex to download it for you.
    source : str
        Human-readable origin (repository and commit, or web page).
    citation : str
    """

    name: str
    folder: str
    files: dict[str, tuple[str, str]]
    fmt: str
    licence: str
    fetchable: bool
    source: str
    citation: str


_GH = "https://raw.githubusercontent.com"
_ZHENG_COMMIT = "8d216471071f09b9e474ee19f8d692447f982f88"
_ZHENG_CITE = (
    "Yudian Zheng, Guoliang Li, Yuanbing Li, Caihua Shan, Reynold Cheng. Truth Inference in "
    "Crowdsourcing: Is the Problem Solved? PVLDB 10(5):541-552, 2017."
)
_ZHENG = {  # name: (source folder, answer sha256, truth sha256, original data set)
    "duck": ("d_Duck%20Identification", "0d5e423652c079361a4cbc0adbee0945d40f02a9dedcfb6b068e8f2af63b24f0",
             "04c6d8b6cdc298b63c05dc87d28ceebd018d4207e0ced7c1229ca3593a74983a",
             "Welinder et al., The Multidimensional Wisdom of Crowds, NIPS 2010"),
    "dog": ("s4_Dog%20data", "db11159198f59fa2af87450b008f860ca2e9e04e3f15c697ef254af40fb6763a",
            "2a641fa31e80526164d956da4228f80d31b303c2691ab1855c76fef72d04b746",
            "Zhou et al., Learning from the Wisdom of Crowds by Minimax Entropy, NIPS 2012"),
    "face": ("s4_Face%20Sentiment%20Identification", "9e98c7c56ea1967ca9d3e2396b9abd469e96ee47a52a0103c917397adbb98f9b",
             "c324c79fd7196d16cb638d956ec90209e405b0010741ffb5ecb1b6316f48cc4c",
             "Mozafari et al., Scaling Up Crowd-Sourcing to Very Large Datasets, PVLDB 2014"),
    "product": ("d_jn-product", "ca69e3f2cba3d6f9c3b3ecc2f8d2a81afcd747d0b91aa5ab18608a5715e26adc",
                "9a5757c726ef1a32b05f6a675924c483b24d602c61b1a2d087ab3d84f90b3766",
                "Wang et al., CrowdER: Crowdsourcing Entity Resolution, PVLDB 2012"),
    "emotion": ("f201_Emotion_FULL", "8a33684760a7fc51980ddc2d19d157f9d0197bcc3611cc4a2c8cdb65fdaf1d1b",
                "0fdfa983818a3524ba572c7eb7a3fd6b314844105ae9449b630425faa3176be4",
                "Snow et al., Cheap and Fast - But is it Good?, EMNLP 2008 (affective text)"),
}
_SNOW_CITE = (
    "Rion Snow, Brendan O'Connor, Daniel Jurafsky, Andrew Y. Ng. Cheap and Fast - But is it Good? "
    "Evaluating Non-Expert Annotations for Natural Language Tasks. EMNLP 2008, pp. 254-263."
)
_SNOW = {
    "rte": "3187c5de59b9b9c596d490d25b5f5f108090a35cbdd10e81f21e6d1939d6ba79",
    "temp": "7f74de9f36a0d3dfdc1f51e6433526abfc788c616d0c2d04a96206780ac74860",
    "wsd": "77b77c0f63803bcb62d3a15c199e301bacbd4dbe012278600bd34f1e5f8a8ed9",
}
_SNOW_PAGE = "https://ai.stanford.edu/~rion/annotations/"
_ZHANG_COMMIT = "6204f5fcab1766cb1b2c40fc1bff53b1613ddc6c"
_ZHANG_CITE = (
    "Yuchen Zhang, Xi Chen, Dengyong Zhou, Michael I. Jordan. Spectral Methods meet EM: A Provably "
    "Optimal Algorithm for Crowdsourcing. JMLR 17(102):1-44, 2016."
)
_ZHANG = {
    "web": ("5b1ad44cebdcf59d42c83393a7dc3f4aa46746f5428c4caac275350247da6d6f",
            "7ff13173d6ad447e6959fa5226bcbef756ebe34d712eae908de30036824fc94f"),
    "trec": ("821141b1e95b1ff516ebccf6869f2ac88ca93035d6991b8039d76275866de402",
             "405b4ff78e79b912252f19ff68116e71abe3a21c2051c7c701e7a16acbeae3e4"),
}
_IPEIROTIS_COMMIT = "9fe6c56a7a157dba1a12018f696bad56806125b7"


def _registry() -> dict[str, CrowdLabelSet]:
    sets: list[CrowdLabelSet] = []
    for key, (src, sa, st, orig) in _ZHENG.items():
        base = f"{_GH}/zhydhkcws/crowd_truth_infer/{_ZHENG_COMMIT}/datasets/{src}"
        sets.append(CrowdLabelSet(
            name=f"zheng2017-{key}", folder=f"crowd-zheng2017-truthinfer/{key}",
            files={"answer.csv": (sa, f"{base}/answer.csv"), "truth.csv": (st, f"{base}/truth.csv")},
            fmt="zheng", licence="none stated", fetchable=False,
            source=f"GitHub zhydhkcws/crowd_truth_infer @ {_ZHENG_COMMIT[:12]}, datasets/{src.replace('%20', ' ')}",
            citation=f"{_ZHENG_CITE} Original data: {orig}.",
        ))
    for key, sha in _SNOW.items():
        sets.append(CrowdLabelSet(
            name=f"snow2008-{key}", folder="crowd-snow2008",
            files={f"{key}.standardized.tsv": (sha, _SNOW_PAGE)},
            fmt="snow", licence="none stated", fetchable=False,
            source=f"{_SNOW_PAGE} (all_collected_data.tgz, file {key}.standardized.tsv)",
            citation=_SNOW_CITE,
        ))
    for key, (sc, st) in _ZHANG.items():
        base = f"{_GH}/zhangyuc/SpectralMethodsMeetEM/{_ZHANG_COMMIT}/src"
        sets.append(CrowdLabelSet(
            name=f"zhang2014-{key}", folder="crowd-zhang2014-spectral",
            files={f"{key}_crowd.txt": (sc, f"{base}/{key}_crowd.txt"), f"{key}_truth.txt": (st, f"{base}/{key}_truth.txt")},
            fmt="zhang", licence="none stated", fetchable=False,
            source=f"GitHub zhangyuc/SpectralMethodsMeetEM @ {_ZHANG_COMMIT[:12]}, src/",
            citation=_ZHANG_CITE,
        ))
    base = f"{_GH}/ipeirotis/Get-Another-Label/{_IPEIROTIS_COMMIT}/data/AdultContent2"
    sets.append(CrowdLabelSet(
        name="ipeirotis-adultcontent", folder="crowd-ipeirotis-adultcontent2",
        files={"labels.txt": ("9584f9d0eda4ede1bce503539c751179a32362240b92e55400f0e2ded8f7468c", f"{base}/labels.txt"),
               "gold.txt": ("7b2417f4f8568426767139400d827e0be303c7f6f82126bf58a8febeb33f3949", f"{base}/gold.txt")},
        fmt="ipeirotis", licence="Apache-2.0", fetchable=True,
        source=f"GitHub ipeirotis/Get-Another-Label @ {_IPEIROTIS_COMMIT[:12]}, data/AdultContent2/",
        citation="Panagiotis G. Ipeirotis, Foster Provost, Jing Wang. Quality Management on Amazon "
                 "Mechanical Turk. HCOMP 2010.",
    ))
    return {s.name: s for s in sets}


#: The crowd-labelling sets :func:`load_crowd_labels` knows, by name.
CROWD_LABEL_SETS: dict[str, CrowdLabelSet] = _registry()


@dataclass(frozen=True, eq=False)
class CrowdLabels:
    """Answers of crowd workers to items, with the gold labels where known (long format).

    Attributes
    ----------
    name : str
    workers : tuple of str
        The data's own worker ids (AMT ids, or the integers of the file as strings).
    items : tuple of str
        The data's own item ids.
    worker : int array of shape (n_answers,)
        ``workers[worker[a]]`` gave answer ``a``.
    item : int array of shape (n_answers,)
        ``items[item[a]]`` is the item of answer ``a``.
    label : str array of shape (n_answers,)
        The label given, as written in the file.
    gold : dict
        ``{item id: gold label}`` for the items that have one.
    citation, licence : str
    """

    name: str
    workers: tuple[str, ...]
    items: tuple[str, ...]
    worker: NDArray[np.intp]
    item: NDArray[np.intp]
    label: NDArray[np.str_]
    gold: dict[str, str]
    citation: str
    licence: str

    @property
    def n_answers(self) -> int:
        return int(self.label.shape[0])

    def is_correct(self) -> NDArray[np.float64]:
        """Per answer: 1.0 when it equals the item's gold label, 0.0 when not, NaN when the
        item has no gold."""
        g = np.array([self.gold.get(it, "") for it in self.items], dtype=np.str_)
        has = np.array([it in self.gold for it in self.items])
        out = (self.label == g[self.item]).astype(np.float64)
        out[~has[self.item]] = np.nan
        return out

    def worker_accuracy(self) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        """Per worker (in the order of :attr:`workers`): the fraction of its answers on gold
        items that are correct (NaN for a worker with none), and how many there were.

        Examples
        --------
        >>> labels = CrowdLabels.from_answers([("w9", "q1", "a"), ("w9", "q2", "b"), ("w2", "q1", "b")],
        ...                                   gold={"q1": "a", "q2": "b"}, name="toy")
        >>> labels.workers, labels.worker_accuracy()
        (('w9', 'w2'), (array([1., 0.]), array([2, 1])))
        """
        c = self.is_correct()
        ok = ~np.isnan(c)
        n = np.bincount(self.worker[ok], minlength=len(self.workers)).astype(np.int64)
        s = np.bincount(self.worker[ok], weights=c[ok], minlength=len(self.workers))
        with np.errstate(invalid="ignore", divide="ignore"):
            acc = np.where(n > 0, s / np.maximum(n, 1), np.nan)
        return acc, n

    @classmethod
    def from_answers(cls, answers: Any, *, gold: Any = None, name: str = "custom",
                     citation: str = "", licence: str = "") -> "CrowdLabels":
        """Build from ``(worker id, item id, label)`` triples (ids kept as given, in order of
        first appearance) and an optional ``{item id: gold label}`` mapping."""
        workers: dict[str, int] = {}
        items: dict[str, int] = {}
        w_idx, i_idx, labels = [], [], []
        for row in answers:
            if len(row) != 3:
                raise param_error("answers", "CrowdLabels.from_answers", "(worker, item, label) triples", row)
            w, it, lab = (str(x).strip() for x in row)
            w_idx.append(workers.setdefault(w, len(workers)))
            i_idx.append(items.setdefault(it, len(items)))
            labels.append(lab)
        g = {str(k).strip(): str(v).strip() for k, v in dict(gold or {}).items()}
        return cls(
            name=name, workers=tuple(workers), items=tuple(items),
            worker=np.asarray(w_idx, dtype=np.intp), item=np.asarray(i_idx, dtype=np.intp),
            label=np.asarray(labels, dtype=np.str_), gold=g, citation=citation, licence=licence,
        )


# ----------------------------------------------------------------------------- parsers
def _rows(text: str, delimiter: str | None) -> list[list[str]]:
    if delimiter is None:
        return [line.split() for line in text.splitlines() if line.strip()]
    return [r for r in csv.reader(io.StringIO(text), delimiter=delimiter) if r and any(c.strip() for c in r)]


def _parse(spec: CrowdLabelSet, texts: list[str]) -> tuple[list[tuple[str, str, str]], dict[str, str]]:
    """(worker, item, label) triples and the gold mapping, from the file texts."""
    if spec.fmt == "zheng":
        ans, tru = _rows(texts[0], ","), _rows(texts[1], ",")
        if [c.strip() for c in ans[0]] != ["question", "worker", "answer"]:
            raise CombexError(f"{spec.name}: answer.csv must start with 'question,worker,answer'.")
        return [(r[1], r[0], r[2]) for r in ans[1:]], {r[0].strip(): r[1].strip() for r in tru[1:]}
    if spec.fmt == "snow":
        rows = _rows(texts[0], "\t")
        head = [c.strip() for c in rows[0]]
        iw, ii, il, ig = (head.index(c) for c in ("!amt_worker_ids", "orig_id", "response", "gold"))
        return [(r[iw], r[ii], r[il]) for r in rows[1:]], {r[ii].strip(): r[ig].strip() for r in rows[1:]}
    if spec.fmt == "zhang":
        ans, tru = _rows(texts[0], None), _rows(texts[1], None)
        return [(r[1], r[0], r[2]) for r in ans], {r[0]: r[1] for r in tru}
    if spec.fmt == "ipeirotis":
        ans, tru = _rows(texts[0], "\t"), _rows(texts[1], "\t")
        return [(r[0], r[1], r[2]) for r in ans], {r[0].strip(): r[1].strip() for r in tru}
    raise CombexError(f"{spec.name}: unknown format {spec.fmt!r}")  # pragma: no cover


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _check_file(spec: CrowdLabelSet, path: Path, sha: str) -> None:
    got = _sha256(path)
    if got != sha:
        raise CombexError(
            f"The file {path} of the data set {spec.name!r} is not the published one: its SHA-256 is "
            f"{got}, expected {sha} (source: {spec.source}). Pass verify=False to read a modified copy."
        )


def _cache_dir() -> Path:
    pooch = _pooch()
    return Path(pooch.os_cache("combex"))


def _pooch() -> Any:
    try:
        import pooch  # pooch is optional (the data extra)
    except ImportError as exc:
        raise DataNotFoundError(
            "Downloading a combex data set needs pooch: pip install 'combex[data]'."
        ) from exc
    return pooch


def _fetch(spec: CrowdLabelSet, cache: Path) -> Path:
    """Download the files of ``spec`` into ``cache/<folder>`` (checked against SHA-256)."""
    pooch = _pooch()
    folder = cache / spec.folder
    for fname, (sha, url) in spec.files.items():
        pooch.retrieve(url, known_hash=f"sha256:{sha}", fname=fname, path=folder, progressbar=False)
    return folder


def load_crowd_labels(
    name: str, *, data_home: Any = None, download: bool = False, verify: bool = True
) -> CrowdLabels:
    """Load a crowd-labelling data set that is not shipped with combex.

    Looked for in ``<data root>/<folder>/`` (``data_home``, else ``COMBEX_DATA``), then,
    for a set whose licence allows it (``CROWD_LABEL_SETS[name].fetchable``), in the pooch
    cache, downloaded there from its original public location when ``download=True``.

    Parameters
    ----------
    name : str
        A key of :data:`CROWD_LABEL_SETS`: ``"zheng2017-duck"``, ``"zheng2017-dog"``,
        ``"zheng2017-face"``, ``"zheng2017-product"``, ``"zheng2017-emotion"``,
        ``"snow2008-rte"``, ``"snow2008-temp"``, ``"snow2008-wsd"``, ``"zhang2014-web"``,
        ``"zhang2014-trec"``, ``"ipeirotis-adultcontent"``.
    data_home : str or path-like, optional
        The data root (default: the environment variable ``COMBEX_DATA``).
    download : bool, default False
        Download a fetchable set that is neither in the data root nor in the cache.
    verify : bool, default True
        Check every file against the SHA-256 of the published file.

    Returns
    -------
    CrowdLabels

    Raises
    ------
    InvalidParameterError
        For an unknown name (the message lists the known ones).
    DataNotFoundError
        When the data are absent; the message says where the set comes from and
        whether combex may download it.
    CombexError
        When a file differs from the published one (``verify=True``).
    """
    if name not in CROWD_LABEL_SETS:
        raise param_error("name", "load_crowd_labels", f"one of {sorted(CROWD_LABEL_SETS)!r}", name)
    spec = CROWD_LABEL_SETS[name]
    download = check_bool(download, "download", owner="load_crowd_labels")
    verify = check_bool(verify, "verify", owner="load_crowd_labels")
    root, tried, how = _resolve_root(data_home)
    folder = None
    if root is not None and all((root / spec.folder / f).is_file() for f in spec.files):
        folder = root / spec.folder
    elif spec.fetchable:
        cache = _cache_dir()
        if all((cache / spec.folder / f).is_file() for f in spec.files) or download:
            folder = _fetch(spec, cache)
    if folder is None:
        where = ", ".join(str(p / spec.folder) for p in tried) or f"nowhere ({how})"
        urls = sorted({u for _, u in spec.files.values()})
        if spec.fetchable:
            hint = f"load_crowd_labels({name!r}, download=True) downloads it ({spec.licence})"
        else:
            hint = (f"its licence is {spec.licence!r}, so combex does not download it: get "
                    f"{', '.join(spec.files)} from {' / '.join(urls)} into $"
                    f"{ENV_VAR}/{spec.folder}/")
        raise DataNotFoundError(
            f"The crowd data set {name!r} was not found (looked in {where}). Set {ENV_VAR} (or "
            f"data_home=...) to a folder holding {spec.folder}/; {hint}. Source: {spec.source}."
        )
    texts = []
    for fname, (sha, _) in spec.files.items():
        path = folder / fname
        if verify:
            _check_file(spec, path, sha)
        texts.append(path.read_text(encoding="utf-8", errors="replace"))
    if len(texts) == 1:
        texts.append(texts[0])
    triples, gold = _parse(spec, texts)
    return CrowdLabels.from_answers(triples, gold=gold, name=name, citation=spec.citation, licence=spec.licence)

