"""Plotly figure builders: data in, ``go.Figure`` out. No streamlit here.

One submodule per page (profile, saturation, bounds, simulation, design) and one style module
(:mod:`hdp_app.figures.style`): every method has one colour everywhere, from the Okabe-Ito
colour-blind-safe palette.
"""
