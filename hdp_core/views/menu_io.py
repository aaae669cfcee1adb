"""Tier menus as files: moved to hdp_core.design_io (menu <-> dict/JSON in both directions);
re-exported here while pages move to the new module."""

from __future__ import annotations

from ..design_io import (
    MAX_MENU_BYTES,
    menu_from_csv,
    menu_from_dict,
    menu_from_json,
    menu_from_upload,
    menu_to_dict,
    menu_to_json,
    report_to_csv,
    report_to_dict,
)

__all__ = [
    "MAX_MENU_BYTES",
    "menu_from_csv",
    "menu_from_dict",
    "menu_from_json",
    "menu_from_upload",
    "menu_to_dict",
    "menu_to_json",
    "report_to_csv",
    "report_to_dict",
]
