from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.new_replay import NewReplay
from ...models.problem import Problem
from ...models.replay_job import ReplayJob
from ...types import Response


def _get_kwargs(
    id: UUID,
    *,
    body: NewReplay,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/policies/{id}/replay".format(
            id=quote(str(id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | ReplayJob | None:
    if response.status_code == 202:
        response_202 = ReplayJob.from_dict(response.json())

        return response_202

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())

        return response_415

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | ReplayJob]:
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
    body: NewReplay,
) -> Response[Problem | ReplayJob]:
    """Replay a candidate version of a policy (admin): one of its earlier `version`s (whose
    source the audit log keeps) or `rego` to try, evaluated beside its present version on the
    inputs the tenant's past decisions recorded (from `from` to `to`, at most 90 days, by
    default the last 7), asynchronously. The job's `report` counts each version's outcomes and
    the decisions the candidate newly denies, newly allows or newly gates behind an approval,
    with examples. Nothing is recorded but the job.

    Args:
        id (UUID):
        body (NewReplay): The body of `POST /policies/{id}/replay`: exactly one of `version` and
            `rego`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayJob]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: UUID,
    *,
    client: AuthenticatedClient,
    body: NewReplay,
) -> Problem | ReplayJob | None:
    """Replay a candidate version of a policy (admin): one of its earlier `version`s (whose
    source the audit log keeps) or `rego` to try, evaluated beside its present version on the
    inputs the tenant's past decisions recorded (from `from` to `to`, at most 90 days, by
    default the last 7), asynchronously. The job's `report` counts each version's outcomes and
    the decisions the candidate newly denies, newly allows or newly gates behind an approval,
    with examples. Nothing is recorded but the job.

    Args:
        id (UUID):
        body (NewReplay): The body of `POST /policies/{id}/replay`: exactly one of `version` and
            `rego`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ReplayJob
    """

    return sync_detailed(
        id=id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    id: UUID,
    *,
    client: AuthenticatedClient,
    body: NewReplay,
) -> Response[Problem | ReplayJob]:
    """Replay a candidate version of a policy (admin): one of its earlier `version`s (whose
    source the audit log keeps) or `rego` to try, evaluated beside its present version on the
    inputs the tenant's past decisions recorded (from `from` to `to`, at most 90 days, by
    default the last 7), asynchronously. The job's `report` counts each version's outcomes and
    the decisions the candidate newly denies, newly allows or newly gates behind an approval,
    with examples. Nothing is recorded but the job.

    Args:
        id (UUID):
        body (NewReplay): The body of `POST /policies/{id}/replay`: exactly one of `version` and
            `rego`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayJob]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: UUID,
    *,
    client: AuthenticatedClient,
    body: NewReplay,
) -> Problem | ReplayJob | None:
    """Replay a candidate version of a policy (admin): one of its earlier `version`s (whose
    source the audit log keeps) or `rego` to try, evaluated beside its present version on the
    inputs the tenant's past decisions recorded (from `from` to `to`, at most 90 days, by
    default the last 7), asynchronously. The job's `report` counts each version's outcomes and
    the decisions the candidate newly denies, newly allows or newly gates behind an approval,
    with examples. Nothing is recorded but the job.

    Args:
        id (UUID):
        body (NewReplay): The body of `POST /policies/{id}/replay`: exactly one of `version` and
            `rego`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ReplayJob
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
        )
    ).parsed
