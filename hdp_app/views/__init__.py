"""Page-shaped numbers and text for the app's pages (no streamlit, no plotly).

Each module serves one page or one job: saturation, bounds and simulation (each page's numbers
and sentences), links (profiles and menus in a URL), menu_io (menu files), codegen (every
"Reproduce in Python" snippet) and formatting (numbers and user-supplied text as shown). The
mathematics they build on is in hdp_core itself.
"""
