"""The pages' st.cache_* wrappers, one module per page (bounds, saturation, simulation,
profile, tour, design); the wrappers shared by several pages are in hdp_app.cache. Every
wrapper calls one function of hdp_core or hdp_app.views / figures and adds nothing but the
cache (keys from the inputs only: a profile by its key, a menu by its key)."""
