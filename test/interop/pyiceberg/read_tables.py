"""Reads Iceberg tables with PyIceberg, each from one metadata file, and prints their rows as JSON.

Each line of stdin is a JSON list of metadata file locations (a path or a file:// URI; each is read as
it stands, so one request can read a table as it was after each batch); each gets one line on stdout,
a JSON list with one answer per location, in order, until stdin closes (one process serves many
requests: PyArrow's import costs more than reading a small table). Its first line, before any
request, names what it runs: {"pyiceberg": "0.12.0", "pyroaring": ..., "croaring": ..., "pyarrow": ...}.
Each answer:

  {"rows": [...], "deletes": {"POSITION_DELETES/PUFFIN": 2, ...}}   the scan's rows, and how many
                                                  distinct delete files it planned, by content/format
  {"error": {"stage": "load|plan|read", "type": "ValueError", "message": "..."}}

Values keep their exact text: int, long, timestamps (µs since the epoch) and decimals (their plain
text, e.g. "-12.50") are strings; floats stay JSON numbers; binary is hex; structs are objects. One
failing table does not stop the others, so a refusal is an answer, not a crash.
"""

import datetime
import decimal
import json
import sys
from collections import Counter

import pyarrow as pa
import pyiceberg
import pyroaring
from pyiceberg.table import StaticTable

EPOCH = datetime.datetime(1970, 1, 1)
EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
DAY = datetime.date(1970, 1, 1)


def micros(value: datetime.datetime) -> int:
    delta = value - (EPOCH_UTC if value.tzinfo else EPOCH)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def convert(value, kind: pa.DataType):
    """A value of Arrow type `kind` as exact JSON."""
    if value is None:
        return None
    if pa.types.is_struct(kind):
        return {kind.field(i).name: convert(value.get(kind.field(i).name), kind.field(i).type) for i in range(kind.num_fields)}
    if pa.types.is_map(kind):
        return [[convert(k, kind.key_type), convert(v, kind.item_type)] for k, v in value]
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return [convert(item, kind.value_type) for item in value]
    if pa.types.is_timestamp(kind):
        if kind.unit != "us":
            raise TypeError(f"read_tables.py turns only microsecond timestamps into text, not {kind}")
        return str(micros(value))
    if pa.types.is_date(kind):
        return str((value - DAY).days)
    if pa.types.is_time(kind):
        return str((value.hour * 3600 + value.minute * 60 + value.second) * 1_000_000 + value.microsecond)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else repr(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    raise TypeError(f"read_tables.py has no JSON form for {kind}")


def read(location: str) -> dict:
    stage = "load"
    try:
        table = StaticTable.from_metadata(location)
        stage = "plan"
        scan = table.scan()
        planned = {d for task in scan.plan_files() for d in task.delete_files}
        deletes = Counter(f"{d.content.name}/{d.file_format.name}" for d in planned)
        stage = "read"
        arrow = scan.to_arrow()
        rows = [
            {field.name: convert(row[field.name], field.type) for field in arrow.schema}
            for row in arrow.to_pylist()
        ]
        return {"rows": rows, "deletes": dict(deletes)}
    except Exception as error:  # noqa: BLE001 - a refusal is an answer here
        return {"error": {"stage": stage, "type": type(error).__name__, "message": str(error)}}


def main() -> None:
    versions = {
        "pyiceberg": pyiceberg.__version__,
        "pyroaring": pyroaring.__version__,
        "croaring": pyroaring.__croaring_version__,
        "pyarrow": pa.__version__,
    }
    sys.stdout.write(json.dumps(versions) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        sys.stdout.write(json.dumps([read(location) for location in json.loads(line)]) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
