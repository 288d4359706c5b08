from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.replay_counts import ReplayCounts
    from ..models.replay_example import ReplayExample


T = TypeVar("T", bound="ReplayReport")


@_attrs_define
class ReplayReport:
    """What a replay found.

    Attributes:
        baseline (ReplayCounts): How often each outcome came out: a policy's own outcome on an input (`allow` when none
            of its rules applied).
        candidate (ReplayCounts): How often each outcome came out: a policy's own outcome on an input (`allow` when none
            of its rules applied).
        decisions (int): The decision records in the window (at most the replay's limit, oldest first).
        examples (list[ReplayExample]): Up to five decisions of each kind of change, oldest first.
        newly_allowed (int): Inputs the candidate allows that the baseline denied or gated.
        newly_approval_gated (int): Inputs the candidate gates behind an approval that the baseline allowed.
        newly_denied (int): Inputs the candidate denies (or fails on) that the baseline did not.
        replayed (int): Those replayed: recorded with their input.
        skipped (int): Those recorded before decisions kept their input: not replayed.
        truncated (bool): Whether the window held more decisions than a replay reads.
    """

    baseline: ReplayCounts
    candidate: ReplayCounts
    decisions: int
    examples: list[ReplayExample]
    newly_allowed: int
    newly_approval_gated: int
    newly_denied: int
    replayed: int
    skipped: int
    truncated: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        baseline = self.baseline.to_dict()

        candidate = self.candidate.to_dict()

        decisions = self.decisions

        examples = []
        for examples_item_data in self.examples:
            examples_item = examples_item_data.to_dict()
            examples.append(examples_item)

        newly_allowed = self.newly_allowed

        newly_approval_gated = self.newly_approval_gated

        newly_denied = self.newly_denied

        replayed = self.replayed

        skipped = self.skipped

        truncated = self.truncated

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "baseline": baseline,
                "candidate": candidate,
                "decisions": decisions,
                "examples": examples,
                "newly_allowed": newly_allowed,
                "newly_approval_gated": newly_approval_gated,
                "newly_denied": newly_denied,
                "replayed": replayed,
                "skipped": skipped,
                "truncated": truncated,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.replay_counts import ReplayCounts
        from ..models.replay_example import ReplayExample

        d = dict(src_dict)
        baseline = ReplayCounts.from_dict(d.pop("baseline"))

        candidate = ReplayCounts.from_dict(d.pop("candidate"))

        decisions = d.pop("decisions")

        examples = []
        _examples = d.pop("examples")
        for examples_item_data in _examples:
            examples_item = ReplayExample.from_dict(examples_item_data)

            examples.append(examples_item)

        newly_allowed = d.pop("newly_allowed")

        newly_approval_gated = d.pop("newly_approval_gated")

        newly_denied = d.pop("newly_denied")

        replayed = d.pop("replayed")

        skipped = d.pop("skipped")

        truncated = d.pop("truncated")

        replay_report = cls(
            baseline=baseline,
            candidate=candidate,
            decisions=decisions,
            examples=examples,
            newly_allowed=newly_allowed,
            newly_approval_gated=newly_approval_gated,
            newly_denied=newly_denied,
            replayed=replayed,
            skipped=skipped,
            truncated=truncated,
        )

        replay_report.additional_properties = d
        return replay_report

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
