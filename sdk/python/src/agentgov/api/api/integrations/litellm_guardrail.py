from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.litellm_guardrail_request import LitellmGuardrailRequest
from ...models.litellm_guardrail_response import LitellmGuardrailResponse
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    *,
    body: LitellmGuardrailRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/integrations/litellm/beta/litellm_basic_guardrail_api",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> LitellmGuardrailResponse | Problem | None:
    if response.status_code == 200:
        response_200 = LitellmGuardrailResponse.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())

        return response_415

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if response.status_code == 500:
        response_500 = Problem.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[LitellmGuardrailResponse | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: LitellmGuardrailRequest,
) -> Response[LitellmGuardrailResponse | Problem]:
    """Screen a call of a LiteLLM proxy (LiteLLM's Generic Guardrail API; configure agentgov's
    `…/api/v1/integrations/litellm` as the guardrail's `api_base` and a tenant API key as its
    `api_key`, which LiteLLM sends as `x-api-key`). Going in, every text but the system
    prompt is screened by the Prompt Guard (`guard:validate`); coming out, each tool call is
    a policy check (`policies:check`) of the agent, and secrets in the texts are redacted.
    Each verdict is appended to the audit log as `litellm.guardrail` (`audit:write`) with
    LiteLLM's call id.

    Args:
        body (LitellmGuardrailRequest): What LiteLLM sends (unknown members are ignored).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[LitellmGuardrailResponse | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: LitellmGuardrailRequest,
) -> LitellmGuardrailResponse | Problem | None:
    """Screen a call of a LiteLLM proxy (LiteLLM's Generic Guardrail API; configure agentgov's
    `…/api/v1/integrations/litellm` as the guardrail's `api_base` and a tenant API key as its
    `api_key`, which LiteLLM sends as `x-api-key`). Going in, every text but the system
    prompt is screened by the Prompt Guard (`guard:validate`); coming out, each tool call is
    a policy check (`policies:check`) of the agent, and secrets in the texts are redacted.
    Each verdict is appended to the audit log as `litellm.guardrail` (`audit:write`) with
    LiteLLM's call id.

    Args:
        body (LitellmGuardrailRequest): What LiteLLM sends (unknown members are ignored).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        LitellmGuardrailResponse | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: LitellmGuardrailRequest,
) -> Response[LitellmGuardrailResponse | Problem]:
    """Screen a call of a LiteLLM proxy (LiteLLM's Generic Guardrail API; configure agentgov's
    `…/api/v1/integrations/litellm` as the guardrail's `api_base` and a tenant API key as its
    `api_key`, which LiteLLM sends as `x-api-key`). Going in, every text but the system
    prompt is screened by the Prompt Guard (`guard:validate`); coming out, each tool call is
    a policy check (`policies:check`) of the agent, and secrets in the texts are redacted.
    Each verdict is appended to the audit log as `litellm.guardrail` (`audit:write`) with
    LiteLLM's call id.

    Args:
        body (LitellmGuardrailRequest): What LiteLLM sends (unknown members are ignored).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[LitellmGuardrailResponse | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: LitellmGuardrailRequest,
) -> LitellmGuardrailResponse | Problem | None:
    """Screen a call of a LiteLLM proxy (LiteLLM's Generic Guardrail API; configure agentgov's
    `…/api/v1/integrations/litellm` as the guardrail's `api_base` and a tenant API key as its
    `api_key`, which LiteLLM sends as `x-api-key`). Going in, every text but the system
    prompt is screened by the Prompt Guard (`guard:validate`); coming out, each tool call is
    a policy check (`policies:check`) of the agent, and secrets in the texts are redacted.
    Each verdict is appended to the audit log as `litellm.guardrail` (`audit:write`) with
    LiteLLM's call id.

    Args:
        body (LitellmGuardrailRequest): What LiteLLM sends (unknown members are ignored).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        LitellmGuardrailResponse | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
