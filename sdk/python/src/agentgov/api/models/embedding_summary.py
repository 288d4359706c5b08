from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

if TYPE_CHECKING:
    from ..models.neighbour import Neighbour


T = TypeVar("T", bound="EmbeddingSummary")


@_attrs_define
class EmbeddingSummary:
    """What an agent's embedding is made of.

    Attributes:
        dimensions (int):
        model (str):
        model_version (int):
        neighbours (list[Neighbour]): The nearest other agents of the tenant, best first.
        refreshed_at (datetime.datetime):
        text (str): The text that was embedded.
    """

    dimensions: int
    model: str
    model_version: int
    neighbours: list[Neighbour]
    refreshed_at: datetime.datetime
    text: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        dimensions = self.dimensions

        model = self.model

        model_version = self.model_version

        neighbours = []
        for neighbours_item_data in self.neighbours:
            neighbours_item = neighbours_item_data.to_dict()
            neighbours.append(neighbours_item)

        refreshed_at = self.refreshed_at.isoformat()

        text = self.text

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "dimensions": dimensions,
                "model": model,
                "model_version": model_version,
                "neighbours": neighbours,
                "refreshed_at": refreshed_at,
                "text": text,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.neighbour import Neighbour

        d = dict(src_dict)
        dimensions = d.pop("dimensions")

        model = d.pop("model")

        model_version = d.pop("model_version")

        neighbours = []
        _neighbours = d.pop("neighbours")
        for neighbours_item_data in _neighbours:
            neighbours_item = Neighbour.from_dict(neighbours_item_data)

            neighbours.append(neighbours_item)

        refreshed_at = isoparse(d.pop("refreshed_at"))

        text = d.pop("text")

        embedding_summary = cls(
            dimensions=dimensions,
            model=model,
            model_version=model_version,
            neighbours=neighbours,
            refreshed_at=refreshed_at,
            text=text,
        )

        embedding_summary.additional_properties = d
        return embedding_summary

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
