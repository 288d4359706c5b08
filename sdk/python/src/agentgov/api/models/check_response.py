from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.risk_level import RiskLevel
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.check_risk_factor import CheckRiskFactor
    from ..models.matched_policy import MatchedPolicy


T = TypeVar("T", bound="CheckResponse")


@_attrs_define
class CheckResponse:
    """`POST /policies/check` (spec 2.5 and more).

    Attributes:
        allowed (bool): Whether the action may go ahead now: no policy denied it and no approval is needed.
        anomaly (bool): Whether the action looks unusual for the agent.
        labels (list[str]): The labels the policies raised for this action (their `labels` rules), sorted; the
            check's session keeps them (docs/policies.md "Sessions").
        matched_policies (list[MatchedPolicy]):
        policies_evaluated (int): How many enabled policies were evaluated.
        reason (str):
        required_approval (bool): A person must approve the action first (a policy asked, or the risk is at or above
            the approval threshold); `false` when it is denied.
        risk (RiskLevel): A risk level: by default `low` (< 0.3), `medium` (< 0.6), `high` (< 0.85), `critical`;
            a tenant may move the bounds ([`RiskLevels`]).
        risk_factors (list[CheckRiskFactor]):
        risk_score (float): From 0 to 1, after the policies' adjustments.
        approved_by_request (None | Unset | UUID):
        decision_id (None | Unset | UUID):
        hitl_request_id (None | Unset | UUID):
    """

    allowed: bool
    anomaly: bool
    labels: list[str]
    matched_policies: list[MatchedPolicy]
    policies_evaluated: int
    reason: str
    required_approval: bool
    risk: RiskLevel
    risk_factors: list[CheckRiskFactor]
    risk_score: float
    approved_by_request: None | Unset | UUID = UNSET
    decision_id: None | Unset | UUID = UNSET
    hitl_request_id: None | Unset | UUID = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        allowed = self.allowed

        anomaly = self.anomaly

        labels = self.labels

        matched_policies = []
        for matched_policies_item_data in self.matched_policies:
            matched_policies_item = matched_policies_item_data.to_dict()
            matched_policies.append(matched_policies_item)

        policies_evaluated = self.policies_evaluated

        reason = self.reason

        required_approval = self.required_approval

        risk = self.risk.value

        risk_factors = []
        for risk_factors_item_data in self.risk_factors:
            risk_factors_item = risk_factors_item_data.to_dict()
            risk_factors.append(risk_factors_item)

        risk_score = self.risk_score

        approved_by_request: None | str | Unset
        if isinstance(self.approved_by_request, Unset):
            approved_by_request = UNSET
        elif isinstance(self.approved_by_request, UUID):
            approved_by_request = str(self.approved_by_request)
        else:
            approved_by_request = self.approved_by_request

        decision_id: None | str | Unset
        if isinstance(self.decision_id, Unset):
            decision_id = UNSET
        elif isinstance(self.decision_id, UUID):
            decision_id = str(self.decision_id)
        else:
            decision_id = self.decision_id

        hitl_request_id: None | str | Unset
        if isinstance(self.hitl_request_id, Unset):
            hitl_request_id = UNSET
        elif isinstance(self.hitl_request_id, UUID):
            hitl_request_id = str(self.hitl_request_id)
        else:
            hitl_request_id = self.hitl_request_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "allowed": allowed,
                "anomaly": anomaly,
                "labels": labels,
                "matched_policies": matched_policies,
                "policies_evaluated": policies_evaluated,
                "reason": reason,
                "required_approval": required_approval,
                "risk": risk,
                "risk_factors": risk_factors,
                "risk_score": risk_score,
            }
        )
        if approved_by_request is not UNSET:
            field_dict["approved_by_request"] = approved_by_request
        if decision_id is not UNSET:
            field_dict["decision_id"] = decision_id
        if hitl_request_id is not UNSET:
            field_dict["hitl_request_id"] = hitl_request_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.check_risk_factor import CheckRiskFactor
        from ..models.matched_policy import MatchedPolicy

        d = dict(src_dict)
        allowed = d.pop("allowed")

        anomaly = d.pop("anomaly")

        labels = cast(list[str], d.pop("labels"))

        matched_policies = []
        _matched_policies = d.pop("matched_policies")
        for matched_policies_item_data in _matched_policies:
            matched_policies_item = MatchedPolicy.from_dict(matched_policies_item_data)

            matched_policies.append(matched_policies_item)

        policies_evaluated = d.pop("policies_evaluated")

        reason = d.pop("reason")

        required_approval = d.pop("required_approval")

        risk = RiskLevel(d.pop("risk"))

        risk_factors = []
        _risk_factors = d.pop("risk_factors")
        for risk_factors_item_data in _risk_factors:
            risk_factors_item = CheckRiskFactor.from_dict(risk_factors_item_data)

            risk_factors.append(risk_factors_item)

        risk_score = d.pop("risk_score")

        def _parse_approved_by_request(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                approved_by_request_type_0 = UUID(data)

                return approved_by_request_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        approved_by_request = _parse_approved_by_request(d.pop("approved_by_request", UNSET))

        def _parse_decision_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                decision_id_type_0 = UUID(data)

                return decision_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        decision_id = _parse_decision_id(d.pop("decision_id", UNSET))

        def _parse_hitl_request_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                hitl_request_id_type_0 = UUID(data)

                return hitl_request_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        hitl_request_id = _parse_hitl_request_id(d.pop("hitl_request_id", UNSET))

        check_response = cls(
            allowed=allowed,
            anomaly=anomaly,
            labels=labels,
            matched_policies=matched_policies,
            policies_evaluated=policies_evaluated,
            reason=reason,
            required_approval=required_approval,
            risk=risk,
            risk_factors=risk_factors,
            risk_score=risk_score,
            approved_by_request=approved_by_request,
            decision_id=decision_id,
            hitl_request_id=hitl_request_id,
        )

        check_response.additional_properties = d
        return check_response

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
