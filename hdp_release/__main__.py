"""``python -m hdp_release PATH --value C --eps C --range LO HI ...``: one private release
from the command line (hdp_release.cli)."""

from hdp_release.cli import main

raise SystemExit(main())
