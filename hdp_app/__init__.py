"""The Streamlit side of hdp-explorer: what app.py and the page files in pages/ share.

Kept out of pages/ so that no helper module can ever be opened as a page by a URL. One module
per job: navigation (the pages, run_through_app), state (session keys, profile and menu), url
(the link, through st.query_params only), cache (every st.cache_* wrapper), sidebar, widgets
(shared inputs and bounds from hdp_app.views.limits); common re-exports them for the pages.
Streamlit's public API only (tests/test_architecture.py).
hdp_core (the mathematics) never imports this package or streamlit.
"""
