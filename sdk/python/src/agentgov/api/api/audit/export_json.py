import datetime
from http import HTTPStatus
from typing import Any
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.actor_type import ActorType
from ...models.audit_record import AuditRecord
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    agent_id: UUID | Unset = UNSET,
    event_type: str | Unset = UNSET,
    action: str | Unset = UNSET,
    decision: str | Unset = UNSET,
    actor_type: ActorType | Unset = UNSET,
    actor_id: str | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    session_id: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_agent_id: str | Unset = UNSET
    if not isinstance(agent_id, Unset):
        json_agent_id = str(agent_id)
    params["agent_id"] = json_agent_id

    params["event_type"] = event_type

    params["action"] = action

    params["decision"] = decision

    json_actor_type: str | Unset = UNSET
    if not isinstance(actor_type, Unset):
        json_actor_type = actor_type.value

    params["actor_type"] = json_actor_type

    params["actor_id"] = actor_id

    json_from_: str | Unset = UNSET
    if not isinstance(from_, Unset):
        json_from_ = from_.isoformat()
    params["from"] = json_from_

    json_to: str | Unset = UNSET
    if not isinstance(to, Unset):
        json_to = to.isoformat()
    params["to"] = json_to

    params["session_id"] = session_id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/audit/export/json",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | list[AuditRecord] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = AuditRecord.from_dict(response_200_item_data)

            response_200.append(response_200_item)

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
) -> Response[Problem | list[AuditRecord]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    agent_id: UUID | Unset = UNSET,
    event_type: str | Unset = UNSET,
    action: str | Unset = UNSET,
    decision: str | Unset = UNSET,
    actor_type: ActorType | Unset = UNSET,
    actor_id: str | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    session_id: str | Unset = UNSET,
) -> Response[Problem | list[AuditRecord]]:
    """Export the filtered records as one JSON array, oldest first.

    Args:
        agent_id (UUID | Unset):
        event_type (str | Unset):
        action (str | Unset):
        decision (str | Unset):
        actor_type (ActorType | Unset): Who caused an audited event.
        actor_id (str | Unset):
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        session_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | list[AuditRecord]]
    """

    kwargs = _get_kwargs(
        agent_id=agent_id,
        event_type=event_type,
        action=action,
        decision=decision,
        actor_type=actor_type,
        actor_id=actor_id,
        from_=from_,
        to=to,
        session_id=session_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    agent_id: UUID | Unset = UNSET,
    event_type: str | Unset = UNSET,
    action: str | Unset = UNSET,
    decision: str | Unset = UNSET,
    actor_type: ActorType | Unset = UNSET,
    actor_id: str | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    session_id: str | Unset = UNSET,
) -> Problem | list[AuditRecord] | None:
    """Export the filtered records as one JSON array, oldest first.

    Args:
        agent_id (UUID | Unset):
        event_type (str | Unset):
        action (str | Unset):
        decision (str | Unset):
        actor_type (ActorType | Unset): Who caused an audited event.
        actor_id (str | Unset):
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        session_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | list[AuditRecord]
    """

    return sync_detailed(
        client=client,
        agent_id=agent_id,
        event_type=event_type,
        action=action,
        decision=decision,
        actor_type=actor_type,
        actor_id=actor_id,
        from_=from_,
        to=to,
        session_id=session_id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    agent_id: UUID | Unset = UNSET,
    event_type: str | Unset = UNSET,
    action: str | Unset = UNSET,
    decision: str | Unset = UNSET,
    actor_type: ActorType | Unset = UNSET,
    actor_id: str | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    session_id: str | Unset = UNSET,
) -> Response[Problem | list[AuditRecord]]:
    """Export the filtered records as one JSON array, oldest first.

    Args:
        agent_id (UUID | Unset):
        event_type (str | Unset):
        action (str | Unset):
        decision (str | Unset):
        actor_type (ActorType | Unset): Who caused an audited event.
        actor_id (str | Unset):
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        session_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | list[AuditRecord]]
    """

    kwargs = _get_kwargs(
        agent_id=agent_id,
        event_type=event_type,
        action=action,
        decision=decision,
        actor_type=actor_type,
        actor_id=actor_id,
        from_=from_,
        to=to,
        session_id=session_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    agent_id: UUID | Unset = UNSET,
    event_type: str | Unset = UNSET,
    action: str | Unset = UNSET,
    decision: str | Unset = UNSET,
    actor_type: ActorType | Unset = UNSET,
    actor_id: str | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    session_id: str | Unset = UNSET,
) -> Problem | list[AuditRecord] | None:
    """Export the filtered records as one JSON array, oldest first.

    Args:
        agent_id (UUID | Unset):
        event_type (str | Unset):
        action (str | Unset):
        decision (str | Unset):
        actor_type (ActorType | Unset): Who caused an audited event.
        actor_id (str | Unset):
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        session_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | list[AuditRecord]
    """

    return (
        await asyncio_detailed(
            client=client,
            agent_id=agent_id,
            event_type=event_type,
            action=action,
            decision=decision,
            actor_type=actor_type,
            actor_id=actor_id,
            from_=from_,
            to=to,
            session_id=session_id,
        )
    ).parsed
