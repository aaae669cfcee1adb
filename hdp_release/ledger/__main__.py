"""``python -m hdp_release.ledger PATH [--dataset NAME] [--format text|json]``: list a ledger."""

from hdp_release.ledger.cli import main

raise SystemExit(main())
