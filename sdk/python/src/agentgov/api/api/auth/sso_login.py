from http import HTTPStatus
from typing import Any, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    provider: str,
    redirect_uri: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["provider"] = provider

    params["redirect_uri"] = redirect_uri

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/auth/sso/login",
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | Problem | None:
    if response.status_code == 302:
        response_302 = cast(Any, None)
        return response_302

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    provider: str,
    redirect_uri: str | Unset = UNSET,
) -> Response[Any | Problem]:
    """Start an OpenID Connect sign-in: 302 to the provider's authorization endpoint, with
    `state`, `nonce` and PKCE (S256). The provider sends the user back to `redirect_uri`
    with `code` and `state`, which `POST /auth/sso/exchange` takes within 10 minutes, from
    the same browser: the answer sets the cookie `agentgov_sso` (random, `HttpOnly`,
    `Secure`, `SameSite=Lax`, `Path=/api/v1/auth/sso`, `Max-Age` the state's lifetime) that
    the exchange must carry.

    Args:
        provider (str):
        redirect_uri (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
    """

    kwargs = _get_kwargs(
        provider=provider,
        redirect_uri=redirect_uri,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    provider: str,
    redirect_uri: str | Unset = UNSET,
) -> Any | Problem | None:
    """Start an OpenID Connect sign-in: 302 to the provider's authorization endpoint, with
    `state`, `nonce` and PKCE (S256). The provider sends the user back to `redirect_uri`
    with `code` and `state`, which `POST /auth/sso/exchange` takes within 10 minutes, from
    the same browser: the answer sets the cookie `agentgov_sso` (random, `HttpOnly`,
    `Secure`, `SameSite=Lax`, `Path=/api/v1/auth/sso`, `Max-Age` the state's lifetime) that
    the exchange must carry.

    Args:
        provider (str):
        redirect_uri (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
    """

    return sync_detailed(
        client=client,
        provider=provider,
        redirect_uri=redirect_uri,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    provider: str,
    redirect_uri: str | Unset = UNSET,
) -> Response[Any | Problem]:
    """Start an OpenID Connect sign-in: 302 to the provider's authorization endpoint, with
    `state`, `nonce` and PKCE (S256). The provider sends the user back to `redirect_uri`
    with `code` and `state`, which `POST /auth/sso/exchange` takes within 10 minutes, from
    the same browser: the answer sets the cookie `agentgov_sso` (random, `HttpOnly`,
    `Secure`, `SameSite=Lax`, `Path=/api/v1/auth/sso`, `Max-Age` the state's lifetime) that
    the exchange must carry.

    Args:
        provider (str):
        redirect_uri (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
    """

    kwargs = _get_kwargs(
        provider=provider,
        redirect_uri=redirect_uri,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    provider: str,
    redirect_uri: str | Unset = UNSET,
) -> Any | Problem | None:
    """Start an OpenID Connect sign-in: 302 to the provider's authorization endpoint, with
    `state`, `nonce` and PKCE (S256). The provider sends the user back to `redirect_uri`
    with `code` and `state`, which `POST /auth/sso/exchange` takes within 10 minutes, from
    the same browser: the answer sets the cookie `agentgov_sso` (random, `HttpOnly`,
    `Secure`, `SameSite=Lax`, `Path=/api/v1/auth/sso`, `Max-Age` the state's lifetime) that
    the exchange must carry.

    Args:
        provider (str):
        redirect_uri (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            provider=provider,
            redirect_uri=redirect_uri,
        )
    ).parsed
