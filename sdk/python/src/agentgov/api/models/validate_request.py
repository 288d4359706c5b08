from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.guard_direction import GuardDirection
from ..types import UNSET, Unset

T = TypeVar("T", bound="ValidateRequest")


@_attrs_define
class ValidateRequest:
    """`POST /guard/validate`.

    Attributes:
        prompt (str): The text to screen: a prompt, or a model's output (`direction: "output"`); 1 byte to
            512 KiB. Long texts are read whole, in windows.
        agent_id (None | Unset | UUID): The agent the text is for or from (a UUID of the caller's tenant); recorded with
            a
            blocked text.
        direction (GuardDirection | Unset): Which way a screened text goes.
        system_prompt (None | str | Unset): The application's system prompt, at most 64 KiB: an output that repeats it
            is
            leakage.
    """

    prompt: str
    agent_id: None | Unset | UUID = UNSET
    direction: GuardDirection | Unset = UNSET
    system_prompt: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        prompt = self.prompt

        agent_id: None | str | Unset
        if isinstance(self.agent_id, Unset):
            agent_id = UNSET
        elif isinstance(self.agent_id, UUID):
            agent_id = str(self.agent_id)
        else:
            agent_id = self.agent_id

        direction: str | Unset = UNSET
        if not isinstance(self.direction, Unset):
            direction = self.direction.value

        system_prompt: None | str | Unset
        if isinstance(self.system_prompt, Unset):
            system_prompt = UNSET
        else:
            system_prompt = self.system_prompt

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "prompt": prompt,
            }
        )
        if agent_id is not UNSET:
            field_dict["agent_id"] = agent_id
        if direction is not UNSET:
            field_dict["direction"] = direction
        if system_prompt is not UNSET:
            field_dict["system_prompt"] = system_prompt

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        prompt = d.pop("prompt")

        def _parse_agent_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                agent_id_type_0 = UUID(data)

                return agent_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        agent_id = _parse_agent_id(d.pop("agent_id", UNSET))

        _direction = d.pop("direction", UNSET)
        direction: GuardDirection | Unset
        if isinstance(_direction, Unset):
            direction = UNSET
        else:
            direction = GuardDirection(_direction)

        def _parse_system_prompt(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        system_prompt = _parse_system_prompt(d.pop("system_prompt", UNSET))

        validate_request = cls(
            prompt=prompt,
            agent_id=agent_id,
            direction=direction,
            system_prompt=system_prompt,
        )

        return validate_request
