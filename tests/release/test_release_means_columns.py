"""The grouped pass's columns turned into a Grouped (hdp_release.engines.segment_bins), the
per-segment sums that classify segments (hdp_release.grouped_plan.segment_sums) and a
segment's walk entries (hdp_release.grouped_bins.bin_entries), each against a plain oracle:
numpy's lexsort of (segment, bin) with the bad-level rows dropped, sums per segment in a
Python loop, and boolean-mask indexing."""

from __future__ import annotations

import numpy as np

from hdp_release.engines.base import PUBLIC_BIN, ZERO_BIN
from hdp_release.engines.segment_bins import Q2_NAMES, grouped_from_columns
from hdp_release.grouped_bins import bin_entries, row_floats
from hdp_release.grouped_plan import segment_sums

PART_NAMES = [f"{x}{i}" for x in (*Q2_NAMES, "sy", "sq", "sqy") for i in range(3)]


def _columns(rng: np.random.Generator, n_seg: int) -> dict:
    """Shuffled (segment, bin) rows: finite bins (extreme ones included), eps = 0, public
    and bad-level rows, random part columns."""
    rows = []
    for sid in range(n_seg):
        bins = rng.choice(np.arange(-47_000, 46_000), size=rng.integers(0, 6), replace=False)
        bins = [*bins.tolist(), *([ZERO_BIN] if rng.random() < 0.5 else [])]
        bins += [PUBLIC_BIN] if rng.random() < 0.5 else []
        rows += [(sid, b, False) for b in bins]
        if rng.random() < 0.3:
            rows.append((sid, 0, True))  # a bad level (NULL bin, coalesced to 0)
    rng.shuffle(rows)
    m = len(rows)
    emin = rng.random(m)
    cols = {
        "sid": np.array([r[0] for r in rows], dtype=np.int64),
        "b": np.array([r[1] for r in rows], dtype=np.int64),
        "badb": np.array([r[2] for r in rows], dtype=bool),
        "n": rng.integers(1, 1000, m),
        "nbad": rng.integers(0, 3, m),
        "emin": emin,
        "emax": np.where(rng.random(m) < 0.5, emin, emin + 1.0),  # one level, or several
    }
    for name in PART_NAMES:
        cols[name] = rng.integers(0, 1 << 42, m)
    return cols


def test_grouped_columns_equal_a_lexsort_of_segment_and_bin():
    rng = np.random.default_rng(5)
    for n_seg in (1, 3, 40):
        cols = _columns(rng, n_seg)
        g = grouped_from_columns([(k,) for k in range(n_seg)], dict(cols))
        order = np.lexsort((cols["b"], ~cols["badb"], cols["sid"]))
        keep = order[~cols["badb"][order]]
        assert np.array_equal(g.bin, cols["b"][keep])
        assert np.array_equal(g.n, cols["n"][keep])
        assert np.array_equal(g.emin, cols["emin"][keep])
        assert np.array_equal(g.emax, cols["emax"][keep])
        blocks = (g.q2, g.sy, g.sq, g.sqy)
        got = np.concatenate(blocks, axis=1)
        want = np.stack([cols[x][keep] for x in PART_NAMES], axis=1)
        assert np.array_equal(got, want)
        sid = cols["sid"][keep]
        for k in range(n_seg):
            assert np.array_equal(
                np.flatnonzero(sid == k), np.arange(*g.rows((k,)).indices(sid.size))
            )
        assert g.n_rows == int(cols["n"].sum())
        assert g.n_bad_eps == int(cols["n"][cols["badb"]].sum())
        assert g.n_bad_value == int(cols["nbad"].sum())


def test_segment_sums_equal_a_loop_over_segments():
    rng = np.random.default_rng(6)
    cols = _columns(rng, 30)
    g = grouped_from_columns([(k,) for k in range(30)], dict(cols))
    zero, pub, fin, ranged = segment_sums(g)
    for k in range(30):
        r = g.rows((k,))
        b, n = g.bin[r], g.n[r]
        f = (b != ZERO_BIN) & (b != PUBLIC_BIN)
        assert zero[k] == int(n[b == ZERO_BIN].sum())
        assert pub[k] == int(n[b == PUBLIC_BIN].sum())
        assert fin[k] == int(n[f].sum())
        assert ranged[k] == int((g.emin[r][f] != g.emax[r][f]).sum())


def test_bin_entries_as_views_or_by_index_equal_mask_indexing():
    rng = np.random.default_rng(7)
    cols = _columns(rng, 20)
    g = grouped_from_columns([(k,) for k in range(20)], dict(cols))
    f = row_floats(g)
    for k in range(20):
        r = g.rows((k,))
        b = g.bin[r]
        fin = (b != ZERO_BIN) & (b != PUBLIC_BIN)
        masks = [fin]
        if fin.sum() >= 3:  # a mask with a gap: taken by index
            gap = fin.copy()
            gap[np.flatnonzero(fin)[1]] = False
            masks.append(gap)
        for mask in masks:
            e = bin_entries(g, r, mask, f)
            assert np.array_equal(e.emin, g.emin[r][mask])
            assert np.array_equal(e.users, g.n[r][mask])
            assert np.array_equal(e.q2, g.q2[r][mask])
            assert np.array_equal(e.sy, g.sy[r][mask])
            assert np.array_equal(e.s1, f.s1[r][mask])
            assert np.array_equal(e.s2, f.s2[r][mask])
            assert np.array_equal(e.qmax, f.qmax[r][mask])
