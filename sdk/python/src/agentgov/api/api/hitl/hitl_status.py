from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.hitl_request import HitlRequest
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: UUID,
    *,
    wait: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["wait"] = wait

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/hitl/status/{id}".format(
            id=quote(str(id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> HitlRequest | Problem | None:
    if response.status_code == 200:
        response_200 = HitlRequest.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

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


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[HitlRequest | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: UUID,
    *,
    client: AuthenticatedClient,
    wait: int | Unset = UNSET,
) -> Response[HitlRequest | Problem]:
    """A request's state (`hitl:read`). With `wait`, a pending request is answered when it
    is decided, cancelled or expires (on any replica), or when `wait` seconds pass. An
    approved request carries its `approval_token` while it is unused and unexpired, for
    callers that may check (`policies:check`).

    Args:
        id (UUID):
        wait (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[HitlRequest | Problem]
    """

    kwargs = _get_kwargs(
        id=id,
        wait=wait,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: UUID,
    *,
    client: AuthenticatedClient,
    wait: int | Unset = UNSET,
) -> HitlRequest | Problem | None:
    """A request's state (`hitl:read`). With `wait`, a pending request is answered when it
    is decided, cancelled or expires (on any replica), or when `wait` seconds pass. An
    approved request carries its `approval_token` while it is unused and unexpired, for
    callers that may check (`policies:check`).

    Args:
        id (UUID):
        wait (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        HitlRequest | Problem
    """

    return sync_detailed(
        id=id,
        client=client,
        wait=wait,
    ).parsed


async def asyncio_detailed(
    id: UUID,
    *,
    client: AuthenticatedClient,
    wait: int | Unset = UNSET,
) -> Response[HitlRequest | Problem]:
    """A request's state (`hitl:read`). With `wait`, a pending request is answered when it
    is decided, cancelled or expires (on any replica), or when `wait` seconds pass. An
    approved request carries its `approval_token` while it is unused and unexpired, for
    callers that may check (`policies:check`).

    Args:
        id (UUID):
        wait (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[HitlRequest | Problem]
    """

    kwargs = _get_kwargs(
        id=id,
        wait=wait,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: UUID,
    *,
    client: AuthenticatedClient,
    wait: int | Unset = UNSET,
) -> HitlRequest | Problem | None:
    """A request's state (`hitl:read`). With `wait`, a pending request is answered when it
    is decided, cancelled or expires (on any replica), or when `wait` seconds pass. An
    approved request carries its `approval_token` while it is unused and unexpired, for
    callers that may check (`policies:check`).

    Args:
        id (UUID):
        wait (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        HitlRequest | Problem
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            wait=wait,
        )
    ).parsed
