from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.embedding_model import EmbeddingModel
    from ..models.search_hit import SearchHit


T = TypeVar("T", bound="SearchResults")


@_attrs_define
class SearchResults:
    """`GET /agents/search`.

    Attributes:
        items (list[SearchHit]): Best first.
        model (EmbeddingModel): Which model made a vector: vectors of different models are never compared.
    """

    items: list[SearchHit]
    model: EmbeddingModel
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)

        model = self.model.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "items": items,
                "model": model,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.embedding_model import EmbeddingModel
        from ..models.search_hit import SearchHit

        d = dict(src_dict)
        items = []
        _items = d.pop("items")
        for items_item_data in _items:
            items_item = SearchHit.from_dict(items_item_data)

            items.append(items_item)

        model = EmbeddingModel.from_dict(d.pop("model"))

        search_results = cls(
            items=items,
            model=model,
        )

        search_results.additional_properties = d
        return search_results

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
