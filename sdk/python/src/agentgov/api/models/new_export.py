from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..models.export_format import ExportFormat
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.audit_filter_params import AuditFilterParams


T = TypeVar("T", bound="NewExport")


@_attrs_define
class NewExport:
    """`POST /audit/export/async`.

    Attributes:
        format_ (ExportFormat): File formats of an export.
        filters (AuditFilterParams | Unset): The filters of `GET /audit` and the exports, as sent (validated by the
            service).
    """

    format_: ExportFormat
    filters: AuditFilterParams | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        format_ = self.format_.value

        filters: dict[str, Any] | Unset = UNSET
        if not isinstance(self.filters, Unset):
            filters = self.filters.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "format": format_,
            }
        )
        if filters is not UNSET:
            field_dict["filters"] = filters

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.audit_filter_params import AuditFilterParams

        d = dict(src_dict)
        format_ = ExportFormat(d.pop("format"))

        _filters = d.pop("filters", UNSET)
        filters: AuditFilterParams | Unset
        if isinstance(_filters, Unset):
            filters = UNSET
        else:
            filters = AuditFilterParams.from_dict(_filters)

        new_export = cls(
            format_=format_,
            filters=filters,
        )

        return new_export
