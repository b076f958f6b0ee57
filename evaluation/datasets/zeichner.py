"""Zeichner et al. (2012): rule applications judged in context (`zeichner`)."""

from __future__ import annotations

from pathlib import Path

from evaluation.datasets.items import benchmark_lines, check_header, make_item, parse_label, triple_pair_item
from warehouse.errors import InputError


def split_rule_sentence(sentence: str, rule: str) -> tuple[str, str, str] | None:
    """`The museum be open from March` with rule `be open from` -> (The museum, be open from, March)."""
    s, r = f" {sentence.strip()} ", f" {rule.strip()} "
    at = s.find(r)
    if at < 0:
        return None
    left, right = s[:at].strip(), s[at + len(r) :].strip()
    return (left, rule.strip(), right) if left and right else None


def read_zeichner(path: Path, dataset: str = "zeichner", split: str = "all") -> list[dict]:
    """Zeichner et al. (2012): `rule_lhs rule_rhs lhs rhs judgment confidence`; `@R@` = reversed rhs."""
    items = []
    lines = iter(benchmark_lines(path))
    check_header(path, lines, ["rule_lhs", "rule_rhs", "lhs", "rhs", "judgment", "confidence"])
    for number, line in lines:
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 6:
            raise InputError(str(path), number, f"expected 6 tab-separated columns, got {len(parts)}")
        rule_lhs, rule_rhs, lhs, rhs, judgment, confidence = parts
        rhs_reversed = rule_rhs.endswith("@R@")
        prem = split_rule_sentence(lhs, rule_lhs)
        hypo = split_rule_sentence(rhs, rule_rhs.removesuffix("@R@"))
        extra = {"rule_lhs": rule_lhs, "rule_rhs": rule_rhs, "confidence": confidence}
        kw = dict(
            item_id=f"{path.stem}:{number}",
            dataset=dataset,
            split=split,
            line_number=number,
            label=parse_label(judgment, path, number),
        )
        if prem is None or hypo is None:
            items.append(
                make_item(
                    premise_text=lhs,
                    hypothesis_text=rhs,
                    premise_middle=rule_lhs,
                    hypothesis_middle=rule_rhs.removesuffix("@R@"),
                    extra=extra,
                    **kw,
                )
            )
            continue
        item = triple_pair_item(prem, hypo, extra=extra, **kw)
        item["extra"]["_parse"]["hypothesis"][3] = rhs_reversed  # "Y rule X": A is on the right
        items.append(item)
    return items
