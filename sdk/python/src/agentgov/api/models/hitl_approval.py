from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.hitl_approval_context_type_0 import HitlApprovalContextType0


T = TypeVar("T", bound="HitlApproval")


@_attrs_define
class HitlApproval:
    """The optional body of `POST /hitl/approve/{id}`.

    Attributes:
        comment (None | str | Unset): At most 2,000 characters.
        context (HitlApprovalContextType0 | None | Unset): Approve an edited action: the context (the arguments) the
            agent must act with
            instead, at most 16 KiB. It is checked again under the tenant's policies first (a
            denial wins: 409, the request stays pending), and the approval token is bound to it.
    """

    comment: None | str | Unset = UNSET
    context: HitlApprovalContextType0 | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.hitl_approval_context_type_0 import HitlApprovalContextType0

        comment: None | str | Unset
        if isinstance(self.comment, Unset):
            comment = UNSET
        else:
            comment = self.comment

        context: dict[str, Any] | None | Unset
        if isinstance(self.context, Unset):
            context = UNSET
        elif isinstance(self.context, HitlApprovalContextType0):
            context = self.context.to_dict()
        else:
            context = self.context

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if comment is not UNSET:
            field_dict["comment"] = comment
        if context is not UNSET:
            field_dict["context"] = context

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.hitl_approval_context_type_0 import HitlApprovalContextType0

        d = dict(src_dict)

        def _parse_comment(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        comment = _parse_comment(d.pop("comment", UNSET))

        def _parse_context(data: object) -> HitlApprovalContextType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                context_type_0 = HitlApprovalContextType0.from_dict(data)

                return context_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(HitlApprovalContextType0 | None | Unset, data)

        context = _parse_context(d.pop("context", UNSET))

        hitl_approval = cls(
            comment=comment,
            context=context,
        )

        return hitl_approval
