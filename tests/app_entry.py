"""AppTest's entry script: runs app.py from a folder that has no ``pages/`` beside it.

A ``pages/`` folder beside the entry script starts Streamlit in its pages-directory mode until
``st.navigation`` runs, and AppTest starts every run afresh (a served app enters that mode only
on a fresh server's first run). Run from here, every AppTest run is the app as a browser meets
it after its first page load; the fresh-server case is tested from app.py itself
(tests/test_navigation.py) and in the browser (tests/test_browser.py). The app's pages have
absolute paths (hdp_app.navigation), so they are the same files whichever script starts them.
"""

import pathlib
import runpy

runpy.run_path(str(pathlib.Path(__file__).resolve().parents[1] / "app.py"), run_name="__main__")
