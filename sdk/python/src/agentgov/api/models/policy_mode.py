from enum import Enum


class PolicyMode(str, Enum):
    ENFORCE = "enforce"
    OFF = "off"
    SHADOW = "shadow"

    def __str__(self) -> str:
        return str(self.value)
