from http import HTTPStatus
from typing import Any, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    token: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["token"] = token

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/ws",
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | Problem | None:
    if response.status_code == 101:
        response_101 = cast(Any, None)
        return response_101

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())

        return response_429

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    token: str | Unset = UNSET,
) -> Response[Any | Problem]:
    r"""The real-time feed (WebSocket; any signed-in user of the tenant). Refused with 401
    before the upgrade for a missing, expired or revoked token. Server messages are events
    `{\"id\", \"type\", \"tenant_id\", \"ts\", \"data\"}` of the caller's tenant (from every replica)
    and replies `{\"type\": \"subscribed\", \"events\": [...]}`, `{\"type\": \"pong\"}` and
    `{\"type\": \"error\", \"message\"}`. A client sends `{\"type\": \"subscribe\", \"events\":
    [\"hitl.*\"]}` to filter (`*` matches any characters; all events until it does). The
    server pings every 20 s. Close codes: 1008 when the session is revoked or expires, 1013
    when the client reads too slowly to keep up, 1001 when the server stops.

    Args:
        token (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
    """

    kwargs = _get_kwargs(
        token=token,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    token: str | Unset = UNSET,
) -> Any | Problem | None:
    r"""The real-time feed (WebSocket; any signed-in user of the tenant). Refused with 401
    before the upgrade for a missing, expired or revoked token. Server messages are events
    `{\"id\", \"type\", \"tenant_id\", \"ts\", \"data\"}` of the caller's tenant (from every replica)
    and replies `{\"type\": \"subscribed\", \"events\": [...]}`, `{\"type\": \"pong\"}` and
    `{\"type\": \"error\", \"message\"}`. A client sends `{\"type\": \"subscribe\", \"events\":
    [\"hitl.*\"]}` to filter (`*` matches any characters; all events until it does). The
    server pings every 20 s. Close codes: 1008 when the session is revoked or expires, 1013
    when the client reads too slowly to keep up, 1001 when the server stops.

    Args:
        token (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
    """

    return sync_detailed(
        client=client,
        token=token,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    token: str | Unset = UNSET,
) -> Response[Any | Problem]:
    r"""The real-time feed (WebSocket; any signed-in user of the tenant). Refused with 401
    before the upgrade for a missing, expired or revoked token. Server messages are events
    `{\"id\", \"type\", \"tenant_id\", \"ts\", \"data\"}` of the caller's tenant (from every replica)
    and replies `{\"type\": \"subscribed\", \"events\": [...]}`, `{\"type\": \"pong\"}` and
    `{\"type\": \"error\", \"message\"}`. A client sends `{\"type\": \"subscribe\", \"events\":
    [\"hitl.*\"]}` to filter (`*` matches any characters; all events until it does). The
    server pings every 20 s. Close codes: 1008 when the session is revoked or expires, 1013
    when the client reads too slowly to keep up, 1001 when the server stops.

    Args:
        token (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
    """

    kwargs = _get_kwargs(
        token=token,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    token: str | Unset = UNSET,
) -> Any | Problem | None:
    r"""The real-time feed (WebSocket; any signed-in user of the tenant). Refused with 401
    before the upgrade for a missing, expired or revoked token. Server messages are events
    `{\"id\", \"type\", \"tenant_id\", \"ts\", \"data\"}` of the caller's tenant (from every replica)
    and replies `{\"type\": \"subscribed\", \"events\": [...]}`, `{\"type\": \"pong\"}` and
    `{\"type\": \"error\", \"message\"}`. A client sends `{\"type\": \"subscribe\", \"events\":
    [\"hitl.*\"]}` to filter (`*` matches any characters; all events until it does). The
    server pings every 20 s. Close codes: 1008 when the session is revoked or expires, 1013
    when the client reads too slowly to keep up, 1001 when the server stops.

    Args:
        token (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            token=token,
        )
    ).parsed
