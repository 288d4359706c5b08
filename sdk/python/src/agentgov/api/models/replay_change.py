from enum import Enum


class ReplayChange(str, Enum):
    NEWLY_ALLOWED = "newly_allowed"
    NEWLY_APPROVAL_GATED = "newly_approval_gated"
    NEWLY_DENIED = "newly_denied"

    def __str__(self) -> str:
        return str(self.value)
