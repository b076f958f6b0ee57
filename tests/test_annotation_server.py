"""The local annotation page refuses what does not come from the annotator's own page (issue #12, item 6):
real HTTP requests (http.client, raw sockets) against the real server on 127.0.0.1 and real Postgres.

Every refusal is a 4xx page with one line, and no judgement is stored."""

from __future__ import annotations

import http.client
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlencode

import pytest
from test_annotation_helpers import make_warehouse

from annotation.results import import_results
from annotation.sampling import sample_batch
from annotation.server import MAX_BODY_BYTES, make_server, serve_in_thread
from warehouse.errors import InputError
from warehouse.target import Target

FORM = "application/x-www-form-urlencoded"


@dataclass
class Response:
    status: int
    headers: http.client.HTTPMessage
    text: str


@dataclass
class Page:
    """The server, and what its annotation page offers to worker `worker`."""

    target: Target
    port: int
    token: str
    item_ids: list[str]

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None, host: str = ""
    ) -> Response:
        """One request with exactly the headers given (no Content-Length unless given)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", host or f"127.0.0.1:{self.port}")
            for key, value in (headers or {}).items():
                conn.putheader(key, value)
            conn.endheaders(body)
            response = conn.getresponse()
            return Response(response.status, response.headers, response.read().decode())
        finally:
            conn.close()

    def post(self, fields: list[tuple[str, str]], headers: dict | None = None, **kwargs) -> Response:
        body = urlencode(fields).encode()
        base = {"Content-Type": FORM, "Content-Length": str(len(body))}
        return self.request("POST", "/submit", body, {**base, **(headers or {})}, **kwargs)

    def answers(self, worker: str, *, token: str | None = None) -> list[tuple[str, str]]:
        """The form a browser would post: every shown item answered "yes"."""
        fields = [("token", self.token if token is None else token), ("worker", worker), ("task", "sherliic")]
        fields += [("item", item_id) for item_id in self.item_ids]
        return fields + [(f"answer_{item_id}", "yes") for item_id in self.item_ids]


def judgements(target: Target) -> int:
    with target.connect() as conn:
        return conn.execute("select count(*) from raw.annotation_judgements").fetchone()[0]


@pytest.fixture(scope="module")
def page(make_target) -> Iterator[Page]:
    target = make_target()
    make_warehouse(target)
    sample_batch(target, "b1", 2, hypotheses_per_premise=2, seed=7)
    server = make_server(target, port=0, judgements_per_item=5)
    serve_in_thread(server)
    port = server.server_address[1]
    try:
        probe = Page(target, port, "", [])
        shown = probe.request("GET", "/?worker=reader&task=sherliic")
        assert shown.status == 200
        (token,) = re.findall(r"name='token' value='([^']+)'", shown.text)
        item_ids = re.findall(r"name='item' value='([^']+)'", shown.text)
        assert len(token) >= 32 and item_ids
        yield Page(target, port, token, item_ids)
    finally:
        server.shutdown()
        server.server_close()


def refused(response: Response, status: int, message: str) -> None:
    assert response.status == status, response.text
    assert re.search(message, response.text), response.text


def test_the_page_is_served_with_its_token_and_security_headers(page: Page) -> None:
    shown = page.request("GET", "/?worker=w0&task=sherliic", host=f"localhost:{page.port}")
    assert shown.status == 200
    assert f"name='token' value='{page.token}'" in shown.text
    assert "frame-ancestors 'none'" in shown.headers["Content-Security-Policy"]


def test_a_form_from_the_page_is_stored(page: Page) -> None:
    before = judgements(page.target)
    origin = {"Origin": f"http://127.0.0.1:{page.port}"}
    response = page.post(page.answers("w-good"), origin)
    assert response.status == 303 and response.headers["Location"].startswith("/?worker=w-good")
    assert judgements(page.target) == before + len(page.item_ids)


@pytest.mark.parametrize(
    ("headers", "host", "token", "status", "message"),
    [
        # another web site's page posting to the annotator's server (CSRF)
        ({"Origin": "http://evil.example"}, "", None, 403, "forms from other web sites are refused"),
        ({"Origin": "null"}, "", None, 403, "forms from other web sites are refused"),
        # DNS rebinding: the browser addresses the server by the attacker's name
        ({}, "evil.example:{port}", None, 400, "only answers to 127.0.0.1 and localhost"),
        # a form without this server's token (an old page, or forged)
        ({}, "", "", 403, "lacks the page token of this server"),
        ({}, "", "forged-token", 403, "lacks the page token of this server"),
    ],
)
def test_forms_not_from_the_page_are_refused(page: Page, headers, host, token, status, message) -> None:
    before = judgements(page.target)
    response = page.post(page.answers("w-forged", token=token), headers, host=host.format(port=page.port))
    refused(response, status, message)
    assert judgements(page.target) == before


def test_a_foreign_host_cannot_read_the_page(page: Page) -> None:
    refused(
        page.request("GET", "/?worker=w0&task=sherliic", host="evil.example"),
        400,
        "only answers to 127.0.0.1 and localhost",
    )


@pytest.mark.parametrize(
    ("body", "headers", "status", "message"),
    [
        (b"", {"Content-Type": FORM}, 411, "Content-Length header is required"),
        (b"worker=w", {"Content-Type": FORM, "Content-Length": "eight"}, 400, "bad Content-Length"),
        (b"", {"Content-Type": FORM, "Transfer-Encoding": "chunked"}, 411, "with a Content-Length"),
        (None, {"Content-Type": FORM, "Content-Length": str(MAX_BODY_BYTES + 1)}, 413, "at most 1000000"),
        (b"worker=w", {"Content-Type": "text/plain", "Content-Length": "8"}, 415, "url-encoded form"),
        (b"worker=\xff\xfe", {"Content-Type": FORM, "Content-Length": "9"}, 400, "not UTF-8"),
        (b"worker=%ff", {"Content-Type": FORM, "Content-Length": "10"}, 400, "not UTF-8"),
        (b"worker", {"Content-Type": FORM, "Content-Length": "6"}, 400, "malformed form"),
    ],
)
def test_malformed_posts_get_a_4xx(page: Page, body, headers, status, message) -> None:
    before = judgements(page.target)
    refused(page.request("POST", "/submit", body, headers), status, message)
    assert judgements(page.target) == before


def test_a_body_shorter_than_its_content_length_gets_a_400(page: Page) -> None:
    with socket.create_connection(("127.0.0.1", page.port), timeout=20) as sock:
        sock.sendall(
            f"POST /submit HTTP/1.1\r\nHost: 127.0.0.1:{page.port}\r\nContent-Type: {FORM}\r\n"
            "Content-Length: 100\r\n\r\nworker=w".encode()
        )
        sock.shutdown(socket.SHUT_WR)
        answer = b"".join(iter(lambda: sock.recv(65536), b"")).decode()
    assert answer.startswith("HTTP/1.0 400") and "shorter than its Content-Length 100" in answer


def test_duplicate_item_ids_are_refused(page: Page) -> None:
    before = judgements(page.target)
    fields = page.answers("w-dup") + [("item", page.item_ids[0])]
    refused(page.post(fields), 400, f"item &#x27;{page.item_ids[0]}&#x27; appears more than once")
    refused(
        page.post(page.answers("w-dup") + [("worker", "w-other")]), 400, "field &#x27;worker&#x27; appears 2"
    )
    assert judgements(page.target) == before


def test_a_judgement_of_another_task_than_its_batch_is_refused(page: Page) -> None:
    """Batch b1 is a SherLIiC batch: Zeichner's two-step judgements of its items are refused."""
    before = judgements(page.target)
    item_id = page.item_ids[0]
    fields = [("token", page.token), ("worker", "w-z"), ("task", "zeichner"), ("item", item_id)]
    fields += [(f"pm_{item_id}", "yes"), (f"hm_{item_id}", "yes"), (f"answer_{item_id}", "yes")]
    refused(page.post(fields), 400, "of task &#x27;sherliic&#x27;, not a &#x27;zeichner&#x27; batch")
    assert judgements(page.target) == before


def test_an_imported_judgement_of_another_task_than_its_batch_is_refused(page: Page, tmp_path) -> None:
    """The same check guards results CSVs (annotation.results.store_judgements is the one place)."""
    before = judgements(page.target)
    path = tmp_path / "zeichner_results.csv"
    path.write_text(
        "item_id,worker_id,premise_meaningful,hypothesis_meaningful,answer\n"
        f"{page.item_ids[0]},w-csv,yes,yes,yes\n"
    )
    with pytest.raises(
        InputError, match=r"zeichner_results.csv:2: item .* of task 'sherliic', not a 'zeichner'"
    ):
        import_results(page.target, path, task="zeichner")
    assert judgements(page.target) == before


def test_ids_the_database_cannot_store_are_refused(page: Page) -> None:
    before = judgements(page.target)
    refused(page.request("GET", "/?worker=w%00x&task=sherliic"), 400, "annotator id contains a NUL")
    refused(page.request("GET", "/?worker=w&batch=b%00"), 400, "batch name contains a NUL")
    refused(page.post(page.answers("w\x00nul")), 400, "annotator id contains a NUL")
    refused(page.post(page.answers("w" * 801)), 400, "identifiers are limited to 800 bytes")
    assert judgements(page.target) == before


def test_the_page_and_the_server_say_when_nothing_is_sampled(fresh_target: Target) -> None:
    """Before `sherliic-annotate sample`, the page says no batch is sampled and how to sample one (not
    "Thank you! … nothing left"); so does the server's start line."""
    server = make_server(fresh_target, port=0)
    serve_in_thread(server)
    try:
        empty = Page(fresh_target, server.server_address[1], "", []).request(
            "GET", "/?worker=ann&task=sherliic"
        )
        assert empty.status == 200 and "Thank you" not in empty.text
        assert (
            "no batch of task sherliic has been sampled: sample one first (sherliic-annotate sample "
            in empty.text
        )
        make_warehouse(fresh_target)
        sample_batch(fresh_target, "b1", 1, hypotheses_per_premise=1, seed=7)
        other = Page(fresh_target, server.server_address[1], "", []).request("GET", "/?worker=ann&batch=b9")
        assert "no batch &#x27;b9&#x27; of task sherliic has been sampled" in other.text
    finally:
        server.shutdown()
        server.server_close()
    started = subprocess.Popen(
        [sys.executable, "-m", "annotation.cli", "serve", "--port", "0", "--task", "zeichner"]
        + ["--database-url", fresh_target.url()],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = [started.stdout.readline().strip() for _ in range(2)]
    finally:
        started.terminate()
        started.wait(timeout=60)
    assert lines[0].startswith("annotation page: http://127.0.0.1:") and lines[0].endswith("(Ctrl-C stops)")
    assert lines[1].startswith("note: no batch of task zeichner has been sampled: sample one first")
    assert "--task zeichner" in lines[1]
