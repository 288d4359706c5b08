from enum import Enum


class CallbackStatus(str, Enum):
    DELIVERED = "delivered"
    FAILED = "failed"
    SCHEDULED = "scheduled"
    WAITING = "waiting"

    def __str__(self) -> str:
        return str(self.value)
