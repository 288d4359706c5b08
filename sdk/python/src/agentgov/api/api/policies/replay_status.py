from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.replay_job import ReplayJob
from ...types import Response


def _get_kwargs(
    id: UUID,
    replay_id: UUID,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/policies/{id}/replay/{replay_id}".format(
            id=quote(str(id), safe=""),
            replay_id=quote(str(replay_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | ReplayJob | None:
    if response.status_code == 200:
        response_200 = ReplayJob.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | ReplayJob]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: UUID,
    replay_id: UUID,
    *,
    client: AuthenticatedClient,
) -> Response[Problem | ReplayJob]:
    """The state of a replay, with its report once completed (`policies:read`).

    Args:
        id (UUID):
        replay_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayJob]
    """

    kwargs = _get_kwargs(
        id=id,
        replay_id=replay_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: UUID,
    replay_id: UUID,
    *,
    client: AuthenticatedClient,
) -> Problem | ReplayJob | None:
    """The state of a replay, with its report once completed (`policies:read`).

    Args:
        id (UUID):
        replay_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ReplayJob
    """

    return sync_detailed(
        id=id,
        replay_id=replay_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    id: UUID,
    replay_id: UUID,
    *,
    client: AuthenticatedClient,
) -> Response[Problem | ReplayJob]:
    """The state of a replay, with its report once completed (`policies:read`).

    Args:
        id (UUID):
        replay_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayJob]
    """

    kwargs = _get_kwargs(
        id=id,
        replay_id=replay_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: UUID,
    replay_id: UUID,
    *,
    client: AuthenticatedClient,
) -> Problem | ReplayJob | None:
    """The state of a replay, with its report once completed (`policies:read`).

    Args:
        id (UUID):
        replay_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ReplayJob
    """

    return (
        await asyncio_detailed(
            id=id,
            replay_id=replay_id,
            client=client,
        )
    ).parsed
