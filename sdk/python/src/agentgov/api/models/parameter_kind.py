from enum import Enum


class ParameterKind(str, Enum):
    BOOLEAN = "boolean"
    NUMBER = "number"
    STRING = "string"
    STRING_LIST = "string_list"
    STRING_LIST_MAP = "string_list_map"

    def __str__(self) -> str:
        return str(self.value)
