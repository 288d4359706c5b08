from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.guard_metrics import GuardMetrics


T = TypeVar("T", bound="GuardModelInfo")


@_attrs_define
class GuardModelInfo:
    """A trained model version of a tenant (without its weights).

    Attributes:
        active (bool): Whether validation uses this version now.
        examples (int): Examples the model was fitted on (not held out).
        metrics (GuardMetrics): How a model did on the held-out split of its training data, at its threshold.
        tenant_examples (int): Of those, how many came from the tenant's feedback and the request.
        threshold (float):
        trained_at (datetime.datetime):
        version (int): 1, 2, 3… per tenant; 0 is the built-in default, which is never stored.
        task_id (None | Unset | UUID):
    """

    active: bool
    examples: int
    metrics: GuardMetrics
    tenant_examples: int
    threshold: float
    trained_at: datetime.datetime
    version: int
    task_id: None | Unset | UUID = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        active = self.active

        examples = self.examples

        metrics = self.metrics.to_dict()

        tenant_examples = self.tenant_examples

        threshold = self.threshold

        trained_at = self.trained_at.isoformat()

        version = self.version

        task_id: None | str | Unset
        if isinstance(self.task_id, Unset):
            task_id = UNSET
        elif isinstance(self.task_id, UUID):
            task_id = str(self.task_id)
        else:
            task_id = self.task_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "active": active,
                "examples": examples,
                "metrics": metrics,
                "tenant_examples": tenant_examples,
                "threshold": threshold,
                "trained_at": trained_at,
                "version": version,
            }
        )
        if task_id is not UNSET:
            field_dict["task_id"] = task_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.guard_metrics import GuardMetrics

        d = dict(src_dict)
        active = d.pop("active")

        examples = d.pop("examples")

        metrics = GuardMetrics.from_dict(d.pop("metrics"))

        tenant_examples = d.pop("tenant_examples")

        threshold = d.pop("threshold")

        trained_at = isoparse(d.pop("trained_at"))

        version = d.pop("version")

        def _parse_task_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                task_id_type_0 = UUID(data)

                return task_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        task_id = _parse_task_id(d.pop("task_id", UNSET))

        guard_model_info = cls(
            active=active,
            examples=examples,
            metrics=metrics,
            tenant_examples=tenant_examples,
            threshold=threshold,
            trained_at=trained_at,
            version=version,
            task_id=task_id,
        )

        guard_model_info.additional_properties = d
        return guard_model_info

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
