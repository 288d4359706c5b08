from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.anomaly_task import AnomalyTask
from ...models.detector_train_request import DetectorTrainRequest
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: DetectorTrainRequest | None | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/anomalies/detector/train",
    }

    if isinstance(body, DetectorTrainRequest):
        _kwargs["json"] = body.to_dict()
    elif not isinstance(body, Unset):
        _kwargs["json"] = body

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> AnomalyTask | Problem | None:
    if response.status_code == 202:
        response_202 = AnomalyTask.from_dict(response.json())

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

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

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
) -> Response[AnomalyTask | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: DetectorTrainRequest | None | Unset = UNSET,
) -> Response[AnomalyTask | Problem]:
    """Train a new version of the tenant's detector (admin, with a session) from its audit
    history: the policy decisions and guard blocks of the last `window_days` (default 30,
    at most 90), and the reports analysts labelled. Runs as a task on any replica; the new
    version becomes active when it completes. 409 while one is queued or running.

    Args:
        body (DetectorTrainRequest | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AnomalyTask | Problem]
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
    body: DetectorTrainRequest | None | Unset = UNSET,
) -> AnomalyTask | Problem | None:
    """Train a new version of the tenant's detector (admin, with a session) from its audit
    history: the policy decisions and guard blocks of the last `window_days` (default 30,
    at most 90), and the reports analysts labelled. Runs as a task on any replica; the new
    version becomes active when it completes. 409 while one is queued or running.

    Args:
        body (DetectorTrainRequest | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AnomalyTask | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: DetectorTrainRequest | None | Unset = UNSET,
) -> Response[AnomalyTask | Problem]:
    """Train a new version of the tenant's detector (admin, with a session) from its audit
    history: the policy decisions and guard blocks of the last `window_days` (default 30,
    at most 90), and the reports analysts labelled. Runs as a task on any replica; the new
    version becomes active when it completes. 409 while one is queued or running.

    Args:
        body (DetectorTrainRequest | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AnomalyTask | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: DetectorTrainRequest | None | Unset = UNSET,
) -> AnomalyTask | Problem | None:
    """Train a new version of the tenant's detector (admin, with a session) from its audit
    history: the policy decisions and guard blocks of the last `window_days` (default 30,
    at most 90), and the reports analysts labelled. Runs as a task on any replica; the new
    version becomes active when it completes. 409 while one is queued or running.

    Args:
        body (DetectorTrainRequest | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AnomalyTask | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
