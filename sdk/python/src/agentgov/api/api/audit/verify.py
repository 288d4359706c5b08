from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.chain_verification import ChainVerification
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    from_seq: int | Unset = UNSET,
    to_seq: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["from_seq"] = from_seq

    params["to_seq"] = to_seq

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/audit/verify",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ChainVerification | Problem | None:
    if response.status_code == 200:
        response_200 = ChainVerification.from_dict(response.json())

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
) -> Response[ChainVerification | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    from_seq: int | Unset = UNSET,
    to_seq: int | Unset = UNSET,
) -> Response[ChainVerification | Problem]:
    """Recompute the tenant's hash chain (or a range of it) and report the first break.

    Args:
        from_seq (int | Unset):
        to_seq (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ChainVerification | Problem]
    """

    kwargs = _get_kwargs(
        from_seq=from_seq,
        to_seq=to_seq,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    from_seq: int | Unset = UNSET,
    to_seq: int | Unset = UNSET,
) -> ChainVerification | Problem | None:
    """Recompute the tenant's hash chain (or a range of it) and report the first break.

    Args:
        from_seq (int | Unset):
        to_seq (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ChainVerification | Problem
    """

    return sync_detailed(
        client=client,
        from_seq=from_seq,
        to_seq=to_seq,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    from_seq: int | Unset = UNSET,
    to_seq: int | Unset = UNSET,
) -> Response[ChainVerification | Problem]:
    """Recompute the tenant's hash chain (or a range of it) and report the first break.

    Args:
        from_seq (int | Unset):
        to_seq (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ChainVerification | Problem]
    """

    kwargs = _get_kwargs(
        from_seq=from_seq,
        to_seq=to_seq,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    from_seq: int | Unset = UNSET,
    to_seq: int | Unset = UNSET,
) -> ChainVerification | Problem | None:
    """Recompute the tenant's hash chain (or a range of it) and report the first break.

    Args:
        from_seq (int | Unset):
        to_seq (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ChainVerification | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            from_seq=from_seq,
            to_seq=to_seq,
        )
    ).parsed
