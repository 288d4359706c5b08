from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.session_decisions import SessionDecisions
    from ..models.session_rate import SessionRate
    from ..models.session_view_actions import SessionViewActions


T = TypeVar("T", bound="SessionView")


@_attrs_define
class SessionView:
    """An agent session as its checks see it (`input.session`) and `GET /sessions/{id}`
    answers it: what happened before the current check.

        Attributes:
            actions (SessionViewActions): Checks per action (past 128 distinct actions, the rest under `*`).
            approvals (int): Approval requests of the session that were approved.
            checks (int): Recorded checks (dry runs are not recorded).
            decisions (SessionDecisions): Decisions of a session, by outcome.
            events (int): Records of the session: checks, observations, approvals.
            id (str):
            instructed (int): Values (e-mail addresses, IBANs, web hosts) that untrusted content shown to the agent
                told it to use, and that trusted content did not name: how many the session keeps,
                as digests. A check's `input.session.instructed_values` lists those its own
                arguments carry.
            labels (list[str]): Labels raised so far (by policies' `labels` rules and by observations), sorted.
            observations (int): Tool results and other content shown to the agent (`POST /sessions/{id}/observe`).
            rate (SessionRate): Checks of a session in the last minute and hour (counted up to 256).
            sensitivity (int): High-water mark of the data read: 0 none, 1 internal, 2 personal or confidential,
                3 secret.
            spend (float): The sum of the allowed checks' `context.cost`.
            last_at (datetime.datetime | None | Unset):
            started_at (datetime.datetime | None | Unset): The first record of the session; `null` for a session with none
                yet.
    """

    actions: SessionViewActions
    approvals: int
    checks: int
    decisions: SessionDecisions
    events: int
    id: str
    instructed: int
    labels: list[str]
    observations: int
    rate: SessionRate
    sensitivity: int
    spend: float
    last_at: datetime.datetime | None | Unset = UNSET
    started_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        actions = self.actions.to_dict()

        approvals = self.approvals

        checks = self.checks

        decisions = self.decisions.to_dict()

        events = self.events

        id = self.id

        instructed = self.instructed

        labels = self.labels

        observations = self.observations

        rate = self.rate.to_dict()

        sensitivity = self.sensitivity

        spend = self.spend

        last_at: None | str | Unset
        if isinstance(self.last_at, Unset):
            last_at = UNSET
        elif isinstance(self.last_at, datetime.datetime):
            last_at = self.last_at.isoformat()
        else:
            last_at = self.last_at

        started_at: None | str | Unset
        if isinstance(self.started_at, Unset):
            started_at = UNSET
        elif isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "actions": actions,
                "approvals": approvals,
                "checks": checks,
                "decisions": decisions,
                "events": events,
                "id": id,
                "instructed": instructed,
                "labels": labels,
                "observations": observations,
                "rate": rate,
                "sensitivity": sensitivity,
                "spend": spend,
            }
        )
        if last_at is not UNSET:
            field_dict["last_at"] = last_at
        if started_at is not UNSET:
            field_dict["started_at"] = started_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.session_decisions import SessionDecisions
        from ..models.session_rate import SessionRate
        from ..models.session_view_actions import SessionViewActions

        d = dict(src_dict)
        actions = SessionViewActions.from_dict(d.pop("actions"))

        approvals = d.pop("approvals")

        checks = d.pop("checks")

        decisions = SessionDecisions.from_dict(d.pop("decisions"))

        events = d.pop("events")

        id = d.pop("id")

        instructed = d.pop("instructed")

        labels = cast(list[str], d.pop("labels"))

        observations = d.pop("observations")

        rate = SessionRate.from_dict(d.pop("rate"))

        sensitivity = d.pop("sensitivity")

        spend = d.pop("spend")

        def _parse_last_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_at_type_0 = isoparse(data)

                return last_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        last_at = _parse_last_at(d.pop("last_at", UNSET))

        def _parse_started_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = isoparse(data)

                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        started_at = _parse_started_at(d.pop("started_at", UNSET))

        session_view = cls(
            actions=actions,
            approvals=approvals,
            checks=checks,
            decisions=decisions,
            events=events,
            id=id,
            instructed=instructed,
            labels=labels,
            observations=observations,
            rate=rate,
            sensitivity=sensitivity,
            spend=spend,
            last_at=last_at,
            started_at=started_at,
        )

        session_view.additional_properties = d
        return session_view

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
