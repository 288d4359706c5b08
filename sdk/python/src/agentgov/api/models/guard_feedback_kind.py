from enum import Enum


class GuardFeedbackKind(str, Enum):
    ATTACK = "attack"
    FALSE_POSITIVE = "false_positive"

    def __str__(self) -> str:
        return str(self.value)
