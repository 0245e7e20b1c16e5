"""The schemathesis hook of test_schemathesis.py, registered on its schema only.

Two rules of the API cannot be written in OpenAPI 3.0, so a positive (schema-valid) case that
breaks them is adjusted before it is sent; negative cases are left alone:

- a `cursor` or `sync_token` is an opaque value signed by the service: any other string is
  400 `invalid_cursor`, and no schema can say which strings the service signed;
- `version` and `as_of` exclude each other (both: 400 `invalid_parameter`);
- a webhook's URL must reach a public address (a `uri` the schema allows can name loopback,
  a private network or no host at all), so a positive registration gets a public URL.

And schemathesis reads every `*json` body as one JSON document, which an NDJSON answer of
`/states?format=ndjson` is not (its lines are checked in test_state_dataset.py).
"""

_OPAQUE = ("cursor", "sync_token")


def map_case(context, case):
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return case
    path = case.operation.path
    if path.endswith("/webhooks") and case.method.upper() == "POST":
        if isinstance(case.body, dict) and "url" in case.body:
            case.body["url"] = "https://hooks.example/compliance"
        return case
    if not case.query:
        return case
    if path.endswith("/changes") or path.endswith("/states"):
        for name in _OPAQUE:
            if case.query.get(name):
                del case.query[name]
        if case.query.get("format") == "ndjson":
            del case.query["format"]
    elif path.endswith("/states/{abbr}") and "version" in case.query and "as_of" in case.query:
        del case.query["as_of"]
    return case
