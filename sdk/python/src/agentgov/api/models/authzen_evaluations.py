from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.authzen_action import AuthzenAction
    from ..models.authzen_entity import AuthzenEntity
    from ..models.authzen_evaluation import AuthzenEvaluation
    from ..models.authzen_evaluations_context_type_0 import AuthzenEvaluationsContextType0
    from ..models.authzen_options import AuthzenOptions


T = TypeVar("T", bound="AuthzenEvaluations")


@_attrs_define
class AuthzenEvaluations:
    """A batch (AuthZEN 1.0 § 7.1): the top-level `subject`, `action`, `resource` and `context`
    are the defaults of each item of `evaluations`, which may replace any of them.

        Attributes:
            action (AuthzenAction | None | Unset):
            context (AuthzenEvaluationsContextType0 | None | Unset):
            evaluations (list[AuthzenEvaluation] | None | Unset): At most 100. Absent or empty: the request is one
                evaluation and the answer one
                decision.
            options (AuthzenOptions | None | Unset):
            resource (AuthzenEntity | None | Unset):
            subject (AuthzenEntity | None | Unset):
    """

    action: AuthzenAction | None | Unset = UNSET
    context: AuthzenEvaluationsContextType0 | None | Unset = UNSET
    evaluations: list[AuthzenEvaluation] | None | Unset = UNSET
    options: AuthzenOptions | None | Unset = UNSET
    resource: AuthzenEntity | None | Unset = UNSET
    subject: AuthzenEntity | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.authzen_action import AuthzenAction
        from ..models.authzen_entity import AuthzenEntity
        from ..models.authzen_evaluations_context_type_0 import AuthzenEvaluationsContextType0
        from ..models.authzen_options import AuthzenOptions

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
        elif isinstance(self.context, AuthzenEvaluationsContextType0):
            context = self.context.to_dict()
        else:
            context = self.context

        evaluations: list[dict[str, Any]] | None | Unset
        if isinstance(self.evaluations, Unset):
            evaluations = UNSET
        elif isinstance(self.evaluations, list):
            evaluations = []
            for evaluations_type_0_item_data in self.evaluations:
                evaluations_type_0_item = evaluations_type_0_item_data.to_dict()
                evaluations.append(evaluations_type_0_item)

        else:
            evaluations = self.evaluations

        options: dict[str, Any] | None | Unset
        if isinstance(self.options, Unset):
            options = UNSET
        elif isinstance(self.options, AuthzenOptions):
            options = self.options.to_dict()
        else:
            options = self.options

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
        if evaluations is not UNSET:
            field_dict["evaluations"] = evaluations
        if options is not UNSET:
            field_dict["options"] = options
        if resource is not UNSET:
            field_dict["resource"] = resource
        if subject is not UNSET:
            field_dict["subject"] = subject

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.authzen_action import AuthzenAction
        from ..models.authzen_entity import AuthzenEntity
        from ..models.authzen_evaluation import AuthzenEvaluation
        from ..models.authzen_evaluations_context_type_0 import AuthzenEvaluationsContextType0
        from ..models.authzen_options import AuthzenOptions

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

        def _parse_context(data: object) -> AuthzenEvaluationsContextType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                context_type_0 = AuthzenEvaluationsContextType0.from_dict(data)

                return context_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AuthzenEvaluationsContextType0 | None | Unset, data)

        context = _parse_context(d.pop("context", UNSET))

        def _parse_evaluations(data: object) -> list[AuthzenEvaluation] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                evaluations_type_0 = []
                _evaluations_type_0 = data
                for evaluations_type_0_item_data in _evaluations_type_0:
                    evaluations_type_0_item = AuthzenEvaluation.from_dict(evaluations_type_0_item_data)

                    evaluations_type_0.append(evaluations_type_0_item)

                return evaluations_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[AuthzenEvaluation] | None | Unset, data)

        evaluations = _parse_evaluations(d.pop("evaluations", UNSET))

        def _parse_options(data: object) -> AuthzenOptions | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                options_type_0 = AuthzenOptions.from_dict(data)

                return options_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AuthzenOptions | None | Unset, data)

        options = _parse_options(d.pop("options", UNSET))

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

        authzen_evaluations = cls(
            action=action,
            context=context,
            evaluations=evaluations,
            options=options,
            resource=resource,
            subject=subject,
        )

        authzen_evaluations.additional_properties = d
        return authzen_evaluations

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
