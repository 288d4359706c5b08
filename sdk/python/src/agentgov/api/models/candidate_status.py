from enum import Enum


class CandidateStatus(str, Enum):
    CONFIRMED = "confirmed"
    DISMISSED = "dismissed"
    PENDING = "pending"

    def __str__(self) -> str:
        return str(self.value)
