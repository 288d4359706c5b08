from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.authzen_decision import AuthzenDecision
from ...models.authzen_evaluation import AuthzenEvaluation
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: AuthzenEvaluation,
    x_request_id: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(x_request_id, Unset):
        headers["X-Request-ID"] = x_request_id

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/access/v1/evaluation",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> AuthzenDecision | Problem | None:
    if response.status_code == 200:
        response_200 = AuthzenDecision.from_dict(response.json())

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
) -> Response[AuthzenDecision | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: AuthzenEvaluation,
    x_request_id: None | str | Unset = UNSET,
) -> Response[AuthzenDecision | Problem]:
    """Decide whether a subject may perform an action on a resource (AuthZEN 1.0). Credentials:
    the tenant's API key as `Authorization: Bearer agk_…` or `X-API-Key`, or a session JWT.
    A missing `subject`, `action` or `resource`, or one without its required members, is a
    400; an unknown agent a 404.

    Args:
        x_request_id (None | str | Unset):
        body (AuthzenEvaluation): One access evaluation (AuthZEN 1.0 § 6.1). Unknown members are
            ignored, as the
            specification requires.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuthzenDecision | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
        x_request_id=x_request_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: AuthzenEvaluation,
    x_request_id: None | str | Unset = UNSET,
) -> AuthzenDecision | Problem | None:
    """Decide whether a subject may perform an action on a resource (AuthZEN 1.0). Credentials:
    the tenant's API key as `Authorization: Bearer agk_…` or `X-API-Key`, or a session JWT.
    A missing `subject`, `action` or `resource`, or one without its required members, is a
    400; an unknown agent a 404.

    Args:
        x_request_id (None | str | Unset):
        body (AuthzenEvaluation): One access evaluation (AuthZEN 1.0 § 6.1). Unknown members are
            ignored, as the
            specification requires.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuthzenDecision | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
        x_request_id=x_request_id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: AuthzenEvaluation,
    x_request_id: None | str | Unset = UNSET,
) -> Response[AuthzenDecision | Problem]:
    """Decide whether a subject may perform an action on a resource (AuthZEN 1.0). Credentials:
    the tenant's API key as `Authorization: Bearer agk_…` or `X-API-Key`, or a session JWT.
    A missing `subject`, `action` or `resource`, or one without its required members, is a
    400; an unknown agent a 404.

    Args:
        x_request_id (None | str | Unset):
        body (AuthzenEvaluation): One access evaluation (AuthZEN 1.0 § 6.1). Unknown members are
            ignored, as the
            specification requires.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuthzenDecision | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
        x_request_id=x_request_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: AuthzenEvaluation,
    x_request_id: None | str | Unset = UNSET,
) -> AuthzenDecision | Problem | None:
    """Decide whether a subject may perform an action on a resource (AuthZEN 1.0). Credentials:
    the tenant's API key as `Authorization: Bearer agk_…` or `X-API-Key`, or a session JWT.
    A missing `subject`, `action` or `resource`, or one without its required members, is a
    400; an unknown agent a 404.

    Args:
        x_request_id (None | str | Unset):
        body (AuthzenEvaluation): One access evaluation (AuthZEN 1.0 § 6.1). Unknown members are
            ignored, as the
            specification requires.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuthzenDecision | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            x_request_id=x_request_id,
        )
    ).parsed
