"""Page-shaped numbers and text for the app's pages (no streamlit, no plotly).

Each module serves one page or one job: saturation and saturation_page, bounds, simulation
with simulation_controls, group_sweep and paper_table, whatif, design with design_controls,
profile_controls, tour, release (each page's numbers, controls and sentences); links
(profiles and menus in a URL), codegen and snippets (every "Reproduce in Python" snippet and
what it needs), fields (number inputs as one object: label, key, default, bounds, help),
formatting (numbers and user-supplied text as shown). The mathematics they build on is in
hdp_core itself.
"""
