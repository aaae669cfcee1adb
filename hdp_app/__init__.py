"""The Streamlit side of hdp-explorer: what app.py and the page files in pages/ share.

Kept out of pages/ so that no helper module can ever be opened as a page by a URL.
hdp_core (the mathematics) never imports this package or streamlit.
"""
