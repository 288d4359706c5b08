from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.chain_fault import ChainFault
from ..types import UNSET, Unset

T = TypeVar("T", bound="ChainVerification")


@_attrs_define
class ChainVerification:
    """Outcome of `GET /audit/verify`.

    Attributes:
        checked (int): Records checked.
        head_hash (str):
        head_seq (int): The chain's head as stored: its last sequence number (0 when the log is empty) and
            hash. Record them elsewhere to detect a rewrite of the whole chain later.
        valid (bool):
        fault (ChainFault | None | Unset):
        first_invalid_seq (int | None | Unset): The first sequence number at which the chain breaks; `null` when valid.
    """

    checked: int
    head_hash: str
    head_seq: int
    valid: bool
    fault: ChainFault | None | Unset = UNSET
    first_invalid_seq: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        checked = self.checked

        head_hash = self.head_hash

        head_seq = self.head_seq

        valid = self.valid

        fault: None | str | Unset
        if isinstance(self.fault, Unset):
            fault = UNSET
        elif isinstance(self.fault, ChainFault):
            fault = self.fault.value
        else:
            fault = self.fault

        first_invalid_seq: int | None | Unset
        if isinstance(self.first_invalid_seq, Unset):
            first_invalid_seq = UNSET
        else:
            first_invalid_seq = self.first_invalid_seq

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "checked": checked,
                "head_hash": head_hash,
                "head_seq": head_seq,
                "valid": valid,
            }
        )
        if fault is not UNSET:
            field_dict["fault"] = fault
        if first_invalid_seq is not UNSET:
            field_dict["first_invalid_seq"] = first_invalid_seq

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        checked = d.pop("checked")

        head_hash = d.pop("head_hash")

        head_seq = d.pop("head_seq")

        valid = d.pop("valid")

        def _parse_fault(data: object) -> ChainFault | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                fault_type_0 = ChainFault(data)

                return fault_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ChainFault | None | Unset, data)

        fault = _parse_fault(d.pop("fault", UNSET))

        def _parse_first_invalid_seq(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        first_invalid_seq = _parse_first_invalid_seq(d.pop("first_invalid_seq", UNSET))

        chain_verification = cls(
            checked=checked,
            head_hash=head_hash,
            head_seq=head_seq,
            valid=valid,
            fault=fault,
            first_invalid_seq=first_invalid_seq,
        )

        chain_verification.additional_properties = d
        return chain_verification

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
