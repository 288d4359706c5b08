from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.receive_body import ReceiveBody
from ...models.webhook_ack import WebhookAck
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: ReceiveBody,
    x_webhook_signature: str,
    x_webhook_id: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    headers["X-Webhook-Signature"] = x_webhook_signature

    if not isinstance(x_webhook_id, Unset):
        headers["X-Webhook-Id"] = x_webhook_id

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/webhooks/agent",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | WebhookAck | None:
    if response.status_code == 200:
        response_200 = WebhookAck.from_dict(response.json())

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
) -> Response[Problem | WebhookAck]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: ReceiveBody,
    x_webhook_signature: str,
    x_webhook_id: None | str | Unset = UNSET,
) -> Response[Problem | WebhookAck]:
    r"""Inbound agent events (`agent.action`, `agent.heartbeat`), signed with `WEBHOOK_SECRET`,
    or with the tenant's own webhook secret when it has one (which then replaces the
    server's): `X-Webhook-Signature: sha256=<hex of HMAC-SHA256 over the exact body bytes>`,
    or the timestamped `t=<unix seconds>,v1=<hex of HMAC-SHA256 over \"<t>.\" and the body>`,
    refused when `t` is more than 300 s from the server's clock. Answered once the event is
    durably stored; a repeated `X-Webhook-Id`, or a repeated timestamped signature, is
    answered again and stored once.

    Args:
        x_webhook_signature (str):
        x_webhook_id (None | str | Unset):
        body (ReceiveBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookAck]
    """

    kwargs = _get_kwargs(
        body=body,
        x_webhook_signature=x_webhook_signature,
        x_webhook_id=x_webhook_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: ReceiveBody,
    x_webhook_signature: str,
    x_webhook_id: None | str | Unset = UNSET,
) -> Problem | WebhookAck | None:
    r"""Inbound agent events (`agent.action`, `agent.heartbeat`), signed with `WEBHOOK_SECRET`,
    or with the tenant's own webhook secret when it has one (which then replaces the
    server's): `X-Webhook-Signature: sha256=<hex of HMAC-SHA256 over the exact body bytes>`,
    or the timestamped `t=<unix seconds>,v1=<hex of HMAC-SHA256 over \"<t>.\" and the body>`,
    refused when `t` is more than 300 s from the server's clock. Answered once the event is
    durably stored; a repeated `X-Webhook-Id`, or a repeated timestamped signature, is
    answered again and stored once.

    Args:
        x_webhook_signature (str):
        x_webhook_id (None | str | Unset):
        body (ReceiveBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookAck
    """

    return sync_detailed(
        client=client,
        body=body,
        x_webhook_signature=x_webhook_signature,
        x_webhook_id=x_webhook_id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: ReceiveBody,
    x_webhook_signature: str,
    x_webhook_id: None | str | Unset = UNSET,
) -> Response[Problem | WebhookAck]:
    r"""Inbound agent events (`agent.action`, `agent.heartbeat`), signed with `WEBHOOK_SECRET`,
    or with the tenant's own webhook secret when it has one (which then replaces the
    server's): `X-Webhook-Signature: sha256=<hex of HMAC-SHA256 over the exact body bytes>`,
    or the timestamped `t=<unix seconds>,v1=<hex of HMAC-SHA256 over \"<t>.\" and the body>`,
    refused when `t` is more than 300 s from the server's clock. Answered once the event is
    durably stored; a repeated `X-Webhook-Id`, or a repeated timestamped signature, is
    answered again and stored once.

    Args:
        x_webhook_signature (str):
        x_webhook_id (None | str | Unset):
        body (ReceiveBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookAck]
    """

    kwargs = _get_kwargs(
        body=body,
        x_webhook_signature=x_webhook_signature,
        x_webhook_id=x_webhook_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: ReceiveBody,
    x_webhook_signature: str,
    x_webhook_id: None | str | Unset = UNSET,
) -> Problem | WebhookAck | None:
    r"""Inbound agent events (`agent.action`, `agent.heartbeat`), signed with `WEBHOOK_SECRET`,
    or with the tenant's own webhook secret when it has one (which then replaces the
    server's): `X-Webhook-Signature: sha256=<hex of HMAC-SHA256 over the exact body bytes>`,
    or the timestamped `t=<unix seconds>,v1=<hex of HMAC-SHA256 over \"<t>.\" and the body>`,
    refused when `t` is more than 300 s from the server's clock. Answered once the event is
    durably stored; a repeated `X-Webhook-Id`, or a repeated timestamped signature, is
    answered again and stored once.

    Args:
        x_webhook_signature (str):
        x_webhook_id (None | str | Unset):
        body (ReceiveBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookAck
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            x_webhook_signature=x_webhook_signature,
            x_webhook_id=x_webhook_id,
        )
    ).parsed
