from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.hitl_approval import HitlApproval
from ...models.hitl_request import HitlRequest
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: UUID,
    *,
    body: HitlApproval | None | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/hitl/approve/{id}".format(
            id=quote(str(id), safe=""),
        ),
    }

    if isinstance(body, HitlApproval):
        _kwargs["json"] = body.to_dict()
    elif not isinstance(body, Unset):
        _kwargs["json"] = body

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> HitlRequest | Problem | None:
    if response.status_code == 200:
        response_200 = HitlRequest.from_dict(response.json())

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

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

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
    body: HitlApproval | None | Unset = UNSET,
) -> Response[HitlRequest | Problem]:
    """Approve a pending request (analyst or higher), with an optional `comment`. Approving
    grants a single-use approval token bound to the exact action (its digest), which the
    agent presents to `POST /policies/check` as `approval_token` (`GET /hitl/status/{id}`
    serves it). With `context`, the approver edits the arguments: the edited action is
    checked again under the tenant's policies, a denial wins (409, the request stays
    pending), and the token is bound to the edited action. 409 when the request is no longer
    pending or has expired.

    Args:
        id (UUID):
        body (HitlApproval | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[HitlRequest | Problem]
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
    body: HitlApproval | None | Unset = UNSET,
) -> HitlRequest | Problem | None:
    """Approve a pending request (analyst or higher), with an optional `comment`. Approving
    grants a single-use approval token bound to the exact action (its digest), which the
    agent presents to `POST /policies/check` as `approval_token` (`GET /hitl/status/{id}`
    serves it). With `context`, the approver edits the arguments: the edited action is
    checked again under the tenant's policies, a denial wins (409, the request stays
    pending), and the token is bound to the edited action. 409 when the request is no longer
    pending or has expired.

    Args:
        id (UUID):
        body (HitlApproval | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        HitlRequest | Problem
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
    body: HitlApproval | None | Unset = UNSET,
) -> Response[HitlRequest | Problem]:
    """Approve a pending request (analyst or higher), with an optional `comment`. Approving
    grants a single-use approval token bound to the exact action (its digest), which the
    agent presents to `POST /policies/check` as `approval_token` (`GET /hitl/status/{id}`
    serves it). With `context`, the approver edits the arguments: the edited action is
    checked again under the tenant's policies, a denial wins (409, the request stays
    pending), and the token is bound to the edited action. 409 when the request is no longer
    pending or has expired.

    Args:
        id (UUID):
        body (HitlApproval | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[HitlRequest | Problem]
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
    body: HitlApproval | None | Unset = UNSET,
) -> HitlRequest | Problem | None:
    """Approve a pending request (analyst or higher), with an optional `comment`. Approving
    grants a single-use approval token bound to the exact action (its digest), which the
    agent presents to `POST /policies/check` as `approval_token` (`GET /hitl/status/{id}`
    serves it). With `context`, the approver edits the arguments: the edited action is
    checked again under the tenant's policies, a denial wins (409, the request stays
    pending), and the token is bound to the edited action. 409 when the request is no longer
    pending or has expired.

    Args:
        id (UUID):
        body (HitlApproval | None | Unset):

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
            body=body,
        )
    ).parsed
