"""Placeholder: this page is being built."""

import streamlit as st

st.title("tier_designer")
st.info("This page is being built.")
