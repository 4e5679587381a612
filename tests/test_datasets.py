"""combex.datasets: the packaged data sets, and the crowd sets read from COMBEX_DATA or
downloaded (from a server on the loopback interface: the tests need no network)."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import os
import threading
from pathlib import Path

import numpy as np
import pytest

import combex.datasets as ds
from combex.datasets import (
    CROWD_LABEL_SETS,
    CrowdLabels,
    CrowdLabelSet,
    QUIZ_DOMAINS,
    load_crowd_labels,
    load_diabetes,
    load_quiz,
    load_wine_quality,
    provenance,
)
from combex.exceptions import CombexError, DataNotFoundError, InvalidParameterError

PACKAGED = Path(ds.__file__).parent / "data"
SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"

# sizes of Table 1 of Li et al. (2017) / PROVENANCE.md
QUIZ_SIZES = {"ITMANAGE": (25, 36), "MEDICINE": (36, 45), "CHINESE": (24, 50), "POKEMON": (20, 55),
              "ENGLISH": (30, 63), "SCIENCE": (20, 111)}


@pytest.mark.parametrize("domain", QUIZ_DOMAINS)
def test_every_quiz_domain_loads_with_its_published_size(domain):
    q = load_quiz(domain.lower())
    assert q.answers.shape == QUIZ_SIZES[domain]
    header = (PACKAGED / "li2017_quiz" / domain / "answer.csv").read_text(encoding="utf-8-sig").splitlines()[0]
    assert q.worker_ids == tuple(header.split(",")[1:])  # the data's own ids
    assert len(q.questions) == q.n_questions and all(q.questions)
    assert set(np.unique(q.answers)) <= set("ABCDEF")
    assert q.correct.dtype == bool and not q.correct.flags.writeable
    # the truth column of quiz.csv agrees with truth.csv row by row (PROVENANCE.md)
    rows = (PACKAGED / "li2017_quiz" / domain / "quiz.csv").read_text(encoding="utf-8-sig").splitlines()
    assert "CC BY 4.0" in q.licence and "Li" in q.citation
    assert len(rows) >= q.n_questions + 1


def test_quiz_correctness_is_recomputed_independently():
    q = load_quiz("SCIENCE")
    ans = (PACKAGED / "li2017_quiz" / "SCIENCE" / "answer.csv").read_text().splitlines()
    tru = dict(line.split(",")[:2] for line in (PACKAGED / "li2017_quiz" / "SCIENCE" / "truth.csv").read_text().splitlines()[1:])
    first = ans[1].split(",")
    assert q.correct[0].tolist() == [c.strip() == tru[first[0]] for c in first[1:]]


def test_quiz_bad_domain_lists_the_valid_ones():
    with pytest.raises(InvalidParameterError, match="'domain' parameter of load_quiz.*ITMANAGE.*Got 'MATH'"):
        load_quiz("MATH")


def test_wine_and_diabetes_match_their_published_shapes():
    red, white, both = (load_wine_quality(c) for c in ("red", "white", "both"))
    assert red.data.shape == (1599, 11) and white.data.shape == (4898, 11) and both.data.shape == (6497, 11)
    assert red.feature_names[0] == "fixed acidity" and red.target_name == "quality"
    assert set(np.unique(red.target)) == {3, 4, 5, 6, 7, 8}
    np.testing.assert_array_equal(both.data[:1599], red.data)
    d = load_diabetes()
    assert d.data.shape == (442, 10) and d.target.shape == (442,)
    assert (d.target.min(), d.target.max()) == (25.0, 346.0)
    assert set(np.unique(d.data[:, 1])) == {1.0, 2.0}  # sex, unscaled
    with gzip.open(PACKAGED / "diabetes" / "diabetes_target.csv.gz", "rt") as fh:
        assert float(fh.readline().split()[0]) == d.target[0]
    with pytest.raises(InvalidParameterError, match="'color' parameter of load_wine_quality"):
        load_wine_quality("rose")


def test_packaged_data_are_the_published_bytes_with_provenance():
    for name, folder in (("quiz", "li2017_quiz"), ("wine", "wine_quality"), ("diabetes", "diabetes")):
        text = provenance(name)
        assert "Cite" in text and "License" in text
        assert (PACKAGED / folder / "PROVENANCE.md").read_text(encoding="utf-8") == text
    # byte sizes stated in the wine PROVENANCE.md (the UCI release)
    assert (PACKAGED / "wine_quality" / "winequality-red.csv").stat().st_size == 84199
    assert (PACKAGED / "wine_quality" / "winequality-white.csv").stat().st_size == 264426


def test_a_data_root_of_ones_own_is_read(tmp_path):
    folder = tmp_path / "linbandit-wine-quality"
    folder.mkdir()
    (folder / "winequality-red.csv").write_text('"a";"b";"quality"\n1;2;5\n3;4;7\n')
    w = load_wine_quality(data_home=tmp_path)
    np.testing.assert_array_equal(w.data, [[1, 2], [3, 4]])
    assert w.feature_names == ("a", "b")
    with pytest.raises(DataNotFoundError, match="winequality-white.csv"):
        load_wine_quality("white", data_home=tmp_path)
    with pytest.raises(DataNotFoundError, match="linbandit-diabetes-sklearn"):
        load_diabetes(data_home=tmp_path)


# --------------------------------------------------------------------------- crowd label sets
def test_registry_covers_every_shared_data_set_with_licence_and_citation():
    folders = {s.folder.split("/")[0] for s in CROWD_LABEL_SETS.values()}
    assert folders == {"crowd-snow2008", "crowd-zheng2017-truthinfer", "crowd-zhang2014-spectral",
                       "crowd-ipeirotis-adultcontent2"}
    for spec in CROWD_LABEL_SETS.values():
        assert spec.citation and spec.licence and spec.source
        for sha, url in spec.files.values():
            assert len(sha) == 64 and url.startswith("https://")
        # only a licence that allows redistribution lets combex download for you
        assert spec.fetchable == (spec.licence == "Apache-2.0")


def _write_set(root: Path, spec: CrowdLabelSet, contents: dict[str, str]) -> CrowdLabelSet:
    folder = root / spec.folder
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for fname, (_, url) in spec.files.items():
        data = contents[fname].encode()
        (folder / fname).write_bytes(data)
        files[fname] = (hashlib.sha256(data).hexdigest(), url)
    return CrowdLabelSet(**{**spec.__dict__, "files": files})


FORMATS = {
    "zheng2017-face": {"answer.csv": "question,worker,answer\r\n7,AMT9,0\r\n7,AMT2,1\r\n8,AMT9,1\r\n",
                       "truth.csv": "question,truth\r\n7,0\r\n8,1\r\n"},
    "snow2008-rte": {"rte.standardized.tsv": "!amt_annotation_ids\t!amt_worker_ids\torig_id\tresponse\tgold\n"
                                             "x1\tAMT9\t7\t0\t0\nx2\tAMT2\t7\t1\t0\nx3\tAMT9\t8\t1\t1\n"},
    "zhang2014-web": {"web_crowd.txt": "7\t9\t0\r\n7\t2\t1\r\n8\t9\t1\r\n", "web_truth.txt": "7\t0\r\n8\t1\r\n"},
    "ipeirotis-adultcontent": {"labels.txt": "AMT9\t7\t0\nAMT2\t7\t1\nAMT9\t8\t1\n", "gold.txt": "7\t0\n8\t1\n"},
}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_file_format_keeps_the_datas_own_ids(name, tmp_path, monkeypatch):
    spec = _write_set(tmp_path, CROWD_LABEL_SETS[name], FORMATS[name])
    monkeypatch.setitem(CROWD_LABEL_SETS, name, spec)
    monkeypatch.setenv("COMBEX_DATA", str(tmp_path))
    labels = load_crowd_labels(name)
    w9 = "9" if name.startswith("zhang") else "AMT9"
    assert labels.workers[0] == w9 and labels.items == ("7", "8")
    assert [labels.workers[w] for w in labels.worker] == [w9, labels.workers[1], w9]
    acc, n = labels.worker_accuracy()
    np.testing.assert_array_equal(acc, [1.0, 0.0])
    np.testing.assert_array_equal(n, [2, 1])
    assert labels.gold == {"7": "0", "8": "1"}


def test_a_modified_file_is_refused_unless_verify_is_off(tmp_path, monkeypatch):
    name = "zheng2017-face"
    spec = _write_set(tmp_path, CROWD_LABEL_SETS[name], FORMATS[name])
    monkeypatch.setitem(CROWD_LABEL_SETS, name, spec)
    with open(tmp_path / spec.folder / "truth.csv", "a") as fh:
        fh.write("9,1\r\n")
    with pytest.raises(CombexError, match="SHA-256.*verify=False"):
        load_crowd_labels(name, data_home=tmp_path)
    assert load_crowd_labels(name, data_home=tmp_path, verify=False).gold["9"] == "1"


def test_absent_sets_say_where_they_come_from(tmp_path, monkeypatch):
    monkeypatch.delenv("COMBEX_DATA", raising=False)
    with pytest.raises(DataNotFoundError, match="COMBEX_DATA.*licence is 'none stated'.*raw.githubusercontent.com/zhydhkcws"):
        load_crowd_labels("zheng2017-dog")
    with pytest.raises(DataNotFoundError, match="ai.stanford.edu"):
        load_crowd_labels("snow2008-wsd", data_home=tmp_path)
    with pytest.raises(InvalidParameterError, match="'name' parameter of load_crowd_labels.*snow2008-rte"):
        load_crowd_labels("snow2009")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # pragma: no cover - silence
        pass


def test_download_from_a_loopback_server_with_checksums(tmp_path, monkeypatch):
    pytest.importorskip("pooch")
    served = tmp_path / "served"
    name = "ipeirotis-adultcontent"
    local = _write_set(served, CROWD_LABEL_SETS[name], FORMATS[name])
    handler = lambda *a, **k: _Quiet(*a, directory=str(served / local.folder), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        files = {f: (sha, f"{base}/{f}") for f, (sha, _) in local.files.items()}
        monkeypatch.setitem(CROWD_LABEL_SETS, name, CrowdLabelSet(**{**local.__dict__, "files": files}))
        cache = tmp_path / "cache"
        monkeypatch.setattr("combex.datasets._crowd_labels._cache_dir", lambda: cache)
        monkeypatch.delenv("COMBEX_DATA", raising=False)
        with pytest.raises(DataNotFoundError, match="download=True"):
            load_crowd_labels(name)  # never downloads unasked
        labels = load_crowd_labels(name, download=True)
        assert labels.workers == ("AMT9", "AMT2")
        assert (cache / local.folder / "labels.txt").is_file()
        assert load_crowd_labels(name).n_answers == 3  # from the cache now
        # a corrupted download is refused by its checksum
        bad = {f: ("0" * 64, u) for f, (_, u) in files.items()}
        monkeypatch.setitem(CROWD_LABEL_SETS, name, CrowdLabelSet(**{**local.__dict__, "files": bad}))
        with pytest.raises(Exception, match="(?i)hash"):
            load_crowd_labels(name, download=True, data_home=tmp_path / "empty")
    finally:
        server.shutdown()


def _shared_root():
    env = os.environ.get("COMBEX_DATA")
    for root in ([Path(env)] if env else []) + [SHARED]:
        if (root / "crowd-snow2008").is_dir():
            return root
    return None


@pytest.mark.skipif(_shared_root() is None, reason="no data folder with the crowd sets (COMBEX_DATA or ../shared/data)")
def test_the_real_sets_match_their_checksums_and_published_sizes():
    root = _shared_root()
    sizes = {"zheng2017-duck": (4212, 39, 108), "zheng2017-dog": (8070, 109, 807), "snow2008-rte": (8000, 164, 800),
             "zhang2014-trec": (88385, 762, 19033), "ipeirotis-adultcontent": (92721, 825, 11040)}
    for name, (n_ans, n_w, n_items) in sizes.items():
        labels = load_crowd_labels(name, data_home=root)
        assert (labels.n_answers, len(labels.workers), len(labels.items)) == (n_ans, n_w, n_items), name
    assert len(load_crowd_labels("ipeirotis-adultcontent", data_home=root).gold) == 1517


def test_from_answers_validates():
    with pytest.raises(InvalidParameterError, match="triples"):
        CrowdLabels.from_answers([("w", "q")])
