"""A local annotation web page (stdlib http.server, bound to 127.0.0.1) writing judgements into Postgres.

A lab can annotate without a crowdsourcing platform: the page shows a premise as a fact with example
entities per slot and several candidate hypotheses, with the questions of the paper's Figure 1
(yes / no / incomprehensible). Zeichner's variant first asks whether each side is meaningful, then
whether the premise entails the hypothesis. Each item is served until it has `judgements_per_item`
judgements (judgements of workers excluded by the trust filter do not count, so their items are
re-queued).

Only the annotator's own browser may submit: the server answers requests addressed to it by name
(Host 127.0.0.1:port or localhost:port, which defeats DNS rebinding), refuses form posts from other
origins, and requires the page token that every form carries (random per server start), so a web
page open in another tab cannot submit judgements. Malformed requests get a 4xx answer with one line.
"""

from __future__ import annotations

import hmac
import html
import secrets
import sys
import threading
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

from psycopg.rows import dict_row

from annotation.results import ANSWERS, Judgement, store_judgements, zeichner_judgement
from annotation.sampling import examples_line, group_items
from files.reading import check_id
from warehouse.errors import InputError
from warehouse.target import Target

STYLE = """
body { font-family: sans-serif; max-width: 52em; margin: 2em auto; color: #222; }
.fact { background: #eef4fb; border: 1px solid #9bb8d8; padding: .8em 1em; border-radius: 6px; }
.fact .text { font-size: 1.25em; font-weight: bold; }
.examples { color: #555; margin-top: .3em; }
.item { border: 1px solid #ccc; border-radius: 6px; padding: .6em 1em; margin: .8em 0; }
.item .text { font-size: 1.15em; font-weight: bold; margin-bottom: .4em; }
.question { margin: .3em 0; }
label { margin-right: 1.2em; }
.error { color: #a00; font-weight: bold; }
button { font-size: 1.1em; padding: .4em 1.2em; }
"""


MAX_BODY_BYTES = 1_000_000  # a form of a premise group is a few kB
MAX_FORM_FIELDS = 1_000
LOCAL_HOST_NAMES = ("127.0.0.1", "localhost")
# no scripts, no frames, forms only to this server
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # "no-referrer" would make browsers post Origin: null
}


class RequestError(Exception):
    """A request the page refuses: the HTTP status and one line for the annotator."""

    def __init__(self, status: HTTPStatus, message: str):
        super().__init__(message)
        self.status = status


def _checked_id(value: str, what: str) -> str:
    """An annotator or item id the database can store (non-empty, no NUL, bounded), else a 400."""
    try:
        return check_id(value, what, "request", None)
    except InputError as error:
        raise RequestError(HTTPStatus.BAD_REQUEST, error.problem) from None


def _page(title: str, body: str) -> bytes:
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style></head><body>{body}</body></html>"
    ).encode()


class AnnotationStore:
    """The queries behind the page (one place, also used by tests)."""

    def __init__(self, target: Target, *, judgements_per_item: int = 5):
        self.target = target
        self.judgements_per_item = judgements_per_item
        self.schema = target.marts_schema
        target.ensure_schema()

    def _excluded_workers_sql(self, conn) -> str:
        # After an aggregation run, judgements of workers below the trust threshold do not count.
        exists = conn.execute(
            "select to_regclass(%s)", (f"{self.schema}.annotation_worker_trust",)
        ).fetchone()[0]
        if exists is None:
            return "select null::text as worker_id, null::text as task where false"
        return f"select worker_id, task from {self.schema}.annotation_worker_trust where not is_trusted"

    def sampled_batches(self, task: str) -> list[str]:
        """The names of the sampled batches of `task` (`sherliic-annotate sample` makes them)."""
        with self.target.connect() as conn:
            rows = conn.execute(
                "select batch_name from raw.annotation_batches where task = %s order by batch_name", (task,)
            ).fetchall()
        return [row[0] for row in rows]

    def next_group(self, worker: str, task: str, batch: str | None = None) -> dict | None:
        """The first premise group with items this worker has not judged that still need judgements."""
        with self.target.connect() as conn, conn.cursor(row_factory=dict_row) as cur:
            excluded = self._excluded_workers_sql(conn)
            rows = cur.execute(
                f"""
                with

                excluded as ({excluded}),

                counts as (
                    select j.item_id, count(*) as n_valid
                    from raw.annotation_judgements as j
                    where j.task = %(task)s
                      and not exists (
                          select 1 from excluded as x
                          where x.worker_id = j.worker_id and x.task = j.task
                      )
                    group by j.item_id
                ),

                open_items as (
                    select i.*
                    from raw.annotation_items as i
                    inner join raw.annotation_batches as b using (batch_name)
                    left join counts as c using (item_id)
                    where b.task = %(task)s
                      and (%(batch)s::text is null or i.batch_name = %(batch)s::text)
                      and coalesce(c.n_valid, 0) < %(wanted)s
                      and not exists (
                          select 1 from raw.annotation_judgements as mine
                          where mine.item_id = i.item_id and mine.worker_id = %(worker)s
                            and mine.task = %(task)s
                      )
                ),

                first_group as (
                    select min(premise_group_id) as premise_group_id from open_items
                )

                select open_items.* from open_items inner join first_group using (premise_group_id)
                order by item_id
                """,
                {"task": task, "batch": batch, "wanted": self.judgements_per_item, "worker": worker},
            ).fetchall()
        groups = group_items(rows)
        return groups[0] if groups else None

    def save(self, worker: str, task: str, form: dict[str, str], item_ids: list[str]) -> int:
        """Turn the submitted form into judgements and store them (one transaction)."""
        judgements: list[Judgement] = []
        for item_id in item_ids:
            answer = form.get(f"answer_{item_id}", "")
            if task == "sherliic":
                if answer not in ANSWERS:
                    raise ValueError(f"please answer every statement (missing answer for {item_id})")
                judgements.append(Judgement(item_id, worker, task, answer))
            else:
                flags = [form.get(f"{side}_{item_id}", "") for side in ("pm", "hm")]
                if any(flag not in ("yes", "no") for flag in flags):
                    raise ValueError(f"please say whether both sentences are meaningful ({item_id})")
                pm, hm = (flag == "yes" for flag in flags)
                judgements.append(zeichner_judgement(item_id, worker, pm, hm, answer or None))
        return store_judgements(self.target, judgements, source="web")


SAMPLE_COMMAND = "sherliic-annotate sample --batch b1 --premises 50"  # also `make annotate-sample`


def nothing_sampled(task: str, batch: str | None = None) -> str:
    """Why there is nothing to annotate when no batch is sampled (the page and the server's start line)."""
    which = f"no batch {batch!r} of task {task}" if batch else f"no batch of task {task}"
    task_option = "" if task == "sherliic" else f" --task {task}"
    return (
        f"{which} has been sampled: sample one first ({SAMPLE_COMMAND}{task_option}, or make annotate-sample "
        'ARGS="--batch b1"), then reload this page'
    )


def _nothing_to_annotate(batches: list[str], task: str, batch: str | None) -> bytes:
    if not batches or (batch is not None and batch not in batches):
        message = html.escape(nothing_sampled(task, batch))
        body = f"<h1>Nothing to annotate yet</h1><p id='nothing-sampled'>{message}.</p>"
        return _page("Nothing sampled", body)
    body = "<h1>Thank you!</h1><p id='done'>There is nothing left for you to annotate.</p>"
    return _page("Done", body)


def _group_form(group: dict, worker: str, task: str, batch: str | None, token: str) -> str:
    fact = group["premise_text"]
    examples = examples_line(group["examples_a"], group["examples_b"])
    parts = [
        "<h1>Does the fact imply the statements?</h1>",
        "<div class='fact'><div>Fact:</div>",
        f"<div class='text' id='premise'>{html.escape(fact)}</div>",
        f"<div class='examples'>For example {html.escape(examples)}</div>" if examples else "",
        "</div>",
        "<form method='post' action='/submit'>",
        f"<input type='hidden' name='token' value='{html.escape(token, quote=True)}'>",
        f"<input type='hidden' name='worker' value='{html.escape(worker, quote=True)}'>",
        f"<input type='hidden' name='task' value='{html.escape(task, quote=True)}'>",
        f"<input type='hidden' name='batch' value='{html.escape(batch or '', quote=True)}'>",
    ]
    for item in group["hypotheses"]:
        item_id = html.escape(item["item_id"], quote=True)
        parts.append(f"<input type='hidden' name='item' value='{item_id}'>")
        parts.append(f"<div class='item' data-item='{item_id}'>")
        parts.append(f"<div class='text'>{html.escape(item['hypothesis_text'])}</div>")
        if task == "zeichner":
            for side, question in (
                ("pm", "Is the fact a meaningful sentence?"),
                ("hm", "Is this statement a meaningful sentence?"),
            ):
                parts.append(f"<div class='question'>{question} ")
                for value in ("yes", "no"):
                    parts.append(
                        f"<label><input type='radio' name='{side}_{item_id}' value='{value}'> {value}</label>"
                    )
                parts.append("</div>")
            parts.append(
                "<div class='question'>If both are meaningful: given the fact, is the statement "
                "true as well? "
            )
            options = ("yes", "no")
        else:
            parts.append("<div class='question'>Given the fact, is this statement most likely true as well? ")
            options = ANSWERS
        for value in options:
            parts.append(
                f"<label><input type='radio' name='answer_{item_id}' value='{value}'> {value}</label>"
            )
        parts.append("</div></div>")
    parts.append("<button type='submit' id='submit'>Submit and continue</button></form>")
    parts.append(f"<p>Annotating as <b>{html.escape(worker)}</b> ({html.escape(task)}).</p>")
    return "".join(parts)


def make_handler(store: AnnotationStore, token: str) -> type[BaseHTTPRequestHandler]:
    """The request handler; `token` is the page token every submitted form must carry."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "sherliic-annotate"
        timeout = 30  # seconds a client may take to send a request: a stalled one frees its thread

        def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
            pass  # keep test and terminal output clean

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            for key, value in {**SECURITY_HEADERS, **(headers or {})}.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def _refuse(self, error: RequestError) -> None:
            body = f"<p class='error' id='error'>{html.escape(str(error))}</p><p>Go back and try again.</p>"
            self._send(error.status, _page(error.status.phrase, body))

        def _answer(self, respond) -> None:
            """Run `respond`; a refused request gets its 4xx page, anything else a 500 (never a dropped
            connection)."""
            try:
                self._check_host()
                respond()
            except RequestError as error:
                self._refuse(error)
            except Exception:  # noqa: BLE001 - the annotator gets a page, the operator the traceback
                traceback.print_exc(file=sys.stderr)
                self._refuse(
                    RequestError(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error (see the server log)")
                )

        def _own_hosts(self) -> set[str]:
            host, port = self.server.server_address[:2]
            return {f"{name}:{port}" for name in {host, *LOCAL_HOST_NAMES}}

        def _check_host(self) -> None:
            hosts = self.headers.get_all("Host") or []
            if len(hosts) != 1 or hosts[0].strip().lower() not in self._own_hosts():
                raise RequestError(
                    HTTPStatus.BAD_REQUEST, "this server only answers to 127.0.0.1 and localhost"
                )

        def _check_origin(self) -> None:
            # browsers send Origin with every form post; another site's page gets its own origin here
            origins = self.headers.get_all("Origin") or []
            if any(
                origin.strip().lower() not in {f"http://{h}" for h in self._own_hosts()} for origin in origins
            ):
                raise RequestError(HTTPStatus.FORBIDDEN, "forms from other web sites are refused")

        def _read_form(self) -> dict[str, list[str]]:
            """The posted form: a url-encoded UTF-8 body of at most MAX_BODY_BYTES."""
            if self.headers.get("Transfer-Encoding"):
                raise RequestError(HTTPStatus.LENGTH_REQUIRED, "send the form with a Content-Length")
            lengths = self.headers.get_all("Content-Length") or []
            if not lengths:
                raise RequestError(HTTPStatus.LENGTH_REQUIRED, "a Content-Length header is required")
            if len(lengths) > 1 or not lengths[0].strip().isdigit():
                raise RequestError(HTTPStatus.BAD_REQUEST, f"bad Content-Length {', '.join(lengths)!r}")
            length = int(lengths[0])
            if length > MAX_BODY_BYTES:
                self.close_connection = True  # the body is not read
                raise RequestError(
                    HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"form of {length} bytes (at most {MAX_BODY_BYTES})"
                )
            content_type = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
            if content_type != "application/x-www-form-urlencoded":
                raise RequestError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "expected a url-encoded form")
            try:
                body = self.rfile.read(length)
            except TimeoutError:
                body = b""
            if len(body) != length:
                self.close_connection = True
                raise RequestError(
                    HTTPStatus.BAD_REQUEST, f"form body shorter than its Content-Length {length}"
                )
            try:
                return parse_qs(
                    body.decode("utf-8"),
                    strict_parsing=True,
                    errors="strict",
                    max_num_fields=MAX_FORM_FIELDS,
                )
            except UnicodeDecodeError:
                raise RequestError(HTTPStatus.BAD_REQUEST, "the form is not UTF-8") from None
            except ValueError as error:
                raise RequestError(HTTPStatus.BAD_REQUEST, f"malformed form: {error}") from None

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            self._answer(self._get)

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            self._answer(self._post)

        def _get(self) -> None:
            parsed = urlparse(self.path)
            query = {k: v[0] for k, v in parse_qs(parsed.query).items()}
            worker = query.get("worker", "").strip()
            task = query.get("task", "sherliic")
            batch = query.get("batch") or None
            if parsed.path != "/":
                raise RequestError(HTTPStatus.NOT_FOUND, "not found")
            if task not in ("sherliic", "zeichner"):
                raise RequestError(HTTPStatus.BAD_REQUEST, "unknown task")
            if not worker:
                body = (
                    "<h1>Annotate inference candidates</h1><form method='get' action='/'>"
                    "<label>Your annotator id: "
                    "<input name='worker' id='worker' required maxlength='100'></label>"
                    f"<input type='hidden' name='task' value='{html.escape(task, quote=True)}'>"
                    f"<input type='hidden' name='batch' value='{html.escape(batch or '', quote=True)}'>"
                    "<button type='submit' id='start'>Start</button></form>"
                )
                self._send(HTTPStatus.OK, _page("Annotate", body))
                return
            worker = _checked_id(worker, "annotator id")
            batch = _checked_id(batch, "batch name") if batch else None
            group = store.next_group(worker, task, batch)
            if group is None:
                self._send(HTTPStatus.OK, _nothing_to_annotate(store.sampled_batches(task), task, batch))
                return
            self._send(HTTPStatus.OK, _page("Annotate", _group_form(group, worker, task, batch, token)))

        def _post(self) -> None:
            if urlparse(self.path).path != "/submit":
                raise RequestError(HTTPStatus.NOT_FOUND, "not found")
            self._check_origin()
            fields = self._read_form()
            if not hmac.compare_digest(fields.get("token", [""])[0].encode(), token.encode()):
                raise RequestError(
                    HTTPStatus.FORBIDDEN, "the form lacks the page token of this server: reload the page"
                )
            for name, values in fields.items():
                if name != "item" and len(values) > 1:
                    raise RequestError(HTTPStatus.BAD_REQUEST, f"field {name!r} appears {len(values)} times")
            item_ids = fields.get("item", [])
            repeated = sorted({item_id for item_id in item_ids if item_ids.count(item_id) > 1})
            if repeated:
                raise RequestError(HTTPStatus.BAD_REQUEST, f"item {repeated[0]!r} appears more than once")
            form = {k: v[0] for k, v in fields.items()}
            worker, task, batch = form.get("worker", "").strip(), form.get("task", ""), form.get("batch", "")
            try:
                if not worker or task not in ("sherliic", "zeichner") or not item_ids:
                    raise ValueError("incomplete form (annotator id, task and items are needed)")
                _checked_id(worker, "annotator id")
                for item_id in item_ids:
                    _checked_id(item_id, "item id")
                store.save(worker, task, form, item_ids)
            except (ValueError, InputError) as error:
                raise RequestError(HTTPStatus.BAD_REQUEST, str(error)) from None
            location = "/?" + urlencode({"worker": worker, "task": task, "batch": batch})
            self._send(HTTPStatus.SEE_OTHER, b"", {"Location": location})

    return Handler


def make_server(
    target: Target, host: str = "127.0.0.1", port: int = 8765, *, judgements_per_item: int = 5
) -> ThreadingHTTPServer:
    """A server bound to host:port (port 0 picks a free one; see server.server_address) storing the
    judgements in the Target's Postgres database."""
    store = AnnotationStore(target, judgements_per_item=judgements_per_item)
    return ThreadingHTTPServer((host, port), make_handler(store, secrets.token_urlsafe(32)))


def serve_in_thread(server: ThreadingHTTPServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return thread
