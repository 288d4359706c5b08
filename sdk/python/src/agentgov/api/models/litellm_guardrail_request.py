from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.litellm_guardrail_request_additional_provider_specific_params_type_0 import (
        LitellmGuardrailRequestAdditionalProviderSpecificParamsType0,
    )
    from ..models.litellm_guardrail_request_request_data_type_0 import LitellmGuardrailRequestRequestDataType0
    from ..models.litellm_guardrail_request_request_headers_type_0 import LitellmGuardrailRequestRequestHeadersType0
    from ..models.litellm_guardrail_request_structured_messages_type_0_item import (
        LitellmGuardrailRequestStructuredMessagesType0Item,
    )
    from ..models.litellm_guardrail_request_tool_calls_type_0_item import LitellmGuardrailRequestToolCallsType0Item
    from ..models.litellm_guardrail_request_tools_type_0_item import LitellmGuardrailRequestToolsType0Item


T = TypeVar("T", bound="LitellmGuardrailRequest")


@_attrs_define
class LitellmGuardrailRequest:
    """What LiteLLM sends (unknown members are ignored).

    Attributes:
        additional_provider_specific_params (LitellmGuardrailRequestAdditionalProviderSpecificParamsType0 | None |
            Unset): The guardrail's static parameters from LiteLLM's configuration (`agent_id`).
        input_type (None | str | Unset): `request` (on its way to the model) or `response` (on its way back).
        litellm_call_id (None | str | Unset):
        litellm_trace_id (None | str | Unset):
        model (None | str | Unset):
        request_data (LitellmGuardrailRequestRequestDataType0 | None | Unset): The LiteLLM key and team of the call.
        request_headers (LitellmGuardrailRequestRequestHeadersType0 | None | Unset): The client's headers as LiteLLM
            forwards them (`[present]` for those it withholds).
        structured_messages (list[LitellmGuardrailRequestStructuredMessagesType0Item] | None | Unset): The request's
            messages, with their roles.
        texts (list[str] | None | Unset): The texts of the messages (request) or of the model's answer (response).
        tool_calls (list[LitellmGuardrailRequestToolCallsType0Item] | None | Unset): The tool calls the model made
            (response), OpenAI's shape.
        tools (list[LitellmGuardrailRequestToolsType0Item] | None | Unset): The tools offered to the model (request).
    """

    additional_provider_specific_params: LitellmGuardrailRequestAdditionalProviderSpecificParamsType0 | None | Unset = (
        UNSET
    )
    input_type: None | str | Unset = UNSET
    litellm_call_id: None | str | Unset = UNSET
    litellm_trace_id: None | str | Unset = UNSET
    model: None | str | Unset = UNSET
    request_data: LitellmGuardrailRequestRequestDataType0 | None | Unset = UNSET
    request_headers: LitellmGuardrailRequestRequestHeadersType0 | None | Unset = UNSET
    structured_messages: list[LitellmGuardrailRequestStructuredMessagesType0Item] | None | Unset = UNSET
    texts: list[str] | None | Unset = UNSET
    tool_calls: list[LitellmGuardrailRequestToolCallsType0Item] | None | Unset = UNSET
    tools: list[LitellmGuardrailRequestToolsType0Item] | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.litellm_guardrail_request_additional_provider_specific_params_type_0 import (
            LitellmGuardrailRequestAdditionalProviderSpecificParamsType0,
        )
        from ..models.litellm_guardrail_request_request_data_type_0 import LitellmGuardrailRequestRequestDataType0
        from ..models.litellm_guardrail_request_request_headers_type_0 import LitellmGuardrailRequestRequestHeadersType0

        additional_provider_specific_params: dict[str, Any] | None | Unset
        if isinstance(self.additional_provider_specific_params, Unset):
            additional_provider_specific_params = UNSET
        elif isinstance(
            self.additional_provider_specific_params, LitellmGuardrailRequestAdditionalProviderSpecificParamsType0
        ):
            additional_provider_specific_params = self.additional_provider_specific_params.to_dict()
        else:
            additional_provider_specific_params = self.additional_provider_specific_params

        input_type: None | str | Unset
        if isinstance(self.input_type, Unset):
            input_type = UNSET
        else:
            input_type = self.input_type

        litellm_call_id: None | str | Unset
        if isinstance(self.litellm_call_id, Unset):
            litellm_call_id = UNSET
        else:
            litellm_call_id = self.litellm_call_id

        litellm_trace_id: None | str | Unset
        if isinstance(self.litellm_trace_id, Unset):
            litellm_trace_id = UNSET
        else:
            litellm_trace_id = self.litellm_trace_id

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        request_data: dict[str, Any] | None | Unset
        if isinstance(self.request_data, Unset):
            request_data = UNSET
        elif isinstance(self.request_data, LitellmGuardrailRequestRequestDataType0):
            request_data = self.request_data.to_dict()
        else:
            request_data = self.request_data

        request_headers: dict[str, Any] | None | Unset
        if isinstance(self.request_headers, Unset):
            request_headers = UNSET
        elif isinstance(self.request_headers, LitellmGuardrailRequestRequestHeadersType0):
            request_headers = self.request_headers.to_dict()
        else:
            request_headers = self.request_headers

        structured_messages: list[dict[str, Any]] | None | Unset
        if isinstance(self.structured_messages, Unset):
            structured_messages = UNSET
        elif isinstance(self.structured_messages, list):
            structured_messages = []
            for structured_messages_type_0_item_data in self.structured_messages:
                structured_messages_type_0_item = structured_messages_type_0_item_data.to_dict()
                structured_messages.append(structured_messages_type_0_item)

        else:
            structured_messages = self.structured_messages

        texts: list[str] | None | Unset
        if isinstance(self.texts, Unset):
            texts = UNSET
        elif isinstance(self.texts, list):
            texts = self.texts

        else:
            texts = self.texts

        tool_calls: list[dict[str, Any]] | None | Unset
        if isinstance(self.tool_calls, Unset):
            tool_calls = UNSET
        elif isinstance(self.tool_calls, list):
            tool_calls = []
            for tool_calls_type_0_item_data in self.tool_calls:
                tool_calls_type_0_item = tool_calls_type_0_item_data.to_dict()
                tool_calls.append(tool_calls_type_0_item)

        else:
            tool_calls = self.tool_calls

        tools: list[dict[str, Any]] | None | Unset
        if isinstance(self.tools, Unset):
            tools = UNSET
        elif isinstance(self.tools, list):
            tools = []
            for tools_type_0_item_data in self.tools:
                tools_type_0_item = tools_type_0_item_data.to_dict()
                tools.append(tools_type_0_item)

        else:
            tools = self.tools

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if additional_provider_specific_params is not UNSET:
            field_dict["additional_provider_specific_params"] = additional_provider_specific_params
        if input_type is not UNSET:
            field_dict["input_type"] = input_type
        if litellm_call_id is not UNSET:
            field_dict["litellm_call_id"] = litellm_call_id
        if litellm_trace_id is not UNSET:
            field_dict["litellm_trace_id"] = litellm_trace_id
        if model is not UNSET:
            field_dict["model"] = model
        if request_data is not UNSET:
            field_dict["request_data"] = request_data
        if request_headers is not UNSET:
            field_dict["request_headers"] = request_headers
        if structured_messages is not UNSET:
            field_dict["structured_messages"] = structured_messages
        if texts is not UNSET:
            field_dict["texts"] = texts
        if tool_calls is not UNSET:
            field_dict["tool_calls"] = tool_calls
        if tools is not UNSET:
            field_dict["tools"] = tools

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.litellm_guardrail_request_additional_provider_specific_params_type_0 import (
            LitellmGuardrailRequestAdditionalProviderSpecificParamsType0,
        )
        from ..models.litellm_guardrail_request_request_data_type_0 import LitellmGuardrailRequestRequestDataType0
        from ..models.litellm_guardrail_request_request_headers_type_0 import LitellmGuardrailRequestRequestHeadersType0
        from ..models.litellm_guardrail_request_structured_messages_type_0_item import (
            LitellmGuardrailRequestStructuredMessagesType0Item,
        )
        from ..models.litellm_guardrail_request_tool_calls_type_0_item import LitellmGuardrailRequestToolCallsType0Item
        from ..models.litellm_guardrail_request_tools_type_0_item import LitellmGuardrailRequestToolsType0Item

        d = dict(src_dict)

        def _parse_additional_provider_specific_params(
            data: object,
        ) -> LitellmGuardrailRequestAdditionalProviderSpecificParamsType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                additional_provider_specific_params_type_0 = (
                    LitellmGuardrailRequestAdditionalProviderSpecificParamsType0.from_dict(data)
                )

                return additional_provider_specific_params_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LitellmGuardrailRequestAdditionalProviderSpecificParamsType0 | None | Unset, data)

        additional_provider_specific_params = _parse_additional_provider_specific_params(
            d.pop("additional_provider_specific_params", UNSET)
        )

        def _parse_input_type(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        input_type = _parse_input_type(d.pop("input_type", UNSET))

        def _parse_litellm_call_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        litellm_call_id = _parse_litellm_call_id(d.pop("litellm_call_id", UNSET))

        def _parse_litellm_trace_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        litellm_trace_id = _parse_litellm_trace_id(d.pop("litellm_trace_id", UNSET))

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

        def _parse_request_data(data: object) -> LitellmGuardrailRequestRequestDataType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                request_data_type_0 = LitellmGuardrailRequestRequestDataType0.from_dict(data)

                return request_data_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LitellmGuardrailRequestRequestDataType0 | None | Unset, data)

        request_data = _parse_request_data(d.pop("request_data", UNSET))

        def _parse_request_headers(data: object) -> LitellmGuardrailRequestRequestHeadersType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                request_headers_type_0 = LitellmGuardrailRequestRequestHeadersType0.from_dict(data)

                return request_headers_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LitellmGuardrailRequestRequestHeadersType0 | None | Unset, data)

        request_headers = _parse_request_headers(d.pop("request_headers", UNSET))

        def _parse_structured_messages(
            data: object,
        ) -> list[LitellmGuardrailRequestStructuredMessagesType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                structured_messages_type_0 = []
                _structured_messages_type_0 = data
                for structured_messages_type_0_item_data in _structured_messages_type_0:
                    structured_messages_type_0_item = LitellmGuardrailRequestStructuredMessagesType0Item.from_dict(
                        structured_messages_type_0_item_data
                    )

                    structured_messages_type_0.append(structured_messages_type_0_item)

                return structured_messages_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[LitellmGuardrailRequestStructuredMessagesType0Item] | None | Unset, data)

        structured_messages = _parse_structured_messages(d.pop("structured_messages", UNSET))

        def _parse_texts(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                texts_type_0 = cast(list[str], data)

                return texts_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        texts = _parse_texts(d.pop("texts", UNSET))

        def _parse_tool_calls(data: object) -> list[LitellmGuardrailRequestToolCallsType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                tool_calls_type_0 = []
                _tool_calls_type_0 = data
                for tool_calls_type_0_item_data in _tool_calls_type_0:
                    tool_calls_type_0_item = LitellmGuardrailRequestToolCallsType0Item.from_dict(
                        tool_calls_type_0_item_data
                    )

                    tool_calls_type_0.append(tool_calls_type_0_item)

                return tool_calls_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[LitellmGuardrailRequestToolCallsType0Item] | None | Unset, data)

        tool_calls = _parse_tool_calls(d.pop("tool_calls", UNSET))

        def _parse_tools(data: object) -> list[LitellmGuardrailRequestToolsType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                tools_type_0 = []
                _tools_type_0 = data
                for tools_type_0_item_data in _tools_type_0:
                    tools_type_0_item = LitellmGuardrailRequestToolsType0Item.from_dict(tools_type_0_item_data)

                    tools_type_0.append(tools_type_0_item)

                return tools_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[LitellmGuardrailRequestToolsType0Item] | None | Unset, data)

        tools = _parse_tools(d.pop("tools", UNSET))

        litellm_guardrail_request = cls(
            additional_provider_specific_params=additional_provider_specific_params,
            input_type=input_type,
            litellm_call_id=litellm_call_id,
            litellm_trace_id=litellm_trace_id,
            model=model,
            request_data=request_data,
            request_headers=request_headers,
            structured_messages=structured_messages,
            texts=texts,
            tool_calls=tool_calls,
            tools=tools,
        )

        litellm_guardrail_request.additional_properties = d
        return litellm_guardrail_request

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
