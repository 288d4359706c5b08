from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.guard_label import GuardLabel

if TYPE_CHECKING:
    from ..models.session_view import SessionView


T = TypeVar("T", bound="Observation")


@_attrs_define
class Observation:
    """The answer of `POST /sessions/{id}/observe`.

    Attributes:
        digest (str): `sha256:` and the content's SHA-256, hex: what the record keeps of the content.
        flagged (bool): Whether the Prompt Guard flagged the content (then `untrusted_content_seen` is
            raised).
        instructed (list[str]): The values (e-mail addresses, IBANs, web hosts) that the content, unless trusted,
            told the agent to use: a later check of the session whose arguments carry one reads
            it in `input.session.instructed_values`. The record keeps only digests.
        labels (list[str]): The labels this observation raised: the declared ones and the Prompt Guard's.
        observation_id (UUID): A record of the audit log.
        reasons (list[str]): Why the Prompt Guard flagged it (its rules and stages, as `/guard/validate` gives).
        score (float):
        session (SessionView): An agent session as its checks see it (`input.session`) and `GET /sessions/{id}`
            answers it: what happened before the current check.
        verdict (GuardLabel): What a text is: benign, or one of the three kinds of attack.
    """

    digest: str
    flagged: bool
    instructed: list[str]
    labels: list[str]
    observation_id: UUID
    reasons: list[str]
    score: float
    session: SessionView
    verdict: GuardLabel
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        digest = self.digest

        flagged = self.flagged

        instructed = self.instructed

        labels = self.labels

        observation_id = str(self.observation_id)

        reasons = self.reasons

        score = self.score

        session = self.session.to_dict()

        verdict = self.verdict.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "digest": digest,
                "flagged": flagged,
                "instructed": instructed,
                "labels": labels,
                "observation_id": observation_id,
                "reasons": reasons,
                "score": score,
                "session": session,
                "verdict": verdict,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.session_view import SessionView

        d = dict(src_dict)
        digest = d.pop("digest")

        flagged = d.pop("flagged")

        instructed = cast(list[str], d.pop("instructed"))

        labels = cast(list[str], d.pop("labels"))

        observation_id = UUID(d.pop("observation_id"))

        reasons = cast(list[str], d.pop("reasons"))

        score = d.pop("score")

        session = SessionView.from_dict(d.pop("session"))

        verdict = GuardLabel(d.pop("verdict"))

        observation = cls(
            digest=digest,
            flagged=flagged,
            instructed=instructed,
            labels=labels,
            observation_id=observation_id,
            reasons=reasons,
            score=score,
            session=session,
            verdict=verdict,
        )

        observation.additional_properties = d
        return observation

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
