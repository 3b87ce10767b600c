"""Every number a rule's text shows comes from its thresholds: change every threshold of every
shipped rule through a user rulebook that ``extends`` it, and every title, summary and message
template (every status) shows the new numbers and none of the old ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from geoconstraints.errors import RulebookError
from geoconstraints.rulebook.findings import STATUSES
from geoconstraints.rulebook.loader import available_rulebooks, load_rulebook
from geoconstraints.rulebook.model import Rule
from geoconstraints.rulebook.render import check_template, fields_of, fmt_num

NUMBER = re.compile(r"(?<![\w.,])(?<!\w-)(?<!§ )\d[\d,]*(?:\.\d+)?(?!-\d)")
"""A number as text shows it (``2,560``, ``0.5``), not a digit inside a name or a section number
(``A30``, ``RA-1``, ``HRV-010``, ``§ 6-137``, ``§ 44-VI-6``)."""
DATE = re.compile(r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December)"
                  r" \d{1,2}, \d{4}")


def numbers(text: str) -> set[str]:
    """The numbers in ``text``, as :func:`fmt_num` writes them, less subsection numbers like ``(2)``.

    >>> sorted(numbers("150 ft, 2,560 cu ft, 0.5 in; A1-A30, RA-1, HRV-010, § 6-137(2), § 44-VI-6, $1,000, June 1, 1977."))
    ['0.5', '1,000', '150', '2,560']
    """
    text = DATE.sub("", text)
    return {m.group().rstrip(",") for m in NUMBER.finditer(text)
            if not (text[m.start() - 1:m.start()] == "(" and text[m.end():m.end() + 1] == ")")}


def changed(old: float, taken: set[str]) -> float:
    """A new value for a threshold whose text differs from the old one and from every old text."""
    for new in (round(old * 1.37), round(old * 1.37, 2), round(old * 3.7, 2), old + 1, old + 7):
        if new > 0 and fmt_num(new) not in taken:
            return new
    raise AssertionError(f"no new value for {old}")


def _changed_rulebook(tmp_path: Path, name: str) -> tuple[dict[str, dict[str, float]], object]:
    base = load_rulebook(name)
    new: dict[str, dict[str, float]] = {}
    for rule in base:
        old_texts = {fmt_num(v) for v in rule.thresholds.values()}
        new[rule.id] = {k: changed(float(v), old_texts) for k, v in rule.thresholds.items()}
    path = tmp_path / f"changed-{name}.yaml"
    path.write_text(yaml.safe_dump({"extends": name, "rules": [{"id": rid, "thresholds": t} for rid, t in new.items()
                                                                if t]}), "utf-8")
    return new, load_rulebook(path)


def _texts(rule: Rule) -> dict[str, tuple[str, str]]:
    """(template, rendered text) of the title, the summary and the message of every status."""
    msgs = rule.findings(list(STATUSES), subject_layer="parcels", subject_id=["P"] * len(STATUSES), detail="d")
    out = {"title": (rule.title_template, rule.title), "summary": (rule.summary_template, rule.summary)}
    out.update({f"messages.{s}": (rule.template(s), m) for s, m in zip(STATUSES, msgs["message"])})
    for key, template in rule.phrases.items():  # the sentences a check puts into {detail}
        given = {n: "x" for n in fields_of(template) if n not in rule.names()}
        out[f"phrases.{key}"] = (template, rule.phrase(key, **given))
    for key, v in rule.params.items():  # checklists, exemptions, list items
        for i, e in enumerate(v if isinstance(v, list) else []):
            if isinstance(e, dict) and "text_template" in e:
                out[f"params.{key}[{i}].text"] = (e["text_template"], e["text"])
    return out


@pytest.mark.parametrize("name", available_rulebooks())
def test_changed_thresholds_change_every_text(tmp_path, name) -> None:
    base = load_rulebook(name)
    new, changed_rb = _changed_rulebook(tmp_path, name)
    for rule in changed_rb:
        old = base[rule.id]
        old_texts = {fmt_num(v) for v in old.thresholds.values()}
        assert {k: float(v) for k, v in rule.thresholds.items()} == new[rule.id]
        for key, (template, text) in _texts(rule).items():
            used = [n for _, n, _ in check_template(template, [*rule.names(), *fields_of(template), "subject_layer",
                                                               "subject_id", "measured", "threshold", "unit", "detail"],
                                                    where=key)
                    if n in rule.thresholds]
            shown = numbers(text)
            for n in used:
                assert fmt_num(new[rule.id][n]) in shown, (rule.id, key, n, text)
            stale = shown & old_texts
            assert not stale, f"{rule.id} {key} shows the old number(s) {sorted(stale)}: {text!r}"


def test_title_is_rendered_and_keeps_its_template() -> None:
    rb = load_rulebook("vestal")
    r = rb["HRV-025"]
    assert r.title == "Landings at least 150 ft from any public right-of-way"
    assert r.title_template == "Landings at least {min_distance_ft} ft from any public right-of-way"
    assert rb["FLD-004"].title == "No BFE on the FIRM: lowest floor 2 ft above highest adjacent grade"


def test_a_changed_threshold_renames_the_rule(tmp_path) -> None:
    p = tmp_path / "town.yaml"
    p.write_text("extends: vestal\nrules:\n  - id: HRV-025\n    thresholds:\n      min_distance_ft: 200\n", "utf-8")
    r = load_rulebook(p)["HRV-025"]
    assert r.title == "Landings at least 200 ft from any public right-of-way"
    assert "200 ft" in r.summary and "150" not in r.summary


def test_measured_is_written_only_where_a_message_prints_it() -> None:
    # pass does not print {measured}: its rows are never formatted; review does (by hand: 1,234.57 and 0.5)
    rule = Rule(id="ABC-001", title="t", group="flood", citation="c",
                messages={"review": "{subject_id}: {measured} acres ({detail}).", "pass": "{subject_id}: {detail}"})
    f = rule.findings(["review", "pass", "review", "pass"], subject_layer="parcels", subject_id=["a", "b", "c", "d"],
                      measured=[1234.5678, float("nan"), 0.5, 7.0], unit="acres", detail=["x", "", "y", "z  "])
    assert f["message"].tolist() == ["a: 1,234.57 acres (x).", "b:", "c: 0.5 acres (y).", "d: z"]
    assert f["measured"].tolist()[::2] == [1234.5678, 0.5]  # the numbers themselves are all kept
    assert rule.findings("pass", subject_id="e", measured=3.0, detail="w")["message"].tolist() == ["e: w"]


def test_messages_without_edge_whitespace_are_not_stripped_and_the_others_are() -> None:
    rule = Rule(id="ABC-002", title="t", group="flood", citation="c",
                messages={"pass": "parcels {subject_id}: ok.", "info": "{detail}", "review": " {subject_id} x"})
    f = rule.findings(["pass", "info", "info", "review"], subject_id=["P 1", "P2", "P3", "P4"],
                      detail=["", "  two ", "", ""])
    assert f["message"].tolist() == ["parcels P 1: ok.", "two", "", "P4 x"]


# ------------------------------------------------------------------------------------------
# phrases: the sentences a check puts into {detail}, the rulebook's words with the check's values

def test_every_shipped_phrase_is_one_a_check_writes_and_uses_names_it_has() -> None:
    for name in available_rulebooks():
        for rule in load_rulebook(name):
            for key, template in rule.phrases.items():
                # a phrase with its check's fields given renders; without them it names the one missing
                extra = sorted(fields_of(template) - set(rule.names()))
                assert rule.phrase(key, **dict.fromkeys(extra, "x"))
                if extra:
                    with pytest.raises(RulebookError, match=rf"rule {rule.id} phrases.{key}: field \{{{extra[0]}\}}"):
                        rule.phrase(key)
    assert load_rulebook("vestal")["HRV-025"].phrases["point_pad"].startswith("the landing is a point")


def test_a_user_rulebook_rewords_a_phrase_and_the_finding_says_it(tmp_path) -> None:
    p = tmp_path / "town.yaml"
    p.write_text("extends: vestal\nrules:\n  - id: HRV-025\n    thresholds: {point_landing_radius_ft: 90}\n"
                 "    phrases:\n      point_pad: \"a point landing: its log deck may reach {point_landing_radius_ft} ft "
                 "nearer than {min_distance_ft} ft; draw it\"\n", "utf-8")
    r = load_rulebook(p)["HRV-025"]
    assert r.phrase("point_pad") == "a point landing: its log deck may reach 90 ft nearer than 150 ft; draw it"
    # the other phrases stay the shipped ones (merged key by key, as messages are)
    assert load_rulebook(p)["HRV-024"].phrases == load_rulebook("vestal")["HRV-024"].phrases


@pytest.mark.parametrize("phrase, why", [
    ('"its pad reaches {pad_ft}"', (r"rule HRV-025 phrases.point_pad: field \{pad_ft\} is not a name this template "
                                   r"may use; use .*\{min_distance_ft\}")),
    ('"its pad {into.__class__}"', r"rule HRV-025 phrases.point_pad: field \{into.__class__\} is not a plain name"),
])
def test_a_phrase_with_a_field_no_check_gives_is_refused_when_the_rulebook_loads(tmp_path, phrase, why) -> None:
    p = tmp_path / "town.yaml"
    p.write_text(f"extends: vestal\nrules:\n  - id: HRV-025\n    phrases:\n      point_pad: {phrase}\n", "utf-8")
    with pytest.raises(RulebookError, match=why):
        load_rulebook(p)


def test_a_phrase_the_toolkit_does_not_write_is_refused(tmp_path) -> None:
    p = tmp_path / "town.yaml"
    p.write_text("extends: vestal\nrules:\n  - id: HRV-025\n    phrases:\n      pad_note: \"x\"\n", "utf-8")
    with pytest.raises(RulebookError, match="rule HRV-025 phrases.pad_note: not a phrase the toolkit writes for "
                                            "HRV-025; its phrases are empty_layer, exact_row, nearest_centre_line, "
                                            "nearest_default_width, nearest_row, no_layer, no_roads_layer, "
                                            "no_roads_or_row, point_pad, width_unknown"):
        load_rulebook(p)
    p.write_text("extends: vestal\nrules:\n  - id: HRV-025\n    phrases:\n      point-pad: \"x\"\n", "utf-8")
    with pytest.raises(RulebookError, match="phrases"):
        load_rulebook(p)


def test_a_rulebook_extending_none_gets_the_shipped_phrases(tmp_path) -> None:
    shipped = load_rulebook("vestal")["HRV-025"]
    d = {k: v for k, v in shipped.to_dict().items() if k in ("id", "title", "group", "citation", "summary",
                                                            "thresholds")}
    d["messages"] = {"default": "{detail}"}
    p = tmp_path / "alone.yaml"
    p.write_text(yaml.safe_dump({"rulebook": "alone", "rules": [d]}), "utf-8")
    r = load_rulebook(p)["HRV-025"]
    assert r.phrases == shipped.phrases and r.phrase("point_pad").startswith("the landing is a point")
