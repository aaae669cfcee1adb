"""hdp-explorer: explore mean estimation under heterogeneous differential privacy.

Run with ``streamlit run app.py``. Pages live in pages/ (listed in hdp_app.navigation); shared
state, the URL and the sidebar in hdp_app; all mathematics in hdp_core.

Order of a run: state is initialised (the link is read once per session), the navigation is
drawn, the page runs and may change the profile, then the sidebar summary and the URL are
brought up to date.

Navigation: app.py draws it itself (``st.page_link`` in the sidebar) and keeps Streamlit's
own hidden (``position="hidden"`` here, ``client.showSidebarNavigation = false`` in
.streamlit/config.toml), so the file list of Streamlit's pages-directory mode is never
shown, not even on a fresh server (see hdp_app.navigation.run_through_app).
"""

import pathlib

import streamlit as st

from hdp_app import plotly_guard
from hdp_app.navigation import app_pages, through_app
from hdp_app.perf import freeze_after_imports
from hdp_app.sidebar import render_note, render_sidebar
from hdp_app.state import get_spec, init_state
from hdp_app.url import sync_url

# Before any figure: plotly treats a module still being imported (pandas, imported by the
# pages that need it, not by the first page) as absent, never half-made (issue 29).
plotly_guard.install()

st.set_page_config(
    page_title="hdp-explorer",
    # A local image (sent inline): a ":material/...:" favicon is fetched from a font server.
    page_icon=str(pathlib.Path(__file__).parent / "hdp_app" / "favicon.svg"),
    layout="wide",
    # 240 px (Streamlit's default is wider): at a projector's 1024 px the page gets the room;
    # the sidebar's summary is two lines with its details folded (hdp_app.sidebar)
    initial_sidebar_state=240,
)

init_state()

PAGES = app_pages()
nav = st.navigation(PAGES, position="hidden")
with st.sidebar.container(key="app_nav"):
    for p in PAGES:
        st.page_link(p)
# Filled after the page ran, so that they show the profile the page may just have changed.
note = st.container()
summary = st.sidebar.container()
with through_app():
    nav.run()
render_note(note)
render_sidebar(summary)
sync_url(get_spec())
freeze_after_imports()  # short garbage collections after later runs (hdp_app.perf)
