"""hdp-explorer: explore mean estimation under heterogeneous differential privacy.

Run with ``streamlit run app.py``. Pages live in pages/; shared state, the URL and the sidebar
in hdp_app/common.py; all mathematics in hdp_core.

Order of a run: state is initialised (the link is read once per session), the navigation is
drawn, the page runs and may change the profile, then the sidebar summary and the URL are
brought up to date.

Navigation: app.py draws it itself (``st.page_link`` in the sidebar) and keeps Streamlit's
own hidden (``position="hidden"`` here, ``client.showSidebarNavigation = false`` in
.streamlit/config.toml), so the file list of Streamlit's legacy ``pages/`` mode is never
shown, not even on a fresh server (see hdp_app.common.run_through_app).
"""

import pathlib

import streamlit as st

from hdp_app.common import init_state, render_note, render_sidebar, sync_url
from hdp_app.perf import freeze_after_imports

st.set_page_config(
    page_title="hdp-explorer",
    # A local image (sent inline): a ":material/...:" favicon is fetched from a font server.
    page_icon=str(pathlib.Path(__file__).parent / "hdp_app" / "favicon.svg"),
    layout="wide",
    initial_sidebar_state="expanded",
)

init_state()

PAGES = [
    st.Page("pages/profile.py", title="Profile", icon=":material/tune:", default=True),
    st.Page("pages/saturation.py", title="Saturation", icon=":material/show_chart:"),
    st.Page("pages/bounds.py", title="Bounds", icon=":material/straighten:"),
    st.Page("pages/simulation.py", title="Simulation", icon=":material/casino:"),
    st.Page("pages/tier_designer.py", title="Tier designer", icon=":material/explore:"),
    st.Page("pages/release.py", title="Release", icon=":material/lock_open:"),
]

nav = st.navigation(PAGES, position="hidden")
with st.sidebar.container(key="app_nav"):
    for p in PAGES:
        st.page_link(p)
# Filled after the page ran, so that they show the profile the page may just have changed.
note = st.container()
summary = st.sidebar.container()
nav.run()
render_note(note)
render_sidebar(summary)
sync_url()
freeze_after_imports()  # short garbage collections after later runs (hdp_app.perf)
