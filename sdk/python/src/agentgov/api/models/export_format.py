from enum import Enum


class ExportFormat(str, Enum):
    CSV = "csv"
    JSON = "json"
    JSONL = "jsonl"

    def __str__(self) -> str:
        return str(self.value)
