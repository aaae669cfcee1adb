"""What the browser tests and benchmarks/bench_first_load.py share: a Streamlit server on a free
local port, Debian's Chromium through Playwright, and one definition of "the page is drawn".

"Drawn" (``wait_drawn``): the app is connected, a script run has ended since the action that
started the wait (a change of ``data-test-script-state`` from "running", or, for a fragment run
too fast for React to draw that state, a message from the server), the script is idle
(``data-test-script-state="notRunning"``), no message has arrived for ``STABLE_MS``, at least
``min_charts`` plotly charts are on the page and every one of them has drawn its SVG, no
``stSkeleton`` placeholder is left (the client keeps loading element code after the script
ends), and all of that has held, with the DOM unchanged, for ``STABLE_MS``.

``INIT_SCRIPT`` runs in every document before the app's own code: from the moment of
navigation it records every navigation label ever attached to the DOM (sidebar navigation,
page links, top navigation), so a test sees even a list that was shown for one frame.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from urllib.parse import urlparse

ROOT = pathlib.Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
STABLE_MS = 500
DRAWN_TIMEOUT_MS = 90_000  # the machine is shared: generous; a healthy first load takes ~5 s


def app_pages(app: pathlib.Path = APP) -> list[tuple[str, str]]:
    """``(path, title)`` of every page of the app, in navigation order (hdp_app.navigation's
    PAGE_FILES, the list app.py builds its navigation from)."""
    from hdp_app.navigation import PAGE_FILES

    return [(p.path, p.title) for p in PAGE_FILES]


def app_page_titles(app: pathlib.Path = APP) -> list[str]:
    """The titles of app.py's pages: the only labels the navigation may ever show."""
    return [title for _, title in app_pages(app)]


NO_CHART_ON_ARRIVAL = frozenset({"Release"})
"""Pages that draw no chart when opened (the Release page until a table is uploaded): wait for
them with ``min_charts=0``."""


def charts_on_arrival(title: str) -> int:
    """The ``min_charts`` to wait for when the page titled ``title`` is opened."""
    return 0 if title in NO_CHART_ON_ARRIVAL else 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``streamlit run <script>`` on a free port, started at construction (not waited for).

    ``ready()`` waits for /_stcore/health, which does not open a session: the first browser
    session is still the process's first. ``stop()`` terminates the process by its handle.
    The server's privacy ledger (``HDP_LEDGER``) is ``ledger`` or a new file in ``log_dir``:
    never the home folder's.
    """

    def __init__(
        self,
        script: pathlib.Path = APP,
        log_dir: pathlib.Path | None = None,
        ledger: pathlib.Path | None = None,
    ):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.script = pathlib.Path(script)
        if log_dir is None:
            log_dir = pathlib.Path(tempfile.mkdtemp(prefix="hdp-streamlit-"))
        self.log_path = pathlib.Path(log_dir) / f"streamlit-{self.port}.log"
        self._log = open(self.log_path, "w")  # closed by stop()
        self.ledger = pathlib.Path(ledger or pathlib.Path(log_dir) / f"ledger-{self.port}.duckdb")
        env = {**os.environ, "HDP_LEDGER": str(self.ledger)}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                self.script.name,
                "--server.headless",
                "true",
                "--server.address",
                "127.0.0.1",
                "--server.port",
                str(self.port),
                "--browser.gatherUsageStats",
                "false",
                "--server.fileWatcherType",
                "none",
            ],
            cwd=self.script.parent,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def log(self) -> str:
        return self.log_path.read_text()

    def ready(self, timeout: float = 120) -> str:
        """Wait until the server answers its health check; returns the base URL."""
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(self.base + "/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        return self.base
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"no answer on /_stcore/health:\n{self.log()}")
            time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self._log.close()


NAV_SELECTOR = (
    ", ".join(f"[data-testid={t}] a" for t in ("stSidebarNav", "stSidebarNavItems", "stTopNav"))
    # the app's own navigation is the sidebar's page links; a link inside a page (the Tier
    # designer's "Release ... with this menu") is not navigation
    + ", [data-testid=stSidebar] [data-testid=stPageLink-NavLink], [data-testid=stTopNavLink], "
    "[data-testid=stTopNavDropdownLink]"
)

INIT_SCRIPT = """
(() => {
  const S = window.__hdp = {nav: [], seen: new Set(), runsEnded: 0, msgs: 0, changes: 0,
                            shown: 0};
  // Every message from the server counts too: a fragment run can end so fast that React
  // never draws data-test-script-state="running", so no attribute change marks it.
  const WS = window.WebSocket;
  window.WebSocket = class extends WS {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", () => { S.msgs++; });
    }
  };
  const SEL = __SEL__;
  const label = (a) => {
    let t = a.textContent;
    a.querySelectorAll("[data-testid^=stIcon]").forEach(i => { t = t.replace(i.textContent, ""); });
    return t.trim();
  };
  const scan = () => {
    for (const a of document.querySelectorAll(SEL)) {
      const l = label(a);
      if (!S.seen.has(l)) { S.seen.add(l); S.nav.push(l); }
    }
  };
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.oldValue === "running") S.runsEnded++;
    }
  }).observe(document, {subtree: true, attributes: true, attributeOldValue: true,
                        attributeFilter: ["data-test-script-state"]});
  // shown: the changes a reader can see, i.e. not inside a <canvas> (a canvas's children are
  // its fallback content, never drawn: the dataframe grid's accessibility table lives there)
  const inCanvas = (n) => {
    const el = n.nodeType === 1 ? n : n.parentElement;
    return !!(el && el.closest("canvas"));
  };
  new MutationObserver((records) => {
    S.changes += records.length;
    for (const r of records) if (!inCanvas(r.target)) S.shown++;
    scan();
  }).observe(document, {subtree: true, childList: true, characterData: true});
})();
""".replace("__SEL__", repr(NAV_SELECTOR))

_DRAWN_JS = """
async ({minCharts, runsBefore, timeoutMs, stableMs}) => {
  const S = window.__hdp;
  const t0 = performance.now();
  let sig = null, since = null, why = "", sigV = null, sinceV = null;
  while (performance.now() - t0 < timeoutMs) {
    const app = document.querySelector("[data-testid=stApp]");
    const charts = [...document.querySelectorAll("[data-testid=stPlotlyChart]")];
    const state = app && app.getAttribute("data-test-script-state");
    why = !app ? "no stApp"
      : app.getAttribute("data-test-connection-state") !== "CONNECTED" ? "not connected"
      : S.runsEnded + S.msgs <= runsBefore ? "no script run has ended yet"
      : state !== "notRunning" ? "script state " + state
      : document.querySelector("[data-testid=stSkeleton]") ? "stSkeleton on the page"
      : charts.length < minCharts ? charts.length + " charts < " + minCharts
      : !charts.every(c => c.querySelector(".main-svg")) ? "a chart is not drawn"
      : "";
    const now = performance.now();
    if (!why) {
      const s = S.runsEnded + "/" + S.msgs + "/" + S.changes;
      const v = S.runsEnded + "/" + S.msgs + "/" + S.shown;
      if (v !== sigV) { sigV = v; sinceV = now; }
      if (s !== sig) { sig = s; since = now; }
      else if (now - since >= stableMs) {
        return {ok: true, drawnEpochMs: performance.timeOrigin + since, charts: charts.length,
                shownEpochMs: performance.timeOrigin + sinceV};
      }
    } else { sig = null; sigV = null; }
    await new Promise(r => setTimeout(r, 20));
  }
  return {ok: false, why};
}
"""


def runs_ended(page) -> int:
    """A count that grows with every script run in this document: runs seen ending plus
    messages received from the server (pass it to ``wait_drawn`` as ``runs_before``)."""
    return page.evaluate("window.__hdp.runsEnded + window.__hdp.msgs")


def wait_drawn(
    page, min_charts: int = 1, runs_before: int = 0, timeout_ms: int = DRAWN_TIMEOUT_MS
) -> float:
    """Wait until the page is drawn (module docstring) after more than ``runs_before`` script
    runs have ended; returns the epoch time (s) at which it became drawn and stayed so."""
    return wait_drawn_shown(page, min_charts, runs_before, timeout_ms)[0]


def wait_drawn_shown(
    page, min_charts: int = 1, runs_before: int = 0, timeout_ms: int = DRAWN_TIMEOUT_MS
) -> tuple[float, float]:
    """:func:`wait_drawn`, returning two epoch times (s): when the page became drawn and
    stayed so, and when what a reader sees stopped changing (the same, leaving out changes
    inside a ``<canvas>``: its children are fallback content, never drawn; the dataframe
    grid updates its accessibility table there, after its canvas is drawn)."""
    res = page.evaluate(
        _DRAWN_JS,
        {
            "minCharts": min_charts,
            "runsBefore": runs_before,
            "timeoutMs": timeout_ms,
            "stableMs": STABLE_MS,
        },
    )
    if not res["ok"]:
        raise AssertionError(f"the page was not drawn within {timeout_ms} ms: {res['why']}")
    return res["drawnEpochMs"] / 1000.0, res["shownEpochMs"] / 1000.0


def nav_seen(page) -> list[str]:
    """Every navigation label attached to the DOM since the document started, in order."""
    return page.evaluate("window.__hdp.nav")


def nav_now(page) -> list[str]:
    """The navigation labels on screen now, in order."""
    return page.evaluate(
        "(sel) => [...document.querySelectorAll(sel)].map(a => {"
        " let t = a.textContent; a.querySelectorAll('[data-testid^=stIcon]')"
        ".forEach(i => { t = t.replace(i.textContent, ''); }); return t.trim(); })",
        NAV_SELECTOR,
    )


class RequestLog:
    """Every URL the page asks for (network requests and the favicon's link), to check that
    none leaves the app's own host."""

    def __init__(self, page, base: str):
        self.page = page
        self.host = urlparse(base).netloc
        self.urls: list[str] = []
        page.on("request", lambda req: self.urls.append(req.url))

    def foreign(self) -> list[str]:
        icons = self.page.evaluate(
            "[...document.querySelectorAll('link[rel*=icon]')].map(l => l.href)"
        )
        out = []
        for url in [*self.urls, *icons]:
            u = urlparse(url)
            if u.scheme in ("data", "blob", "about"):
                continue
            if u.netloc != self.host:
                out.append(url)
        return out


@contextlib.contextmanager
def chromium():
    """A headless Chromium (Debian's, never a downloaded one)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            yield b
        finally:
            b.close()


def new_page(browser, viewport=(1400, 1000)):
    """A page in a fresh context (no cache, no cookies) with INIT_SCRIPT installed."""
    ctx = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    ctx.add_init_script(INIT_SCRIPT)
    return ctx, ctx.new_page()
