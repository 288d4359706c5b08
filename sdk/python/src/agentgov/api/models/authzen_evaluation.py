from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.authzen_action import AuthzenAction
    from ..models.authzen_entity import AuthzenEntity
    from ..models.authzen_evaluation_context_type_0 import AuthzenEvaluationContextType0


T = TypeVar("T", bound="AuthzenEvaluation")


@_attrs_define
class AuthzenEvaluation:
    """One access evaluation (AuthZEN 1.0 § 6.1). Unknown members are ignored, as the
    specification requires.

        Attributes:
            action (AuthzenAction | None | Unset):
            context (AuthzenEvaluationContextType0 | None | Unset):
            resource (AuthzenEntity | None | Unset):
            subject (AuthzenEntity | None | Unset):
    """

    action: AuthzenAction | None | Unset = UNSET
    context: AuthzenEvaluationContextType0 | None | Unset = UNSET
    resource: AuthzenEntity | None | Unset = UNSET
    subject: AuthzenEntity | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.authzen_action import AuthzenAction
        from ..models.authzen_entity import AuthzenEntity
        from ..models.authzen_evaluation_context_type_0 import AuthzenEvaluationContextType0

        action: dict[str, Any] | None | Unset
        if isinstance(self.action, Unset):
            action = UNSET
        elif isinstance(self.action, AuthzenAction):
            action = self.action.to_dict()
        else:
            action = self.action

        context: dict[str, Any] | None | Unset
        if isinstance(self.context, Unset):
            context = UNSET
        elif isinstance(self.context, AuthzenEvaluationContextType0):
            context = self.context.to_dict()
        else:
            context = self.context

        resource: dict[str, Any] | None | Unset
        if isinstance(self.resource, Unset):
            resource = UNSET
        elif isinstance(self.resource, AuthzenEntity):
            resource = self.resource.to_dict()
        else:
            resource = self.resource

        subject: dict[str, Any] | None | Unset
        if isinstance(self.subject, Unset):
            subject = UNSET
        elif isinstance(self.subject, AuthzenEntity):
            subject = self.subject.to_dict()
        else:
            subject = self.subject

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if action is not UNSET:
            field_dict["action"] = action
        if context is not UNSET:
            field_dict["context"] = context
        if resource is not UNSET:
            field_dict["resource"] = resource
        if subject is not UNSET:
            field_dict["subject"] = subject

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.authzen_action import AuthzenAction
        from ..models.authzen_entity import AuthzenEntity
        from ..models.authzen_evaluation_context_type_0 import AuthzenEvaluationContextType0

        d = dict(src_dict)

        def _parse_action(data: object) -> AuthzenAction | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                action_type_0 = AuthzenAction.from_dict(data)

                return action_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AuthzenAction | None | Unset, data)

        action = _parse_action(d.pop("action", UNSET))

        def _parse_context(data: object) -> AuthzenEvaluationContextType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                context_type_0 = AuthzenEvaluationContextType0.from_dict(data)

                return context_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AuthzenEvaluationContextType0 | None | Unset, data)

        context = _parse_context(d.pop("context", UNSET))

        def _parse_resource(data: object) -> AuthzenEntity | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                resource_type_0 = AuthzenEntity.from_dict(data)

                return resource_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AuthzenEntity | None | Unset, data)

        resource = _parse_resource(d.pop("resource", UNSET))

        def _parse_subject(data: object) -> AuthzenEntity | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                subject_type_0 = AuthzenEntity.from_dict(data)

                return subject_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AuthzenEntity | None | Unset, data)

        subject = _parse_subject(d.pop("subject", UNSET))

        authzen_evaluation = cls(
            action=action,
            context=context,
            resource=resource,
            subject=subject,
        )

        authzen_evaluation.additional_properties = d
        return authzen_evaluation

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
