from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ObserveRequest")


@_attrs_define
class ObserveRequest:
    """`POST /sessions/{id}/observe`: content shown to the agent (a tool result, a web page, an
    e-mail), screened by the Prompt Guard. The content is never stored.

        Attributes:
            agent_id (UUID): The agent that was shown the content (a UUID of the caller's tenant).
            content (str): The content; 1 byte to 512 KiB.
            labels (list[str] | Unset): Labels the caller knows apply, e.g. `untrusted_input` for content from outside the
                organisation; at most 16, each lower-case letters, digits, `_`, `.`, `:` or `-`, 1 to
                64 characters.
            source (None | str | Unset): Where it came from, e.g. the tool's name `read_inbox`; 1 to 200 characters.
            tool_call_id (None | str | Unset): The agent framework's id of the tool call that returned it; 1 to 200
                characters.
            trusted (bool | Unset): Content from the user or the operator (the user's own request), not from a tool:
                screened all the same, but the values it names (e-mail addresses, IBANs, web hosts)
                are the user's, so content that later tells the agent to use them does not count
                them as instructed. Default `false`: a tool result, a web page, a message.
    """

    agent_id: UUID
    content: str
    labels: list[str] | Unset = UNSET
    source: None | str | Unset = UNSET
    tool_call_id: None | str | Unset = UNSET
    trusted: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        agent_id = str(self.agent_id)

        content = self.content

        labels: list[str] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels

        source: None | str | Unset
        if isinstance(self.source, Unset):
            source = UNSET
        else:
            source = self.source

        tool_call_id: None | str | Unset
        if isinstance(self.tool_call_id, Unset):
            tool_call_id = UNSET
        else:
            tool_call_id = self.tool_call_id

        trusted = self.trusted

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "agent_id": agent_id,
                "content": content,
            }
        )
        if labels is not UNSET:
            field_dict["labels"] = labels
        if source is not UNSET:
            field_dict["source"] = source
        if tool_call_id is not UNSET:
            field_dict["tool_call_id"] = tool_call_id
        if trusted is not UNSET:
            field_dict["trusted"] = trusted

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        agent_id = UUID(d.pop("agent_id"))

        content = d.pop("content")

        labels = cast(list[str], d.pop("labels", UNSET))

        def _parse_source(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        source = _parse_source(d.pop("source", UNSET))

        def _parse_tool_call_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tool_call_id = _parse_tool_call_id(d.pop("tool_call_id", UNSET))

        trusted = d.pop("trusted", UNSET)

        observe_request = cls(
            agent_id=agent_id,
            content=content,
            labels=labels,
            source=source,
            tool_call_id=tool_call_id,
            trusted=trusted,
        )

        return observe_request
