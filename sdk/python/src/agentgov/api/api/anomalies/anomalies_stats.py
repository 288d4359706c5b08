import datetime
from http import HTTPStatus
from typing import Any
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.anomaly_stats import AnomalyStats
from ...models.anomaly_status import AnomalyStatus
from ...models.anomaly_type import AnomalyType
from ...models.bucket import Bucket
from ...models.problem import Problem
from ...models.severity import Severity
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    agent_id: UUID | Unset = UNSET,
    type_: AnomalyType | Unset = UNSET,
    severity: Severity | Unset = UNSET,
    status: AnomalyStatus | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    bucket: Bucket | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor

    json_agent_id: str | Unset = UNSET
    if not isinstance(agent_id, Unset):
        json_agent_id = str(agent_id)
    params["agent_id"] = json_agent_id

    json_type_: str | Unset = UNSET
    if not isinstance(type_, Unset):
        json_type_ = type_.value

    params["type"] = json_type_

    json_severity: str | Unset = UNSET
    if not isinstance(severity, Unset):
        json_severity = severity.value

    params["severity"] = json_severity

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status.value

    params["status"] = json_status

    json_from_: str | Unset = UNSET
    if not isinstance(from_, Unset):
        json_from_ = from_.isoformat()
    params["from"] = json_from_

    json_to: str | Unset = UNSET
    if not isinstance(to, Unset):
        json_to = to.isoformat()
    params["to"] = json_to

    json_bucket: str | Unset = UNSET
    if not isinstance(bucket, Unset):
        json_bucket = bucket.value

    params["bucket"] = json_bucket

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/anomalies/stats",
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> AnomalyStats | Problem | None:
    if response.status_code == 200:
        response_200 = AnomalyStats.from_dict(response.json())

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


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[AnomalyStats | Problem]:
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
    agent_id: UUID | Unset = UNSET,
    type_: AnomalyType | Unset = UNSET,
    severity: Severity | Unset = UNSET,
    status: AnomalyStatus | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    bucket: Bucket | Unset = UNSET,
) -> Response[AnomalyStats | Problem]:
    """Counts over a window (`anomalies:read`; default the last 24 hours, at most 90 days) by
    severity, type and status, the ten agents with the most, and a series per `hour`
    (default) or `day`; the list's filters apply.

    Args:
        limit (int | Unset):
        cursor (str | Unset):
        agent_id (UUID | Unset):
        type_ (AnomalyType | Unset): What kind of oddity.
        severity (Severity | Unset): How bad, ordered.
        status (AnomalyStatus | Unset): What analysts made of it.
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        bucket (Bucket | Unset): The width of a `series` bucket.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AnomalyStats | Problem]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
        agent_id=agent_id,
        type_=type_,
        severity=severity,
        status=status,
        from_=from_,
        to=to,
        bucket=bucket,
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
    agent_id: UUID | Unset = UNSET,
    type_: AnomalyType | Unset = UNSET,
    severity: Severity | Unset = UNSET,
    status: AnomalyStatus | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    bucket: Bucket | Unset = UNSET,
) -> AnomalyStats | Problem | None:
    """Counts over a window (`anomalies:read`; default the last 24 hours, at most 90 days) by
    severity, type and status, the ten agents with the most, and a series per `hour`
    (default) or `day`; the list's filters apply.

    Args:
        limit (int | Unset):
        cursor (str | Unset):
        agent_id (UUID | Unset):
        type_ (AnomalyType | Unset): What kind of oddity.
        severity (Severity | Unset): How bad, ordered.
        status (AnomalyStatus | Unset): What analysts made of it.
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        bucket (Bucket | Unset): The width of a `series` bucket.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AnomalyStats | Problem
    """

    return sync_detailed(
        client=client,
        limit=limit,
        cursor=cursor,
        agent_id=agent_id,
        type_=type_,
        severity=severity,
        status=status,
        from_=from_,
        to=to,
        bucket=bucket,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    agent_id: UUID | Unset = UNSET,
    type_: AnomalyType | Unset = UNSET,
    severity: Severity | Unset = UNSET,
    status: AnomalyStatus | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    bucket: Bucket | Unset = UNSET,
) -> Response[AnomalyStats | Problem]:
    """Counts over a window (`anomalies:read`; default the last 24 hours, at most 90 days) by
    severity, type and status, the ten agents with the most, and a series per `hour`
    (default) or `day`; the list's filters apply.

    Args:
        limit (int | Unset):
        cursor (str | Unset):
        agent_id (UUID | Unset):
        type_ (AnomalyType | Unset): What kind of oddity.
        severity (Severity | Unset): How bad, ordered.
        status (AnomalyStatus | Unset): What analysts made of it.
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        bucket (Bucket | Unset): The width of a `series` bucket.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AnomalyStats | Problem]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
        agent_id=agent_id,
        type_=type_,
        severity=severity,
        status=status,
        from_=from_,
        to=to,
        bucket=bucket,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    agent_id: UUID | Unset = UNSET,
    type_: AnomalyType | Unset = UNSET,
    severity: Severity | Unset = UNSET,
    status: AnomalyStatus | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    bucket: Bucket | Unset = UNSET,
) -> AnomalyStats | Problem | None:
    """Counts over a window (`anomalies:read`; default the last 24 hours, at most 90 days) by
    severity, type and status, the ten agents with the most, and a series per `hour`
    (default) or `day`; the list's filters apply.

    Args:
        limit (int | Unset):
        cursor (str | Unset):
        agent_id (UUID | Unset):
        type_ (AnomalyType | Unset): What kind of oddity.
        severity (Severity | Unset): How bad, ordered.
        status (AnomalyStatus | Unset): What analysts made of it.
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        bucket (Bucket | Unset): The width of a `series` bucket.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AnomalyStats | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            limit=limit,
            cursor=cursor,
            agent_id=agent_id,
            type_=type_,
            severity=severity,
            status=status,
            from_=from_,
            to=to,
            bucket=bucket,
        )
    ).parsed
