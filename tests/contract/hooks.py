"""Schemathesis hooks for the contract runs (schemathesis.toml loads this file).

Two hooks. One reasoned exception, and nothing else: JSON Schema cannot address an array's
last item, so `openapi.yaml` says in words that a chat's last message is the user's
question, and a generated conversation that ends with an answer instead is rightly
refused with 400 `invalid_parameter` naming `messages`. Schemathesis counts that as
a schema-valid request rejected (ST202); this hook drops exactly that failure, for
exactly such a body, and every other failure stands. (That a user's message is not
blank the schema says itself: `minLength` and a `pattern`, so no hook is needed for
it.) tests/edge/contract.rs checks both sides of the rule against the function
directly. And one substitution before a call: feedback names what the server
under test gave (an answer's id, a page of its site), which generated values
cannot, so schema-valid feedback bodies get real ones (see `before_call`).
"""

import schemathesis


def _ends_with_an_answer(body):
    """The conversation's last message is not the user's."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or not messages:
        return False
    last = messages[-1]
    return isinstance(last, dict) and last.get("role") != "user"


@schemathesis.hook
def filter_failure(context, failure, case, response):
    if getattr(failure, "code", None) != "ST202" or case.operation.label != "POST /api/chat":
        return True
    try:
        error = response.json()["error"]
    except Exception:
        return True
    refused_as_documented = (
        response.status_code == 400 and error.get("code") == "invalid_parameter" and error.get("parameter") == "messages"
    )
    return not (refused_as_documented and _ends_with_an_answer(case.body))


# Feedback is taken only for an answer the function gave (404 `unknown_answer`
# for any other id), so ids that Schemathesis makes up are all refused, and it
# would rightly warn that no valid feedback was ever accepted. A real id, from one
# chat asked of the server under test, goes into three of four schema-valid
# bodies (every one in the examples phase, which has a single example); the
# fourth keeps its made-up id and checks the 404. Invalid bodies, and the
# stateful phase (which takes its id from the chat it just ran, by the link in
# openapi.yaml), are left as generated.
_ANSWER_IDS = []


def _real_answer_id(case):
    """The id of one answer of the server under test, asked for once; `None` when
    the chat is refused (the run against a host whose every limit is 1 a minute,
    where the 429s are what is checked)."""
    if not _ANSWER_IDS:
        import json
        import urllib.error
        import urllib.request

        url = case.operation.schema.get_base_url().rstrip("/") + "/api/chat"
        body = json.dumps({"messages": [{"role": "user", "content": "How do I buy a parking permit?"}]}).encode()
        request = urllib.request.Request(url, data=body, headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                _ANSWER_IDS.append(json.load(response)["id"])
        except urllib.error.HTTPError as e:
            if e.code != 429:
                raise
            _ANSWER_IDS.append(None)
    return _ANSWER_IDS[0]


# A page's feedback (a body with `page` and no `id`) is taken only for a page of
# the site under test (400 `unknown_page` for any other), which no schema can
# list: every schema-valid one gets the URL of a real page, found by one search
# of that server, in every phase (no link supplies one in the stateful phase).
# tests/edge/contract.rs and tests/edge/feedback.rs check the 400 for the rest.
_PAGES = []


def _real_page(case):
    """The URL of one page of the server under test, as its search names it (the
    `#anchor` dropped), asked for once; `None` when the search is refused (the
    run where every limit is 1 a minute)."""
    if not _PAGES:
        import json
        import urllib.error
        import urllib.request

        url = case.operation.schema.get_base_url().rstrip("/") + "/api/search?q=parking+permit&k=1&mode=bm25"
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                _PAGES.append(json.load(response)["results"][0]["url"].split("#")[0])
        except urllib.error.HTTPError as e:
            if e.code != 429:
                raise
            _PAGES.append(None)
    return _PAGES[0]


@schemathesis.hook
def before_call(context, case, kwargs):
    import zlib

    from schemathesis.generation import GenerationMode

    meta = case.meta
    if case.operation.label != "POST /api/feedback" or meta is None:
        return
    if meta.generation.mode != GenerationMode.POSITIVE:
        return
    body = case.body
    if isinstance(body, dict) and "id" not in body and isinstance(body.get("page"), str):
        page = _real_page(case)
        if page is not None:
            body["page"] = page
        return
    if meta.phase.name.value == "stateful":
        return
    if not isinstance(body, dict) or not isinstance(body.get("id"), str):
        return
    if meta.phase.name.value != "examples" and zlib.crc32(body["id"].encode()) % 4 == 0:
        return
    real = _real_answer_id(case)
    if real is not None:
        body["id"] = real
