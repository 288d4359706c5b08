from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.policy_mode import PolicyMode

if TYPE_CHECKING:
    from ..models.shadow_example import ShadowExample
    from ..models.shadow_reason import ShadowReason


T = TypeVar("T", bound="ShadowReport")


@_attrs_define
class ShadowReport:
    """`GET /policies/{id}/shadow-report`: what a policy would have done, to decide whether to
    enforce it.

        Attributes:
            decisions (int):
            examples (list[ShadowExample]): The newest decisions it would have changed (at most 5).
            from_ (datetime.datetime): The decisions read: recorded checks from the later of the window's start and the
                policy's last change (when it took its present version and mode), to now.
            mode (PolicyMode): How a policy takes part in checks.
            policy_id (UUID): A Rego policy of one tenant.
            to (datetime.datetime):
            top_reasons (list[ShadowReason]): The policy's messages by count, most frequent first (at most 10).
            truncated (bool): Whether more decisions were in the window than a report reads (50,000, newest first).
            version (int):
            would_deny (int):
            would_deny_rate (float): `would_deny` ÷ `decisions` (0 without decisions).
            would_error (int):
            would_require_approval (int):
            would_require_approval_rate (float):
    """

    decisions: int
    examples: list[ShadowExample]
    from_: datetime.datetime
    mode: PolicyMode
    policy_id: UUID
    to: datetime.datetime
    top_reasons: list[ShadowReason]
    truncated: bool
    version: int
    would_deny: int
    would_deny_rate: float
    would_error: int
    would_require_approval: int
    would_require_approval_rate: float
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        decisions = self.decisions

        examples = []
        for examples_item_data in self.examples:
            examples_item = examples_item_data.to_dict()
            examples.append(examples_item)

        from_ = self.from_.isoformat()

        mode = self.mode.value

        policy_id = str(self.policy_id)

        to = self.to.isoformat()

        top_reasons = []
        for top_reasons_item_data in self.top_reasons:
            top_reasons_item = top_reasons_item_data.to_dict()
            top_reasons.append(top_reasons_item)

        truncated = self.truncated

        version = self.version

        would_deny = self.would_deny

        would_deny_rate = self.would_deny_rate

        would_error = self.would_error

        would_require_approval = self.would_require_approval

        would_require_approval_rate = self.would_require_approval_rate

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "decisions": decisions,
                "examples": examples,
                "from": from_,
                "mode": mode,
                "policy_id": policy_id,
                "to": to,
                "top_reasons": top_reasons,
                "truncated": truncated,
                "version": version,
                "would_deny": would_deny,
                "would_deny_rate": would_deny_rate,
                "would_error": would_error,
                "would_require_approval": would_require_approval,
                "would_require_approval_rate": would_require_approval_rate,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.shadow_example import ShadowExample
        from ..models.shadow_reason import ShadowReason

        d = dict(src_dict)
        decisions = d.pop("decisions")

        examples = []
        _examples = d.pop("examples")
        for examples_item_data in _examples:
            examples_item = ShadowExample.from_dict(examples_item_data)

            examples.append(examples_item)

        from_ = isoparse(d.pop("from"))

        mode = PolicyMode(d.pop("mode"))

        policy_id = UUID(d.pop("policy_id"))

        to = isoparse(d.pop("to"))

        top_reasons = []
        _top_reasons = d.pop("top_reasons")
        for top_reasons_item_data in _top_reasons:
            top_reasons_item = ShadowReason.from_dict(top_reasons_item_data)

            top_reasons.append(top_reasons_item)

        truncated = d.pop("truncated")

        version = d.pop("version")

        would_deny = d.pop("would_deny")

        would_deny_rate = d.pop("would_deny_rate")

        would_error = d.pop("would_error")

        would_require_approval = d.pop("would_require_approval")

        would_require_approval_rate = d.pop("would_require_approval_rate")

        shadow_report = cls(
            decisions=decisions,
            examples=examples,
            from_=from_,
            mode=mode,
            policy_id=policy_id,
            to=to,
            top_reasons=top_reasons,
            truncated=truncated,
            version=version,
            would_deny=would_deny,
            would_deny_rate=would_deny_rate,
            would_error=would_error,
            would_require_approval=would_require_approval,
            would_require_approval_rate=would_require_approval_rate,
        )

        shadow_report.additional_properties = d
        return shadow_report

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
