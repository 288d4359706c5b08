from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.guard_label import GuardLabel

if TYPE_CHECKING:
    from ..models.guard_scores import GuardScores


T = TypeVar("T", bound="Validation")


@_attrs_define
class Validation:
    """The answer of `POST /guard/validate`.

    Attributes:
        latency_ms (float): Time spent screening, in milliseconds.
        model_version (int): The tenant's active model version (0: the built-in default).
        reasons (list[str]): What led to the verdict: `rule:<name>`, `secret:<kind>`, `obfuscation:<kind>`,
            `decoded:<encoding>`, `classifier:<kind>`, `system_prompt_echo`.
        safe (bool): `false` when the text is an attack.
        score (float): How likely the text is an attack of any kind (0..1); blocked at or above `threshold`.
        scores (GuardScores): A score per kind of attack (0..1).
        threshold (float):
        validation_id (UUID): Refer to this validation in feedback; a blocked one is the id of its audit record.
        verdict (GuardLabel): What a text is: benign, or one of the three kinds of attack.
    """

    latency_ms: float
    model_version: int
    reasons: list[str]
    safe: bool
    score: float
    scores: GuardScores
    threshold: float
    validation_id: UUID
    verdict: GuardLabel
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        latency_ms = self.latency_ms

        model_version = self.model_version

        reasons = self.reasons

        safe = self.safe

        score = self.score

        scores = self.scores.to_dict()

        threshold = self.threshold

        validation_id = str(self.validation_id)

        verdict = self.verdict.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "latency_ms": latency_ms,
                "model_version": model_version,
                "reasons": reasons,
                "safe": safe,
                "score": score,
                "scores": scores,
                "threshold": threshold,
                "validation_id": validation_id,
                "verdict": verdict,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.guard_scores import GuardScores

        d = dict(src_dict)
        latency_ms = d.pop("latency_ms")

        model_version = d.pop("model_version")

        reasons = cast(list[str], d.pop("reasons"))

        safe = d.pop("safe")

        score = d.pop("score")

        scores = GuardScores.from_dict(d.pop("scores"))

        threshold = d.pop("threshold")

        validation_id = UUID(d.pop("validation_id"))

        verdict = GuardLabel(d.pop("verdict"))

        validation = cls(
            latency_ms=latency_ms,
            model_version=model_version,
            reasons=reasons,
            safe=safe,
            score=score,
            scores=scores,
            threshold=threshold,
            validation_id=validation_id,
            verdict=verdict,
        )

        validation.additional_properties = d
        return validation

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
