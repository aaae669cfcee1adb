"""Helpers shared by the page tests (AppTest): profiles every page must handle, and small
readers for what a page shows. Import them with ``from helpers import ...``."""

from __future__ import annotations

import math
import pathlib
import subprocess
import sys

import hdp_core as hdp

ROOT = pathlib.Path(__file__).resolve().parents[1]
APP = str(ROOT / "tests" / "app_entry.py")
"""AppTest's entry script: runs app.py from a folder without pages/ (see its docstring)."""


def fresh_python(code: str, timeout: float = 120) -> str:
    """Run ``code`` in a new interpreter from the repository's root (what a fresh process
    imports can only be seen there); returns its standard output after asserting it exited 0
    (the last 2,000 characters of its standard error as the message otherwise)."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=timeout
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def whole_app(default_timeout: float = 60):
    """An AppTest of the whole app (not yet run), from APP. Its ``switch_page("pages/x.py")``
    names a page relative to the repository, as app.py does."""
    import os

    from streamlit.testing.v1 import AppTest

    class WholeApp(AppTest):
        @classmethod
        def from_file(cls, script_path=APP, *, default_timeout: float = 3):
            return cls(script_path, default_timeout=default_timeout)

        def switch_page(self, page_path: str) -> AppTest:
            """Switch to ``page_path`` (relative to the repository root)."""
            return super().switch_page(os.path.relpath(ROOT / page_path, pathlib.Path(APP).parent))

    return WholeApp.from_file(APP, default_timeout=default_timeout)


def open_page(at, page: str):
    """Run ``at`` once (default page) and switch to ``pages/<page>.py``; returns ``at``."""
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    return at


def open_sections(at, *names: str):
    """Open the Tier designer's sections 3 to 6 (drawn only when open; all of them when no
    name is given: 'target', 'whatif', 'releases', 'save') and rerun; returns ``at``."""
    from hdp_app.design_state import OPEN

    for name in names or tuple(OPEN):
        at.session_state[OPEN[name]] = True
    return at.run()


INF = float("inf")

PROFILE_KINDS = {
    "per_user": lambda: hdp.paper_profile("high", 400, seed=1),
    "tiered_huge": lambda: hdp.EpsilonProfile.from_tiers(
        [0.1, 1.0, INF], [10**12, 10**11, 10**6], ["Strict", "Relaxed", "Public"]
    ),
    "two_groups": lambda: hdp.preset("two_groups"),
    "all_public": lambda: hdp.EpsilonProfile.from_values([INF] * 20),
    "with_zeros": lambda: hdp.EpsilonProfile.from_values([0.0, 0.0, 0.05, 0.2, 1.0, 5.0, INF]),
    "all_zero": lambda: hdp.EpsilonProfile.from_values([0.0, 0.0, 0.0]),
}
"""Kinds of profile every page must handle, built fresh for each test."""


def show(at, prof, page: str):
    """Run the app, make ``prof`` current through session state, open ``pages/<page>.py``."""
    from hdp_app.common import PROFILE, PROFILE_LABEL, PROFILE_SPEC

    at.run()
    at.session_state[PROFILE] = prof
    at.session_state[PROFILE_SPEC] = None
    at.session_state[PROFILE_LABEL] = "test profile"
    at.switch_page(f"pages/{page}.py").run()
    return at


def ok(at) -> None:
    """No exception and no error message on the page."""
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def metric(at, label: str) -> str:
    """The value of the metric labelled ``label`` (fails listing the labels if absent)."""
    found = [m.value for m in at.metric if m.label == label]
    assert found, f"no metric {label!r} among {[m.label for m in at.metric]}"
    return found[0]


def widget(at, kind: str, key: str):
    """The widget of element type ``kind`` with key ``key``."""
    found = [w for w in at.get(kind) if w.key == key]
    assert found, f"no {kind} {key!r}"
    return found[0]


def shown(text: str) -> str:
    """What markdown displays for ``text``: backslash escapes (hdp_app.views.formatting.plain)
    removed, so tests can look for the words a user reads."""
    import re

    return re.sub(r"\\(.)", r"\1", text)


def whole_frame(at, index: int = 0):
    """The value of ``at.dataframe[index]`` joined with the dataframes right after it that
    repeat its first column (rows equal): a wide table the page draws in parts
    (hdp_app.widgets.wide_dataframe) read back as one pandas DataFrame."""
    import pandas as pd

    frames = [df.value for df in at.dataframe]
    first = frames[index]
    head = first.columns[0]
    parts = [first]
    for nxt in frames[index + 1 :] if index >= 0 else []:
        if nxt.columns[0] != head or not nxt[head].equals(first[head]):
            break
        parts.append(nxt.drop(columns=head))
    return pd.concat(parts, axis=1)


def same_release(a, b) -> None:
    """Assert two releases are the same bit for bit: estimate, interval, noise scale,
    saturation level, bias bound, the user counts and the receipt frame."""
    import pandas as pd

    assert (a.estimate, a.ci95, a.noise_scale) == (b.estimate, b.ci95, b.noise_scale)
    assert (a.saturation_level, a.bias_bound) == (b.saturation_level, b.bias_bound)
    assert (a.n_users, a.n_excluded, a.n_public) == (b.n_users, b.n_excluded, b.n_public)
    pd.testing.assert_frame_equal(a.tiers, b.tiers)


class NoNoise:
    """OpenDP's real measurement for ``scale`` (its privacy map kept, so every check still
    runs), returning its input unchanged: a release without noise. Tests put it in place of
    ``hdp_release.finish.measurement``; ``NoNoise.calls`` counts the noise draws."""

    calls = 0

    def __init__(self, scale):
        from hdp_release.noise import measurement

        self.real = measurement(scale)

    def map(self, d):
        return self.real.map(d)

    def __call__(self, x):
        NoNoise.calls += 1
        return x


def weighted_mean_oracle(df, lo: float, hi: float, c: float = 8.0):
    """The non-private clamped mean of column "v" weighted by r = min(e, tau*) (column "e";
    eps = 0 users left out), tau* by brute force over the saturation index k (Algorithm 1 /
    the saturation lemma), with numpy on the raw table: (mean, tau*, r)."""
    import numpy as np

    x = np.clip(df["v"].to_numpy(float), lo, hi)
    e = df["e"].to_numpy(float)
    use = e > 0
    x, e = x[use], e[use]
    fin = np.sort(e[np.isfinite(e)])
    tau = math.inf
    s1 = s2 = 0.0
    for k in range(fin.size):
        if k > 0 and fin[k] >= (s2 + c) / s1:
            tau = (s2 + c) / s1
            break
        s1 += fin[k]
        s2 += fin[k] ** 2
    else:
        if np.isinf(e).any():  # public users make tau* finite
            tau = (s2 + c) / s1
    r = np.minimum(e, tau)
    return float(np.dot(r, x) / r.sum()), tau, r
