from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.authzen_decision_context import AuthzenDecisionContext


T = TypeVar("T", bound="AuthzenDecision")


@_attrs_define
class AuthzenDecision:
    """A decision: `true` only when the action may go ahead now. `context` carries agentgov's
    facts: `decision_id`, `risk_score`, `risk`, `reason` (also as `reason_admin.en`),
    `required_approval` and `hitl_request_id`, or `error` for an item that could not be
    evaluated.

        Attributes:
            context (AuthzenDecisionContext):
            decision (bool):
    """

    context: AuthzenDecisionContext
    decision: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        context = self.context.to_dict()

        decision = self.decision

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "context": context,
                "decision": decision,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.authzen_decision_context import AuthzenDecisionContext

        d = dict(src_dict)
        context = AuthzenDecisionContext.from_dict(d.pop("context"))

        decision = d.pop("decision")

        authzen_decision = cls(
            context=context,
            decision=decision,
        )

        authzen_decision.additional_properties = d
        return authzen_decision

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
