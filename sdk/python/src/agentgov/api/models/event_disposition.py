from enum import Enum


class EventDisposition(str, Enum):
    ATTRIBUTED = "attributed"
    SHADOW = "shadow"
    SUPPRESSED = "suppressed"

    def __str__(self) -> str:
        return str(self.value)
