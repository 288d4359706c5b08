from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.guard_example import GuardExample


T = TypeVar("T", bound="TrainRequest")


@_attrs_define
class TrainRequest:
    """`POST /guard/detector/train` (JSON form): labelled examples to learn from besides the
    built-in corpus and the tenant's feedback.

        Attributes:
            examples (list[GuardExample] | Unset): At most 10,000, each text at most 16 KiB.
    """

    examples: list[GuardExample] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        examples: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.examples, Unset):
            examples = []
            for examples_item_data in self.examples:
                examples_item = examples_item_data.to_dict()
                examples.append(examples_item)

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if examples is not UNSET:
            field_dict["examples"] = examples

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.guard_example import GuardExample

        d = dict(src_dict)
        _examples = d.pop("examples", UNSET)
        examples: list[GuardExample] | Unset = UNSET
        if _examples is not UNSET:
            examples = []
            for examples_item_data in _examples:
                examples_item = GuardExample.from_dict(examples_item_data)

                examples.append(examples_item)

        train_request = cls(
            examples=examples,
        )

        return train_request
