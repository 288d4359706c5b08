from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.shadow_report import ShadowReport
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: UUID,
    *,
    window_hours: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["window_hours"] = window_hours

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/policies/{id}/shadow-report".format(
            id=quote(str(id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | ShadowReport | None:
    if response.status_code == 200:
        response_200 = ShadowReport.from_dict(response.json())

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
) -> Response[Problem | ShadowReport]:
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
    window_hours: int | Unset = UNSET,
) -> Response[Problem | ShadowReport]:
    """What a policy would have done: its `would_deny`, `would_require_approval` and
    `would_error` outcomes in the recorded checks since its last change (within the window),
    their rates, its most frequent messages and the newest decisions it would have changed.
    For a policy in `shadow` mode, before enforcing it (`policies:read`).

    Args:
        id (UUID):
        window_hours (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ShadowReport]
    """

    kwargs = _get_kwargs(
        id=id,
        window_hours=window_hours,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: UUID,
    *,
    client: AuthenticatedClient,
    window_hours: int | Unset = UNSET,
) -> Problem | ShadowReport | None:
    """What a policy would have done: its `would_deny`, `would_require_approval` and
    `would_error` outcomes in the recorded checks since its last change (within the window),
    their rates, its most frequent messages and the newest decisions it would have changed.
    For a policy in `shadow` mode, before enforcing it (`policies:read`).

    Args:
        id (UUID):
        window_hours (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ShadowReport
    """

    return sync_detailed(
        id=id,
        client=client,
        window_hours=window_hours,
    ).parsed


async def asyncio_detailed(
    id: UUID,
    *,
    client: AuthenticatedClient,
    window_hours: int | Unset = UNSET,
) -> Response[Problem | ShadowReport]:
    """What a policy would have done: its `would_deny`, `would_require_approval` and
    `would_error` outcomes in the recorded checks since its last change (within the window),
    their rates, its most frequent messages and the newest decisions it would have changed.
    For a policy in `shadow` mode, before enforcing it (`policies:read`).

    Args:
        id (UUID):
        window_hours (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ShadowReport]
    """

    kwargs = _get_kwargs(
        id=id,
        window_hours=window_hours,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: UUID,
    *,
    client: AuthenticatedClient,
    window_hours: int | Unset = UNSET,
) -> Problem | ShadowReport | None:
    """What a policy would have done: its `would_deny`, `would_require_approval` and
    `would_error` outcomes in the recorded checks since its last change (within the window),
    their rates, its most frequent messages and the newest decisions it would have changed.
    For a policy in `shadow` mode, before enforcing it (`policies:read`).

    Args:
        id (UUID):
        window_hours (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ShadowReport
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            window_hours=window_hours,
        )
    ).parsed
