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
    from ..models.anomaly_eval import AnomalyEval


T = TypeVar("T", bound="AnomalyModelInfo")


@_attrs_define
class AnomalyModelInfo:
    """A trained version of a tenant's anomaly detector, as listed.

    Adapters keep `tenant_id`, `version` and `active` in columns and the rest as the JSON
    text of its `Serialize` form (which leaves out `tenant_id`; `active` is read from its
    column).

        Attributes:
            agents (int): Agents with a baseline of their own.
            labelled (AnomalyEval): How well a detector version separates anomalies from ordinary behaviour on one set.
            samples (int): Policy checks it was trained on.
            synthetic (AnomalyEval): How well a detector version separates anomalies from ordinary behaviour on one set.
            threshold (float): Scores at or above it are anomalies.
            threshold_source (str): How the threshold was chosen: `labelled` (from analysts' labels) or `contamination`.
            trained_at (datetime.datetime):
            version (int):
            task_id (None | Unset | UUID):
    """

    agents: int
    labelled: AnomalyEval
    samples: int
    synthetic: AnomalyEval
    threshold: float
    threshold_source: str
    trained_at: datetime.datetime
    version: int
    task_id: None | Unset | UUID = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        agents = self.agents

        labelled = self.labelled.to_dict()

        samples = self.samples

        synthetic = self.synthetic.to_dict()

        threshold = self.threshold

        threshold_source = self.threshold_source

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
                "agents": agents,
                "labelled": labelled,
                "samples": samples,
                "synthetic": synthetic,
                "threshold": threshold,
                "threshold_source": threshold_source,
                "trained_at": trained_at,
                "version": version,
            }
        )
        if task_id is not UNSET:
            field_dict["task_id"] = task_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.anomaly_eval import AnomalyEval

        d = dict(src_dict)
        agents = d.pop("agents")

        labelled = AnomalyEval.from_dict(d.pop("labelled"))

        samples = d.pop("samples")

        synthetic = AnomalyEval.from_dict(d.pop("synthetic"))

        threshold = d.pop("threshold")

        threshold_source = d.pop("threshold_source")

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

        anomaly_model_info = cls(
            agents=agents,
            labelled=labelled,
            samples=samples,
            synthetic=synthetic,
            threshold=threshold,
            threshold_source=threshold_source,
            trained_at=trained_at,
            version=version,
            task_id=task_id,
        )

        anomaly_model_info.additional_properties = d
        return anomaly_model_info

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
