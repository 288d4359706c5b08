from enum import Enum


class AuditOrigin(str, Enum):
    CLIENT = "client"
    SERVICE = "service"

    def __str__(self) -> str:
        return str(self.value)
