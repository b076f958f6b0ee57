"""Import annotation results (from a crowdsourcing platform or a lab) into raw.annotation_judgements.

Format: CSV with header. SherLIiC task: `item_id,worker_id,answer` (answer: yes | no | incomprehensible).
Zeichner task: `item_id,worker_id,premise_meaningful,hypothesis_meaningful,answer` (meaningful: yes/no;
answer may be empty when a side is not meaningful — the judgement then counts as incomprehensible).
Extra columns are ignored. The whole file is validated before anything is written and inserted in
one transaction: a bad file (unknown item id, duplicate judgement, malformed row) raises
`InputError(file, line, problem)` and leaves the database unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from files.reading import check_id, check_input_file, csv_rows
from warehouse.errors import InputError
from warehouse.target import Target

ANSWERS = ("yes", "no", "incomprehensible")
TRUE_WORDS = {
    "yes": True,
    "y": True,
    "true": True,
    "1": True,
    "no": False,
    "n": False,
    "false": False,
    "0": False,
}
REQUIRED = {
    "sherliic": ("item_id", "worker_id", "answer"),
    "zeichner": ("item_id", "worker_id", "premise_meaningful", "hypothesis_meaningful", "answer"),
}


@dataclass(frozen=True)
class Judgement:
    item_id: str
    worker_id: str
    task: str
    answer: str
    premise_meaningful: bool | None = None
    hypothesis_meaningful: bool | None = None
    line: int | None = None


def zeichner_judgement(
    item_id: str,
    worker_id: str,
    premise_meaningful: bool,
    hypothesis_meaningful: bool,
    entails: str | None,
    line: int | None = None,
) -> Judgement:
    """Zeichner et al.'s two steps folded into one answer: a meaningless side -> incomprehensible."""
    if not (premise_meaningful and hypothesis_meaningful):
        answer = "incomprehensible"
    elif entails in ("yes", "no"):
        answer = entails
    else:
        raise ValueError("both sides are meaningful, so the entailment answer must be yes or no")
    return Judgement(item_id, worker_id, "zeichner", answer, premise_meaningful, hypothesis_meaningful, line)


def parse_results(path: Path, task: str = "sherliic") -> list[Judgement]:
    """Read and check a results CSV (syntax and duplicates within the file)."""
    if task not in REQUIRED:
        raise ValueError(f"task must be one of {sorted(REQUIRED)}, not {task!r}")
    name = str(path)
    judgements: list[Judgement] = []
    seen: dict[tuple[str, str], int] = {}
    rows = csv_rows(check_input_file(path))  # UTF-8 (a BOM is fine), no NUL, bounded fields
    _, header = next(rows, (None, None))
    if header is None:
        raise InputError(name, 1, "empty file: expected a header row")
    header = [h.strip().lower() for h in header]
    missing = [c for c in REQUIRED[task] if c not in header]
    if missing:
        raise InputError(name, 1, f"header lacks column(s) {', '.join(missing)} (task {task})")
    index = {c: header.index(c) for c in REQUIRED[task]}
    for line, row in rows:
        if not any(cell.strip() for cell in row):
            continue  # blank line
        if len(row) != len(header):
            raise InputError(name, line, f"malformed row: {len(row)} fields, header has {len(header)}")
        value = {c: row[i].strip() for c, i in index.items()}
        for column in ("item_id", "worker_id"):
            check_id(value[column], column, name, line)
        answer = value["answer"].lower()
        if task == "sherliic":
            if answer not in ANSWERS:
                raise InputError(name, line, f"answer {value['answer']!r} is not one of {', '.join(ANSWERS)}")
            judgement = Judgement(value["item_id"], value["worker_id"], task, answer, line=line)
        else:
            flags = []
            for column in ("premise_meaningful", "hypothesis_meaningful"):
                word = value[column].lower()
                if word not in TRUE_WORDS:
                    raise InputError(name, line, f"{column} {value[column]!r} is not yes/no")
                flags.append(TRUE_WORDS[word])
            if answer == "incomprehensible":
                answer = ""
            try:
                judgement = zeichner_judgement(
                    value["item_id"], value["worker_id"], flags[0], flags[1], answer or None, line
                )
            except ValueError as error:
                raise InputError(name, line, f"answer {value['answer']!r}: {error}") from None
        key = (judgement.item_id, judgement.worker_id)
        if key in seen:
            raise InputError(
                name,
                line,
                f"duplicate judgement: worker {key[1]!r} already judged item {key[0]!r} on line {seen[key]}",
            )
        seen[key] = line
        judgements.append(judgement)
    return judgements


def store_judgements(target: Target, judgements: list[Judgement], source: str, *, file: str = "") -> int:
    """Insert judgements in one transaction after checking item ids and earlier judgements.

    A judgement already stored with the same answer from the same source is skipped (re-importing a
    file is idempotent); any other earlier judgement of the same worker and item is a duplicate.
    Returns the number of new judgements.
    """
    if not judgements:
        return 0
    target.ensure_schema()
    where = file or source
    with target.connect() as conn:
        items = [j.item_id for j in judgements]
        batch_of = {
            item_id: (batch, task)
            for item_id, batch, task in conn.execute(
                "select items.item_id, items.batch_name, batches.task from raw.annotation_items as items "
                "inner join raw.annotation_batches as batches using (batch_name) "
                "where items.item_id = any(%s)",
                (items,),
            ).fetchall()
        }
        for j in judgements:
            if j.item_id not in batch_of:
                raise InputError(
                    where, j.line, f"unknown item id {j.item_id!r} (not in raw.annotation_items)"
                )
            batch, task = batch_of[j.item_id]
            if task != j.task:
                raise InputError(
                    where,
                    j.line,
                    f"item {j.item_id!r} is in batch {batch!r} of task {task!r}, not a {j.task!r} batch",
                )
        existing = {
            (r[0], r[1]): (r[2], r[3])
            for r in conn.execute(
                "select item_id, worker_id, answer, source from raw.annotation_judgements "
                "where task = %s and item_id = any(%s)",
                (judgements[0].task, items),
            ).fetchall()
        }
        new = []
        for j in judgements:
            before = existing.get((j.item_id, j.worker_id))
            if before is None:
                new.append(j)
            elif before != (j.answer, source):
                raise InputError(
                    where,
                    j.line,
                    f"duplicate judgement: worker {j.worker_id!r} has already judged item {j.item_id!r} "
                    f"({before[0]!r} from {before[1]})",
                )
            # else: the same judgement from the same source — re-importing a file is a no-op
        with conn.cursor() as cur:
            cur.executemany(
                "insert into raw.annotation_judgements (item_id, worker_id, task, answer, "
                "premise_meaningful, "
                "hypothesis_meaningful, source, source_line) values (%s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    (
                        j.item_id,
                        j.worker_id,
                        j.task,
                        j.answer,
                        j.premise_meaningful,
                        j.hypothesis_meaningful,
                        source,
                        j.line,
                    )
                    for j in new
                ],
            )
        conn.commit()
    return len(new)


def import_results(target: Target, path: Path, task: str = "sherliic") -> int:
    """Validate and import a results CSV; returns the number of judgements stored."""
    path = Path(path)
    judgements = parse_results(path, task)
    return store_judgements(target, judgements, source=f"file:{path.name}", file=str(path))
