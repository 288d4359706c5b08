from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.guard_task import GuardTask
from ...models.problem import Problem
from ...models.train_request import TrainRequest
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: None | TrainRequest | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/guard/detector/train",
    }

    if isinstance(body, TrainRequest):
        _kwargs["json"] = body.to_dict()
    elif not isinstance(body, Unset):
        _kwargs["json"] = body

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> GuardTask | Problem | None:
    if response.status_code == 202:
        response_202 = GuardTask.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[GuardTask | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: None | TrainRequest | Unset = UNSET,
) -> Response[GuardTask | Problem]:
    r"""Start training a new version of the tenant's detector (`guard:manage`): on the built-in
    corpus, the tenant's feedback, and the examples sent, either as JSON
    (`{\"examples\": [{\"text\", \"label\"}]}`) or as JSON lines (`Content-Type:
    application/x-ndjson`, one `{\"text\", \"label\"}` per line); an empty body sends none. At
    most 10,000 examples of at most 16 KiB each, within the body limit. The new version
    becomes active when the task completes.

    Args:
        body (None | TrainRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GuardTask | Problem]
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
    body: None | TrainRequest | Unset = UNSET,
) -> GuardTask | Problem | None:
    r"""Start training a new version of the tenant's detector (`guard:manage`): on the built-in
    corpus, the tenant's feedback, and the examples sent, either as JSON
    (`{\"examples\": [{\"text\", \"label\"}]}`) or as JSON lines (`Content-Type:
    application/x-ndjson`, one `{\"text\", \"label\"}` per line); an empty body sends none. At
    most 10,000 examples of at most 16 KiB each, within the body limit. The new version
    becomes active when the task completes.

    Args:
        body (None | TrainRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GuardTask | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: None | TrainRequest | Unset = UNSET,
) -> Response[GuardTask | Problem]:
    r"""Start training a new version of the tenant's detector (`guard:manage`): on the built-in
    corpus, the tenant's feedback, and the examples sent, either as JSON
    (`{\"examples\": [{\"text\", \"label\"}]}`) or as JSON lines (`Content-Type:
    application/x-ndjson`, one `{\"text\", \"label\"}` per line); an empty body sends none. At
    most 10,000 examples of at most 16 KiB each, within the body limit. The new version
    becomes active when the task completes.

    Args:
        body (None | TrainRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GuardTask | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: None | TrainRequest | Unset = UNSET,
) -> GuardTask | Problem | None:
    r"""Start training a new version of the tenant's detector (`guard:manage`): on the built-in
    corpus, the tenant's feedback, and the examples sent, either as JSON
    (`{\"examples\": [{\"text\", \"label\"}]}`) or as JSON lines (`Content-Type:
    application/x-ndjson`, one `{\"text\", \"label\"}` per line); an empty body sends none. At
    most 10,000 examples of at most 16 KiB each, within the body limit. The new version
    becomes active when the task completes.

    Args:
        body (None | TrainRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GuardTask | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
