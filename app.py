"""hdp-explorer: explore mean estimation under heterogeneous differential privacy.

Run with ``streamlit run app.py``. Pages live in pages/; shared state, the URL and the sidebar
in pages/common.py; all mathematics in hdp_core.

Order of a run: state is initialised (the link is read once per session), the page runs and
may change the profile, then the sidebar summary and the URL are brought up to date.
"""

import streamlit as st

from pages.common import init_state, render_note, render_sidebar, sync_url

st.set_page_config(
    page_title="hdp-explorer",
    page_icon=":material/lock:",
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

nav = st.navigation(PAGES)
# Filled after the page ran, so that they show the profile the page may just have changed.
note = st.container()
summary = st.sidebar.container()
nav.run()
render_note(note)
render_sidebar(summary)
sync_url()
