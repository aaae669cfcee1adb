"""hdp-explorer: explore mean estimation under heterogeneous differential privacy.

Run with ``streamlit run app.py``. Pages live in pages/; shared state and the sidebar in
pages/common.py; all mathematics in hdp_core.
"""

import streamlit as st

from pages.common import init_state, render_sidebar

st.set_page_config(page_title="hdp-explorer", page_icon="🔐", layout="wide")

init_state()

PAGES = [
    st.Page("pages/profile.py", title="Profile", icon="🎚️", default=True),
    st.Page("pages/saturation.py", title="Saturation", icon="📈"),
    st.Page("pages/bounds.py", title="Bounds", icon="📐"),
    st.Page("pages/simulation.py", title="Simulation", icon="🎲"),
    st.Page("pages/tier_designer.py", title="Tier designer", icon="🧭"),
]

nav = st.navigation(PAGES)
summary = st.sidebar.container()  # filled after the page ran, so it shows the new profile
nav.run()
render_sidebar(summary)
