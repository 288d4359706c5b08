from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.observation import Observation
from ...models.observe_request import ObserveRequest
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    id: str,
    *,
    body: ObserveRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/sessions/{id}/observe".format(
            id=quote(str(id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Observation | Problem | None:
    if response.status_code == 200:
        response_200 = Observation.from_dict(response.json())

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
) -> Response[Observation | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: str,
    *,
    client: AuthenticatedClient,
    body: ObserveRequest,
) -> Response[Observation | Problem]:
    """Record content shown to an agent in a session (a tool result, a web page, an e-mail):
    screened by the Prompt Guard, which raises `untrusted_content_seen` on the session when
    it flags it, with any labels the caller declares, and keeps digests of the addresses,
    IBANs and web hosts that a sentence of it ordered the agent to use (unless `trusted`: the
    user's own request, whose values are the user's). The content is never stored: the
    `agent.observed` audit record keeps its SHA-256, size, verdict, labels and those digests.
    Later checks of the session read the labels as `input.session.labels`, and the values
    their own arguments carry as `input.session.instructed_values` (`policies:check`).

    Args:
        id (str):
        body (ObserveRequest): `POST /sessions/{id}/observe`: content shown to the agent (a tool
            result, a web page, an
            e-mail), screened by the Prompt Guard. The content is never stored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Observation | Problem]
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
    id: str,
    *,
    client: AuthenticatedClient,
    body: ObserveRequest,
) -> Observation | Problem | None:
    """Record content shown to an agent in a session (a tool result, a web page, an e-mail):
    screened by the Prompt Guard, which raises `untrusted_content_seen` on the session when
    it flags it, with any labels the caller declares, and keeps digests of the addresses,
    IBANs and web hosts that a sentence of it ordered the agent to use (unless `trusted`: the
    user's own request, whose values are the user's). The content is never stored: the
    `agent.observed` audit record keeps its SHA-256, size, verdict, labels and those digests.
    Later checks of the session read the labels as `input.session.labels`, and the values
    their own arguments carry as `input.session.instructed_values` (`policies:check`).

    Args:
        id (str):
        body (ObserveRequest): `POST /sessions/{id}/observe`: content shown to the agent (a tool
            result, a web page, an
            e-mail), screened by the Prompt Guard. The content is never stored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Observation | Problem
    """

    return sync_detailed(
        id=id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    id: str,
    *,
    client: AuthenticatedClient,
    body: ObserveRequest,
) -> Response[Observation | Problem]:
    """Record content shown to an agent in a session (a tool result, a web page, an e-mail):
    screened by the Prompt Guard, which raises `untrusted_content_seen` on the session when
    it flags it, with any labels the caller declares, and keeps digests of the addresses,
    IBANs and web hosts that a sentence of it ordered the agent to use (unless `trusted`: the
    user's own request, whose values are the user's). The content is never stored: the
    `agent.observed` audit record keeps its SHA-256, size, verdict, labels and those digests.
    Later checks of the session read the labels as `input.session.labels`, and the values
    their own arguments carry as `input.session.instructed_values` (`policies:check`).

    Args:
        id (str):
        body (ObserveRequest): `POST /sessions/{id}/observe`: content shown to the agent (a tool
            result, a web page, an
            e-mail), screened by the Prompt Guard. The content is never stored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Observation | Problem]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: str,
    *,
    client: AuthenticatedClient,
    body: ObserveRequest,
) -> Observation | Problem | None:
    """Record content shown to an agent in a session (a tool result, a web page, an e-mail):
    screened by the Prompt Guard, which raises `untrusted_content_seen` on the session when
    it flags it, with any labels the caller declares, and keeps digests of the addresses,
    IBANs and web hosts that a sentence of it ordered the agent to use (unless `trusted`: the
    user's own request, whose values are the user's). The content is never stored: the
    `agent.observed` audit record keeps its SHA-256, size, verdict, labels and those digests.
    Later checks of the session read the labels as `input.session.labels`, and the values
    their own arguments carry as `input.session.instructed_values` (`policies:check`).

    Args:
        id (str):
        body (ObserveRequest): `POST /sessions/{id}/observe`: content shown to the agent (a tool
            result, a web page, an
            e-mail), screened by the Prompt Guard. The content is never stored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Observation | Problem
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
        )
    ).parsed
