from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.authzen_decisions import AuthzenDecisions
from ...models.authzen_evaluations import AuthzenEvaluations
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: AuthzenEvaluations,
    x_request_id: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(x_request_id, Unset):
        headers["X-Request-ID"] = x_request_id

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/access/v1/evaluations",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> AuthzenDecisions | Problem | None:
    if response.status_code == 200:
        response_200 = AuthzenDecisions.from_dict(response.json())

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
) -> Response[AuthzenDecisions | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: AuthzenEvaluations,
    x_request_id: None | str | Unset = UNSET,
) -> Response[AuthzenDecisions | Problem]:
    """Several evaluations in one request (AuthZEN 1.0 § 7), each decided and audited as one
    check, in order. An item that cannot be evaluated is `decision: false` with
    `context.error` (`status`, `message`) and counts as a deny for `deny_on_first_deny`.

    Args:
        x_request_id (None | str | Unset):
        body (AuthzenEvaluations): A batch (AuthZEN 1.0 § 7.1): the top-level `subject`, `action`,
            `resource` and `context`
            are the defaults of each item of `evaluations`, which may replace any of them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuthzenDecisions | Problem]
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
    body: AuthzenEvaluations,
    x_request_id: None | str | Unset = UNSET,
) -> AuthzenDecisions | Problem | None:
    """Several evaluations in one request (AuthZEN 1.0 § 7), each decided and audited as one
    check, in order. An item that cannot be evaluated is `decision: false` with
    `context.error` (`status`, `message`) and counts as a deny for `deny_on_first_deny`.

    Args:
        x_request_id (None | str | Unset):
        body (AuthzenEvaluations): A batch (AuthZEN 1.0 § 7.1): the top-level `subject`, `action`,
            `resource` and `context`
            are the defaults of each item of `evaluations`, which may replace any of them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuthzenDecisions | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
        x_request_id=x_request_id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: AuthzenEvaluations,
    x_request_id: None | str | Unset = UNSET,
) -> Response[AuthzenDecisions | Problem]:
    """Several evaluations in one request (AuthZEN 1.0 § 7), each decided and audited as one
    check, in order. An item that cannot be evaluated is `decision: false` with
    `context.error` (`status`, `message`) and counts as a deny for `deny_on_first_deny`.

    Args:
        x_request_id (None | str | Unset):
        body (AuthzenEvaluations): A batch (AuthZEN 1.0 § 7.1): the top-level `subject`, `action`,
            `resource` and `context`
            are the defaults of each item of `evaluations`, which may replace any of them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuthzenDecisions | Problem]
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
    body: AuthzenEvaluations,
    x_request_id: None | str | Unset = UNSET,
) -> AuthzenDecisions | Problem | None:
    """Several evaluations in one request (AuthZEN 1.0 § 7), each decided and audited as one
    check, in order. An item that cannot be evaluated is `decision: false` with
    `context.error` (`status`, `message`) and counts as a deny for `deny_on_first_deny`.

    Args:
        x_request_id (None | str | Unset):
        body (AuthzenEvaluations): A batch (AuthZEN 1.0 § 7.1): the top-level `subject`, `action`,
            `resource` and `context`
            are the defaults of each item of `evaluations`, which may replace any of them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuthzenDecisions | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            x_request_id=x_request_id,
        )
    ).parsed
