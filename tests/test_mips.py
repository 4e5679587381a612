"""MIPS searchers: exact, BoundedME (mips_top_k / nn_top_k), HNSW, LSH, adaptive MIPS."""

from __future__ import annotations

import numpy as np
import pytest

from combex.environments import mips_gaussian, mips_uniform
from combex.exceptions import InvalidParameterError
from combex.mips import (
    AdaptiveMIPS,
    ExactIndex,
    SignLSHIndex,
    exact_nn_top_k,
    exact_top_k,
    lsh_top_k,
    mips_to_nns,
    mips_top_k,
    nn_top_k,
    nns_query,
)



def _brute_top(V, q, k):
    s = [float(np.dot(v, q)) for v in V]
    return sorted(range(len(V)), key=lambda i: -s[i])[:k]


# ---------------------------------------------------------------------- exact
@pytest.mark.parametrize("k", [1, 3, 10])
def test_exact_matches_brute_force(k):
    rng = np.random.default_rng(k)
    V = rng.standard_normal((40, 7))
    q = rng.standard_normal(7)
    res = exact_top_k(V, q, k)
    assert res.indices.tolist() == _brute_top(V, q, k)
    np.testing.assert_allclose(res.scores, V[res.indices] @ q)
    assert res.n_products == 40 * 7
    nn = exact_nn_top_k(V, q, k)
    d = ((V - q) ** 2).sum(axis=1)
    assert nn.indices.tolist() == np.argsort(d)[:k].tolist()


def test_exact_index_insert_delete():
    idx = ExactIndex(3, capacity=2)
    rng = np.random.default_rng(0)
    P = rng.standard_normal((100, 3))
    idx.add(P, np.arange(100) + 1000)
    q = rng.standard_normal(3)
    best = int(np.argmax(P @ q))
    assert idx.query(q, 1)[0].tolist() == [best + 1000]
    idx.remove([best + 1000])
    second = int(np.argsort(-(P @ q))[1])
    assert idx.query(q, 1)[0].tolist() == [second + 1000]
    idx.remove(np.arange(1000, 1100)[np.arange(100) % 2 == 1])  # triggers compaction
    live = [i for i in range(100) if i % 2 == 0 and i != best]
    assert len(idx) == len(live)
    assert idx.query(q, 1)[0][0] == 1000 + max(live, key=lambda i: P[i] @ q)
    with pytest.raises(InvalidParameterError, match="'ids'"):
        idx.add(P[:1], [1000 + live[0]])
    with pytest.raises(InvalidParameterError, match="'ids'"):
        idx.remove([5])


# ---------------------------------------------------------------------- BoundedME
def test_mips_top_k_finds_separated_top():
    rng = np.random.default_rng(0)
    V = rng.standard_normal((200, 2000)).astype(np.float32)
    q = rng.standard_normal(2000).astype(np.float32)
    top = np.argsort(-(V @ q))[:5]
    V[top] += 0.5 * np.sign(q)  # well separated
    res = mips_top_k(V, q, 5, epsilon=0.05, delta=0.05, rng=1)
    assert set(res.indices.tolist()) == set(top.tolist())
    assert res.n_products < V.size  # no more than exact
    assert res.info["t"][-1] <= 2000


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("block", [1, 16])
def test_mips_top_k_layouts_and_blocks_agree_at_full_read(order, block):
    # epsilon tiny -> t_l = N: every arm read entirely -> exact answer and exact scores
    data = mips_gaussian(60, 300, order=order, dtype=np.float64, rng=2)
    q = data.queries[0]
    res = mips_top_k(data.V, q, 3, epsilon=1e-6, delta=0.1, rng=0, block=block, v_max=data.v_max)
    ex = exact_top_k(data.V, q, 3)
    assert res.indices.tolist() == ex.indices.tolist()
    np.testing.assert_allclose(res.scores, ex.scores, rtol=1e-10)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("kind", ["ip", "nn"])
def test_reader_partial_sums_match_brute_force(order, kind):
    from combex.mips._bandit import _Reader, _runs

    rng = np.random.default_rng(7)
    V = np.asarray(rng.standard_normal((200, 9000)), order=order)
    q = rng.standard_normal(9000)
    blocks = np.sort(rng.choice(9000 // 100, size=40, replace=False))
    runs = _runs(blocks, 100, 9000)
    cols = np.concatenate([np.arange(a, b) for a, b in runs])
    # all rows (stream), most rows (stream, subset), few rows (32-row groups, several groups)
    for rows in [np.arange(200), np.sort(rng.choice(200, 150, replace=False)),
                 np.sort(rng.choice(200, 70, replace=False))]:
        reader = _Reader(V, q, kind)
        got = reader.runs(rows, runs)
        sub = V[np.ix_(rows, cols)]
        want = sub @ q[cols] if kind == "ip" else -((sub - q[cols]) ** 2).sum(axis=1)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-8)
        assert reader.products >= rows.size * cols.size


def test_bandit_pulls_never_exceed_N_and_products_bounded():
    data = mips_uniform(300, 500, dtype=np.float64, rng=3)
    for eps in [0.01, 0.1, 0.5]:
        res = mips_top_k(data.V, data.queries[0], 5, epsilon=eps, delta=0.1, rng=4, v_max=1.0)
        assert max(res.info["t"]) <= 500
        assert res.n_products <= data.V.size


def test_bandit_epsilon_guarantee_in_scaled_units():
    # (q^T v*_(k) - q^T v_hat_(k)) / (N * 2 v_max max|q|) < epsilon in >= 1 - delta of runs
    fails = 0
    eps, delta = 0.01, 0.1
    for seed in range(20):
        d = mips_gaussian(100, 400, dtype=np.float64, rng=seed)
        q = d.queries[0]
        res = mips_top_k(d.V, q, 2, epsilon=eps, delta=delta, rng=seed, v_max=d.v_max)
        s = d.V @ q
        width = 400 * 2 * d.v_max * np.abs(q).max()
        fails += (np.sort(s)[-2] - np.sort(s[res.indices])[0]) / width >= eps
    assert fails <= 2


def test_nn_variant():
    rng = np.random.default_rng(5)
    V = rng.standard_normal((80, 600))
    q = V[17] + 0.1 * rng.standard_normal(600)
    res = nn_top_k(V, q, 1, epsilon=0.05, rng=0)
    assert res.indices.tolist() == [17]
    full = nn_top_k(V, q, 3, epsilon=1e-7, rng=0)
    assert full.indices.tolist() == exact_nn_top_k(V, q, 3).indices.tolist()
    VF = np.asfortranarray(V)
    assert nn_top_k(VF, q, 1, epsilon=0.05, rng=0).indices.tolist() == [17]


@pytest.mark.parametrize("fn", [mips_top_k, nn_top_k])
def test_bandit_bad_inputs(fn):
    V = np.ones((5, 4))
    with pytest.raises(InvalidParameterError, match="'k'"):
        fn(V, np.ones(4), 6)
    with pytest.raises(InvalidParameterError, match="'k'"):
        fn(V, np.ones(4), 0)
    with pytest.raises(InvalidParameterError, match="'epsilon'"):
        fn(V, np.ones(4), 1, epsilon=0.0)
    with pytest.raises(InvalidParameterError, match="'epsilon'"):
        fn(V, np.ones(4), 1, epsilon=-0.1)
    for bad in [0.0, 1.0, 1.5]:
        with pytest.raises(InvalidParameterError, match="'delta'"):
            fn(V, np.ones(4), 1, delta=bad)
    Vn = V.copy()
    Vn[2, 1] = np.nan
    with pytest.raises(InvalidParameterError, match="finite"):
        fn(Vn, np.ones(4), 1)
    with pytest.raises(InvalidParameterError, match="finite"):
        fn(V, [1.0, np.inf, 0.0, 0.0], 1)
    with pytest.raises(InvalidParameterError, match=r"shape \(4,\)"):
        fn(V, np.ones(5), 1)
    with pytest.raises(InvalidParameterError, match="'block'"):
        fn(V, np.ones(4), 1, block=5)


def test_exact_and_lsh_bad_inputs():
    V = np.ones((5, 4))
    with pytest.raises(InvalidParameterError, match="'k'"):
        exact_top_k(V, np.ones(4), 6)
    with pytest.raises(InvalidParameterError, match=r"shape \(4,\)"):
        exact_top_k(V, np.ones(3), 1)
    with pytest.raises(InvalidParameterError, match="finite"):
        exact_top_k(np.full((2, 2), np.inf), np.ones(2), 1)
    with pytest.raises(InvalidParameterError, match="2-d"):
        exact_top_k(np.ones(4), np.ones(4), 1)
    with pytest.raises(InvalidParameterError, match="'max_norm'"):
        mips_to_nns(V, max_norm=1.0)
    with pytest.raises(InvalidParameterError, match="'a'"):
        SignLSHIndex(V, a=0)


# ---------------------------------------------------------------------- LSH
def test_mips_to_nns_transform_preserves_argmax():
    rng = np.random.default_rng(6)
    for _ in range(20):
        V = rng.standard_normal((50, 5)) * rng.random((50, 1)) * 3
        q = rng.standard_normal(5)
        P, M = mips_to_nns(V)
        Q = nns_query(q, 5)
        np.testing.assert_allclose(np.linalg.norm(P, axis=1), 1.0)
        np.testing.assert_allclose(P @ Q, V @ q / (M * np.linalg.norm(q)))
        # argmax inner product == nearest neighbour (Euclidean) after the transform
        assert int(np.argmax(V @ q)) == int(np.argmin(((P - Q) ** 2).sum(axis=1)))


def test_lsh_recall_sanity():
    rng = np.random.default_rng(7)
    V = rng.standard_normal((2000, 16))
    hits = 0
    index = SignLSHIndex(V, a=6, b=30, rng=0)
    for _ in range(20):
        q = rng.standard_normal(16)
        hits += int(np.argmax(V @ q)) in index.query(q, 10).indices.tolist()
    assert hits >= 14
    res = lsh_top_k(V, V[0], 1, a=6, b=30, rng=0)
    assert res.info["candidates"] > 0 and res.indices.size == 1


# ---------------------------------------------------------------------- HNSW
def test_hnsw_recall_sanity():
    pytest.importorskip("hnswlib")
    from combex.mips import HNSWIndex, hnsw_top_k

    rng = np.random.default_rng(8)
    V = rng.standard_normal((3000, 16))
    index = HNSWIndex(16, capacity=10, rng=0)  # forces resizing
    index.add(V, np.arange(3000))
    recall = []
    for _ in range(30):
        q = rng.standard_normal(16)
        top = set(np.argsort(-(V @ q))[:10].tolist())
        res = hnsw_top_k(V, q, 10, index=index)
        recall.append(len(top & set(res.indices.tolist())) / 10)
    assert np.mean(recall) >= 0.8
    index.remove([int(res.indices[0])])
    assert int(res.indices[0]) not in index.query(q, 10)[0].tolist()
    built = hnsw_top_k(V, q, 3, rng=1)
    assert built.info["build_seconds"] > 0


# ---------------------------------------------------------------------- adaptive MIPS
@pytest.mark.parametrize("index", ["exact", "hnsw"])
def test_adaptive_mips_argmax_and_updates(index):
    if index == "hnsw":
        pytest.importorskip("hnswlib")
    rng = np.random.default_rng(9)
    P = rng.standard_normal((500, 8))
    P /= np.linalg.norm(P, axis=1, keepdims=True) * 2  # norms 1/2
    q = rng.standard_normal(8)
    q /= np.linalg.norm(q)
    star = 1.0 * q  # well separated: <q, star> = 1 vs <= 1/2
    m = AdaptiveMIPS(8, c=0.9, r=0.8, epsilon=0.01, index=index, n_indexes=2, exact_below=0, rng=0)
    m.add(P, np.arange(500))
    m.add(star[None, :], [999])
    lab, val = m.query(q)
    assert lab == 999 and val == pytest.approx(1.0)
    m.remove([999])
    lab2, val2 = m.query(q)
    assert lab2 is None and val2 <= 0.5  # no point reaches c r - epsilon = 0.71
    m.add(star[None, :] * 0.95, [1000])
    assert m.query(q)[0] == 1000
    free = AdaptiveMIPS(8, index=index, rng=0, exact_below=100)
    free.add(P[:80], np.arange(80))
    assert free.query(q)[0] == int(np.argmax(P[:80] @ q))  # small set: exact scan
    free.add(P[80:], np.arange(80, 500))  # grows past exact_below: HNSW built
    assert free.n_builds == (1 if index == "hnsw" else 0)
    free.remove(np.arange(30, 500))  # shrinks below half: exact again
    assert free.query(q)[0] == int(np.argmax(P[:30] @ q))


@pytest.mark.parametrize("index,lazy", [("exact", False), ("hnsw", False), ("hnsw", True)])
def test_adaptive_query_all_lists_the_passing_candidates_best_first(index, lazy):
    if index == "hnsw":
        pytest.importorskip("hnswlib")
    rng = np.random.default_rng(4)
    P = rng.standard_normal((300, 6))
    q = rng.standard_normal(6)
    m = AdaptiveMIPS(6, c=0.5, r=2.0, index=index, shortlist=10, exact_below=0, rng=0,
                     build="lazy" if lazy else "eager")
    m.add(P, np.arange(300))
    exact = P @ q
    cand, vals = m._query_all(q)
    assert cand.size and np.all(np.diff(vals) <= 0)  # best first
    np.testing.assert_allclose(vals, exact[cand], rtol=1e-5)  # exact (HNSW: float32) inner products
    assert np.all(vals >= m.threshold)  # only those passing c r - epsilon
    assert int(cand[0]) == m.query(q)[0]
    if index == "exact":  # the shortlist of an exact scan is the true top-p above threshold
        top = np.argsort(-exact)[:10]
        np.testing.assert_array_equal(cand, top[exact[top] >= m.threshold])
    high = AdaptiveMIPS(6, c=0.5, r=2 * float(exact.max()) + 1, index=index, exact_below=0, rng=0)
    high.add(P, np.arange(300))
    nulls = high.n_null
    c2, v2 = high._query_all(q)
    assert c2.size == 0 and high.n_null == nulls + 1


def test_adaptive_rounding_and_kappa():
    m = AdaptiveMIPS(4, epsilon=0.4, index="exact")
    np.testing.assert_allclose(m.round_query([0.26, -0.04, 0.149, 1.0]), [0.3, -0.0, 0.1, 1.0])
    k = AdaptiveMIPS.theoretical_kappa(10**5, 16, 0.1, 0.05)
    assert k == int(np.ceil(16 * np.log(10**5 * 16 / (0.1 * 0.05))))
    with pytest.raises(InvalidParameterError, match="'c'"):
        AdaptiveMIPS(4, c=0.5)
    with pytest.raises(InvalidParameterError, match="'index'"):
        AdaptiveMIPS(4, index="lsh")
    with pytest.raises(InvalidParameterError, match=r"shape \(4,\)"):
        m.query([1.0, 2.0])


def test_adaptive_lazy_build_is_ski_rental():
    pytest.importorskip("hnswlib")
    rng = np.random.default_rng(4)
    P = rng.standard_normal((600, 6))
    m = AdaptiveMIPS(6, index="hnsw", exact_below=100, build="lazy", build_after=3, rng=0)
    m.add(P[:400], np.arange(400))
    assert m.n_builds == 0  # lazy: no graph at insertion
    for i in range(3):  # 3 queries pay 3 * 400 point-scans = build_after * 400
        q = rng.standard_normal(6)
        assert m.query(q)[0] == int(np.argmax(P[:400] @ q))
    assert m.n_builds == 1
    m.add(P[400:], np.arange(400, 600))  # pending buffer, scanned exactly
    assert len(m._pending) == 200 and m.n_builds == 1
    q = rng.standard_normal(6)
    lab, val = m.query(q)
    assert val == pytest.approx(float(np.max(P[lab] @ q)))
    m.remove(np.arange(400, 450))  # removals from the pending buffer
    assert len(m._pending) == 150
    for _ in range(3):
        m.query(rng.standard_normal(6))
    assert len(m._pending) == 0 and len(m._indexes[0]) == 550  # flushed into the graph
    m.remove(np.r_[0:400, 450:540])  # most of the graph leaves: dropped, exact scan again
    assert not m._built and len(m) == 60
    q = rng.standard_normal(6)
    assert m.query(q)[0] == 540 + int(np.argmax(P[540:] @ q))
    e = AdaptiveMIPS(6, index="exact", build="lazy")
    e.add(P[:10], np.arange(10))
    assert e.query(q)[0] == int(np.argmax(P[:10] @ q))
    with pytest.raises(InvalidParameterError, match="'build'"):
        AdaptiveMIPS(4, build="later")
    with pytest.raises(InvalidParameterError, match="'build_after'"):
        AdaptiveMIPS(4, build_after=-1.0)


def test_exact_index_contains_and_batch_remove_errors():
    idx = ExactIndex(2)
    idx.add([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [4, 5, 6])
    assert idx.contains([4, 7, 6]).tolist() == [True, False, True]
    with pytest.raises(InvalidParameterError, match="'ids'"):
        idx.remove([4, 4])
    with pytest.raises(InvalidParameterError, match="'ids'"):
        idx.remove([9])
    assert len(idx) == 3  # failed removals change nothing
    idx.remove([4, 6])
    assert idx.query([1.0, 0.0], 3)[0].tolist() == [5]


@pytest.mark.parametrize("chunk", [1 << 24, 50])
def test_lsh_index_hashes_the_transformed_vectors_in_chunks(chunk, monkeypatch):
    import combex.mips._lsh as lsh

    monkeypatch.setattr(lsh, "_CHUNK_ELEMENTS", chunk)  # 50 elements: 5 rows per chunk
    rng = np.random.default_rng(11)
    V = (rng.standard_normal((37, 10)) * rng.uniform(0.1, 3.0, size=(37, 1))).astype(np.float32)
    index = lsh.SignLSHIndex(V, a=5, b=7, rng=3)
    P, M = lsh.mips_to_nns(V)
    assert index.max_norm == pytest.approx(M)
    want = index._codes(P)
    for t, (keys, bounds, order) in enumerate(index._tables):
        got = np.empty(V.shape[0], dtype=np.int64)
        for j, key in enumerate(keys):
            got[order[bounds[j] : bounds[j + 1]]] = key
        np.testing.assert_array_equal(got, want[:, t])

