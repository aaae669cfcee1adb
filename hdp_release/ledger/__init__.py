"""The privacy ledger: what each release spent, kept across sessions in one DuckDB file
(hdp_release.ledger.store); ``python -m hdp_release.ledger PATH`` lists it."""

from hdp_release.ledger.store import (
    BUSY_TIMEOUT,
    DEFAULT_PATH,
    ENV_VAR,
    NAME_PREFIX,
    ChargeTicket,
    LedgerEntry,
    PrivacyLedger,
    dataset_identities,
    default_ledger_path,
    name_identity,
    shown_identity,
)

__all__ = [
    "BUSY_TIMEOUT",
    "DEFAULT_PATH",
    "ENV_VAR",
    "NAME_PREFIX",
    "ChargeTicket",
    "LedgerEntry",
    "PrivacyLedger",
    "dataset_identities",
    "default_ledger_path",
    "name_identity",
    "shown_identity",
]
