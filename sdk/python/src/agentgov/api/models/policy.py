from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.policy_mode import PolicyMode
from ..types import UNSET, Unset

T = TypeVar("T", bound="Policy")


@_attrs_define
class Policy:
    """A Rego policy of one tenant. The Rego contract (the input document and the rules a
    module may define) is in `docs/policies.md`.

        Attributes:
            created_at (datetime.datetime):
            enabled (bool): Only enabled policies take part in policy checks (`mode` `enforce` or `shadow`).
            id (UUID): A Rego policy of one tenant.
            mode (PolicyMode): How a policy takes part in checks.
            name (str): Unique within the tenant.
            rego (str): The module's source, as written (compiled on every create and update).
            tenant_id (UUID): A tenant: the unit of isolation.
            updated_at (datetime.datetime):
            version (int): 1 at creation; one more on every update.
            created_by (None | Unset | UUID):
            description (None | str | Unset):
    """

    created_at: datetime.datetime
    enabled: bool
    id: UUID
    mode: PolicyMode
    name: str
    rego: str
    tenant_id: UUID
    updated_at: datetime.datetime
    version: int
    created_by: None | Unset | UUID = UNSET
    description: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        enabled = self.enabled

        id = str(self.id)

        mode = self.mode.value

        name = self.name

        rego = self.rego

        tenant_id = str(self.tenant_id)

        updated_at = self.updated_at.isoformat()

        version = self.version

        created_by: None | str | Unset
        if isinstance(self.created_by, Unset):
            created_by = UNSET
        elif isinstance(self.created_by, UUID):
            created_by = str(self.created_by)
        else:
            created_by = self.created_by

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "enabled": enabled,
                "id": id,
                "mode": mode,
                "name": name,
                "rego": rego,
                "tenant_id": tenant_id,
                "updated_at": updated_at,
                "version": version,
            }
        )
        if created_by is not UNSET:
            field_dict["created_by"] = created_by
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = isoparse(d.pop("created_at"))

        enabled = d.pop("enabled")

        id = UUID(d.pop("id"))

        mode = PolicyMode(d.pop("mode"))

        name = d.pop("name")

        rego = d.pop("rego")

        tenant_id = UUID(d.pop("tenant_id"))

        updated_at = isoparse(d.pop("updated_at"))

        version = d.pop("version")

        def _parse_created_by(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                created_by_type_0 = UUID(data)

                return created_by_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        created_by = _parse_created_by(d.pop("created_by", UNSET))

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        policy = cls(
            created_at=created_at,
            enabled=enabled,
            id=id,
            mode=mode,
            name=name,
            rego=rego,
            tenant_id=tenant_id,
            updated_at=updated_at,
            version=version,
            created_by=created_by,
            description=description,
        )

        policy.additional_properties = d
        return policy

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
