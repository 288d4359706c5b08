from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.agent_status import AgentStatus
from ...models.page_agent import PageAgent
from ...models.problem import Problem
from ...models.risk_level import RiskLevel
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    type_: str | Unset = UNSET,
    status: AgentStatus | Unset = UNSET,
    risk: RiskLevel | Unset = UNSET,
    capability: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor

    params["type"] = type_

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status.value

    params["status"] = json_status

    json_risk: str | Unset = UNSET
    if not isinstance(risk, Unset):
        json_risk = risk.value

    params["risk"] = json_risk

    params["capability"] = capability

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/agents",
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> PageAgent | Problem | None:
    if response.status_code == 200:
        response_200 = PageAgent.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[PageAgent | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    type_: str | Unset = UNSET,
    status: AgentStatus | Unset = UNSET,
    risk: RiskLevel | Unset = UNSET,
    capability: str | Unset = UNSET,
) -> Response[PageAgent | Problem]:
    """List the tenant's agents, newest first, each with its predicted type and risk.

    Args:
        limit (int | Unset):
        cursor (str | Unset):
        type_ (str | Unset):
        status (AgentStatus | Unset): An agent's lifecycle state as stored. An `active` agent that
            has not been seen for the
            configured time is *reported* as `inactive` (see [`Agent::effective_status`]).
        risk (RiskLevel | Unset): A risk level: by default `low` (< 0.3), `medium` (< 0.6), `high`
            (< 0.85), `critical`;
            a tenant may move the bounds ([`RiskLevels`]).
        capability (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PageAgent | Problem]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
        type_=type_,
        status=status,
        risk=risk,
        capability=capability,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    type_: str | Unset = UNSET,
    status: AgentStatus | Unset = UNSET,
    risk: RiskLevel | Unset = UNSET,
    capability: str | Unset = UNSET,
) -> PageAgent | Problem | None:
    """List the tenant's agents, newest first, each with its predicted type and risk.

    Args:
        limit (int | Unset):
        cursor (str | Unset):
        type_ (str | Unset):
        status (AgentStatus | Unset): An agent's lifecycle state as stored. An `active` agent that
            has not been seen for the
            configured time is *reported* as `inactive` (see [`Agent::effective_status`]).
        risk (RiskLevel | Unset): A risk level: by default `low` (< 0.3), `medium` (< 0.6), `high`
            (< 0.85), `critical`;
            a tenant may move the bounds ([`RiskLevels`]).
        capability (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PageAgent | Problem
    """

    return sync_detailed(
        client=client,
        limit=limit,
        cursor=cursor,
        type_=type_,
        status=status,
        risk=risk,
        capability=capability,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    type_: str | Unset = UNSET,
    status: AgentStatus | Unset = UNSET,
    risk: RiskLevel | Unset = UNSET,
    capability: str | Unset = UNSET,
) -> Response[PageAgent | Problem]:
    """List the tenant's agents, newest first, each with its predicted type and risk.

    Args:
        limit (int | Unset):
        cursor (str | Unset):
        type_ (str | Unset):
        status (AgentStatus | Unset): An agent's lifecycle state as stored. An `active` agent that
            has not been seen for the
            configured time is *reported* as `inactive` (see [`Agent::effective_status`]).
        risk (RiskLevel | Unset): A risk level: by default `low` (< 0.3), `medium` (< 0.6), `high`
            (< 0.85), `critical`;
            a tenant may move the bounds ([`RiskLevels`]).
        capability (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PageAgent | Problem]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
        type_=type_,
        status=status,
        risk=risk,
        capability=capability,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    type_: str | Unset = UNSET,
    status: AgentStatus | Unset = UNSET,
    risk: RiskLevel | Unset = UNSET,
    capability: str | Unset = UNSET,
) -> PageAgent | Problem | None:
    """List the tenant's agents, newest first, each with its predicted type and risk.

    Args:
        limit (int | Unset):
        cursor (str | Unset):
        type_ (str | Unset):
        status (AgentStatus | Unset): An agent's lifecycle state as stored. An `active` agent that
            has not been seen for the
            configured time is *reported* as `inactive` (see [`Agent::effective_status`]).
        risk (RiskLevel | Unset): A risk level: by default `low` (< 0.3), `medium` (< 0.6), `high`
            (< 0.85), `critical`;
            a tenant may move the bounds ([`RiskLevels`]).
        capability (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PageAgent | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            limit=limit,
            cursor=cursor,
            type_=type_,
            status=status,
            risk=risk,
            capability=capability,
        )
    ).parsed
