"""What a release per segment returns: :class:`GroupedRelease` (one row per segment: keys,
users, estimate, 95% interval, noise scale, tau* or cap, bias bound; the receipt per segment
and level; the ledger's answer). Numbers in data units unless said."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from hdp_release.result import Release, not_recorded_note

PRIVACY_MODEL = (
    "Privacy model: a person's level and segment are public attributes; their value is "
    "protected. Each person's value enters exactly one segment's estimate, so their loss is "
    "their segment's granted r_i <= their run level (parallel composition)."
)

RESULT_COLUMNS = (
    "users",
    "estimate",
    "ci95_low",
    "ci95_high",
    "half_width95",
    "noise_scale",
    "saturation_level",
    "bias_bound",
    "outputs_midrange",
    "present",
)


def key_text(x: Any) -> str:
    """A segment key as text (for JSON and the receipt's key columns): integral numbers
    without a decimal point (so a key file's '3' matches a column's 3), others as str."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        f = float(x)
        return str(int(f)) if f.is_integer() and abs(f) < 2**53 else repr(f)
    return str(x)


def key_columns(by: tuple[str, ...]) -> list[str]:
    """The key columns' names in the tables: the segment columns' names, with ' (segment)'
    added to one that equals a result column's name."""
    taken = set(RESULT_COLUMNS) | {"eps", "users", "run_eps"}
    return [b if b not in taken else f"{b} (segment)" for b in by]


@dataclass(frozen=True)
class GroupedRelease:
    """A private mean per segment (hdp_release.grouped.release_means).

    ``keys[s]`` is segment s's key (a tuple, one entry per ``by`` column); ``releases[s]``
    its :class:`Release` (estimate, ci95 proven to cover the segment's target with
    probability >= 95%, noise_scale, saturation_level: tau* or the cap, bias_bound, the
    receipt ``tiers``). ``present[s]``: False for a key given in ``keys=`` that the table does
    not hold (the mid-range from no data, the interval the whole range). ``n_left_out``
    segments present in the table but not in ``keys=`` were left out (``users_left_out``
    rows). The ledger fields as :class:`Release`'s (one charge for the whole release). With
    the per-person ledger (``id_column``): ``people`` is the receipt per segment and level
    (the key columns, then eps, eps_max, asked, persons, run_min, run_max, lost_min,
    lost_max, kept_min, kept_max, saturated, exhausted; nats): what each person asked, ran at,
    lost (was charged, in their own segment, once) and keeps; ``n_spent_segments`` segments
    were refused because every person there had spent their level."""

    by: tuple[str, ...]
    keys: tuple[tuple, ...]
    releases: tuple[Release, ...]
    present: tuple[bool, ...]
    target: str
    lo: float
    hi: float
    engine: str
    n_left_out: int = 0
    users_left_out: int = 0
    plan: str = ""
    notes: tuple[str, ...] = field(default=())
    spend: float = 1.0
    level_factor: float = 1.0
    dataset: str | None = None
    ledger_path: str | None = None
    budget_remaining: float | None = None
    recorded: bool | None = None
    record_failure: str | None = None
    id_column: str | None = None
    people: Any = None
    n_spent_segments: int = 0

    def __len__(self) -> int:
        return len(self.keys)

    def to_frame(self):
        """One row per segment: the key columns, users, estimate, ci95_low, ci95_high,
        half_width95, noise_scale, saturation_level (tau* or the cap level), bias_bound (the
        table target's worst-case bias; 0 for the population target), outputs_midrange,
        present."""
        import pandas as pd

        kc = key_columns(self.by)
        data: dict[str, list] = {c: [k[i] for k in self.keys] for i, c in enumerate(kc)}
        rs = self.releases
        data["users"] = [r.n_users for r in rs]
        data["estimate"] = [r.estimate for r in rs]
        data["ci95_low"] = [r.ci95[0] for r in rs]
        data["ci95_high"] = [r.ci95[1] for r in rs]
        data["half_width95"] = [r.half_width95 for r in rs]
        data["noise_scale"] = [r.noise_scale for r in rs]
        data["saturation_level"] = [r.saturation_level for r in rs]
        data["bias_bound"] = [r.bias_bound for r in rs]
        data["outputs_midrange"] = [r.outputs_midrange for r in rs]
        data["present"] = list(self.present)
        return pd.DataFrame(data)

    def receipt(self):
        """The privacy receipt per segment and level: the key columns, then each segment's
        receipt rows (requested eps, run_eps, users, granted eps, OpenDP's loss)."""
        import pandas as pd

        kc = key_columns(self.by)
        parts = []
        for k, r in zip(self.keys, self.releases, strict=True):
            t = r.tiers.copy()
            for i, c in reversed(list(enumerate(kc))):
                t.insert(0, c, [k[i]] * len(t))
            parts.append(t)
        if not parts:
            return pd.DataFrame(columns=kc)
        return pd.concat(parts, ignore_index=True)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the segments (keys as text), each segment's receipt under "tiers" of
        its entry and all receipt rows (with their keys) under "tiers"."""

        def num(x: Any) -> Any:
            if isinstance(x, (float, np.floating)) and not math.isfinite(x):
                return "inf" if x > 0 else "-inf"
            if isinstance(x, np.integer):
                return int(x)
            if isinstance(x, np.floating):
                return float(x)
            return x

        segs = []
        rows = []
        for k, r, p in zip(self.keys, self.releases, self.present, strict=True):
            d = r.to_dict()
            kt = [key_text(x) for x in k]
            segs.append(
                {
                    "key": kt,
                    "present": p,
                    "users": r.n_users,
                    "n_excluded": r.n_excluded,
                    "n_public": r.n_public,
                    "estimate": r.estimate,
                    "ci95": list(r.ci95),
                    "half_width95": r.half_width95,
                    "noise_scale": r.noise_scale,
                    "saturation_level": num(r.saturation_level),
                    "bias_bound": r.bias_bound,
                    "outputs_midrange": r.outputs_midrange,
                    "plan": r.plan,
                    "notes": list(r.notes),
                    "receipt": d["tiers"],
                }
            )
            rows += [{"key": kt, **t} for t in d["tiers"]]
        return {
            "by": list(self.by),
            "target": self.target,
            "range": [self.lo, self.hi],
            "engine": self.engine,
            "segments": segs,
            "tiers": rows,
            "n_left_out": self.n_left_out,
            "users_left_out": self.users_left_out,
            "plan": self.plan,
            "notes": list(self.notes),
            "privacy_model": PRIVACY_MODEL,
            "spend": self.spend,
            "level_factor": self.level_factor,
            "dataset": self.dataset,
            "tracked": self.ledger_path is not None,
            "budget_remaining": self.budget_remaining,
            "recorded": self.recorded,
            "record_failure": self.record_failure,
            "id_column": self.id_column,
            "n_spent_segments": self.n_spent_segments,
            "people": None if self.people is None else _people_rows(self, num),
        }

    def text(self) -> str:
        """A plain-text report: one line per segment, the privacy model, the receipt."""
        import pandas as pd

        which = "tau*" if self.target == "population" else "cap level"
        lines = [
            f"a private mean per segment of {', '.join(self.by)}: {len(self.keys):,} segments, "
            f"target: {self.target}, range [{self.lo:g}, {self.hi:g}], engine: {self.engine}",
        ]
        if self.n_left_out:
            lines.append(
                f"left out: {self.n_left_out:,} segments present in the table but not in "
                f"keys= ({self.users_left_out:,} rows)"
            )
        if self.ledger_path is None:
            lines.append("privacy budget: not tracked (no ledger)")
        elif self.people is not None:
            lines.append(
                f"privacy budget: per person (id column {self.id_column!r}): each asked "
                f"{self.spend:.4g} of their level and was charged once, what they lost in their "
                "own segment (saturated persons keep the rest)"
            )
            if self.n_spent_segments:
                lines.append(
                    f"refused in {self.n_spent_segments:,} segments: every person there has "
                    "spent their level (the mid-range, from no data)"
                )
        else:
            left = "" if self.budget_remaining is None else f"; {self.budget_remaining:.4g} left"
            name = f" of dataset {self.dataset!r}" if self.dataset else ""
            lines.append(
                f"privacy budget: spent {self.spend:.4g} of every user's level{name}{left}, "
                "once for the whole release"
            )
        if self.recorded is False:
            lines.append("WARNING: " + not_recorded_note(self))  # type: ignore[arg-type]
        lines.append(PRIVACY_MODEL)
        lines += list(self.notes)
        f = self.to_frame()
        f = f.rename(columns={"saturation_level": which})
        with pd.option_context("display.width", 200, "display.max_rows", 200):
            lines.append(f.to_string(index=False))
            lines.append("privacy receipt per segment and level (loss = OpenDP's privacy map):")
            lines.append(self.receipt().to_string(index=False))
            if self.people is not None:
                lines.append(
                    "per-person budget per segment and level (nats): asked, run at, lost "
                    "(charged), kept for later releases:"
                )
                lines.append(self.people.to_string(index=False))
        return "\n".join(lines)


SPENT_NOTE = (
    "Every person of this segment has spent their level (per-person ledger): refused here; "
    "nothing of theirs was used or charged; the mid-range, from no data."
)


def _people_rows(g: GroupedRelease, num: Any) -> list[dict[str, Any]]:
    kc = key_columns(g.by)
    out = []
    for r in g.people.to_dict("records"):
        key = [key_text(r.pop(c)) for c in kc]
        out.append({"key": key, **{k: num(v) for k, v in r.items()}})
    return out


def with_people(out: GroupedRelease, people: Any, chosen: list, id_col: str) -> GroupedRelease:
    """``out`` with the per-person charge ``people`` (hdp_release.ledger.people.PeopleCharge
    of a release per segment; ``chosen``: (key, present, rows) per segment index): the
    receipt per segment and level under ``people`` (key columns first), each segment's tau*
    or cap that the charge used, and a segment whose persons had all spent their level marked
    refused (its note)."""
    pr = people.receipt.copy()
    seg = pr.pop("segment").to_numpy(dtype=np.int64)
    for i, c in reversed(list(enumerate(key_columns(out.by)))):
        pr.insert(0, c, [chosen[g][0][i] for g in seg])
    n = len(out.releases)
    tired = np.bincount(seg, weights=pr["exhausted"].to_numpy(float), minlength=n) > 0
    rels = list(out.releases)
    spent = 0
    for s, r in enumerate(rels):  # per segment: two fields of a frozen dataclass
        if r.n_users == 0 and bool(tired[s]):
            rels[s] = replace(r, notes=(SPENT_NOTE,))
            spent += 1
        elif r.n_users > 0 and s < len(people.caps):
            # the cap of the run levels, which the charge used; the segment ran on the levels
            # capped at it (the same tau*, up to the last bits of a float)
            rels[s] = replace(r, saturation_level=people.caps[s])
    return replace(out, releases=tuple(rels), people=pr, id_column=id_col, n_spent_segments=spent)
