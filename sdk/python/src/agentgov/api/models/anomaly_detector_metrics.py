from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.anomaly_eval import AnomalyEval


T = TypeVar("T", bound="AnomalyDetectorMetrics")


@_attrs_define
class AnomalyDetectorMetrics:
    """`GET /anomalies/detector/metrics`.

    Attributes:
        synthetic (AnomalyEval): How well a detector version separates anomalies from ordinary behaviour on one set.
        version (int): The active version; 0 when off (the synthetic figures are then those a training
            reaches with the default options).
        labelled (AnomalyEval | None | Unset):
    """

    synthetic: AnomalyEval
    version: int
    labelled: AnomalyEval | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.anomaly_eval import AnomalyEval

        synthetic = self.synthetic.to_dict()

        version = self.version

        labelled: dict[str, Any] | None | Unset
        if isinstance(self.labelled, Unset):
            labelled = UNSET
        elif isinstance(self.labelled, AnomalyEval):
            labelled = self.labelled.to_dict()
        else:
            labelled = self.labelled

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "synthetic": synthetic,
                "version": version,
            }
        )
        if labelled is not UNSET:
            field_dict["labelled"] = labelled

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.anomaly_eval import AnomalyEval

        d = dict(src_dict)
        synthetic = AnomalyEval.from_dict(d.pop("synthetic"))

        version = d.pop("version")

        def _parse_labelled(data: object) -> AnomalyEval | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                labelled_type_0 = AnomalyEval.from_dict(data)

                return labelled_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AnomalyEval | None | Unset, data)

        labelled = _parse_labelled(d.pop("labelled", UNSET))

        anomaly_detector_metrics = cls(
            synthetic=synthetic,
            version=version,
            labelled=labelled,
        )

        anomaly_detector_metrics.additional_properties = d
        return anomaly_detector_metrics

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
