from enum import Enum


class SecretPurpose(str, Enum):
    CALLBACK = "callback"
    WEBHOOK = "webhook"

    def __str__(self) -> str:
        return str(self.value)
