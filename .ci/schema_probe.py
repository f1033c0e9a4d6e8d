"""Every constraint of the JSON request bodies' schemas, tried one at a time against the live server.

Schemathesis's fuzzing finds a body the server accepts against its schema only when it happens to generate one; this
walks each body's schema alongside a body the server accepts, and sends that body broken in exactly one place (a
string too short or too long, outside its enum or pattern, a number out of range, a wrong type, null where none is
allowed, too few, too many or repeated items, an unknown field, a required field left out). Every one must be a 4xx.

Usage: schema_probe.py BASE_URL APP_ID SECRET_KEY   (in a folder holding the simulator's root.der and catalog.json;
run last: it changes the app's configuration and adds an integration and an experiment)
"""
import base64
import copy
import itertools
import json
import pathlib
import sys
import urllib.error
import urllib.request

import yaml

base, app, secret = sys.argv[1:4]
doc = yaml.safe_load(urllib.request.urlopen(base + "/openapi.yaml").read())
components = doc["components"]["schemas"]


def resolve(schema):
    while isinstance(schema, dict) and "$ref" in schema:
        schema = components[schema["$ref"].split("/")[-1]]
    return schema


def call(method, path, body):
    request = urllib.request.Request(
        base + path, data=json.dumps(body).encode(), method=method,
        headers={"Authorization": "Bearer " + secret, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def private_key():
    """Apple's test signing key (the App Store Server Library's test data, copied into the tests' fixtures)."""
    return (pathlib.Path(__file__).resolve().parent.parent / "Tests/AppStoreTests/Fixtures/appstore-test-ca/testSigningKey.p8").read_text()


def broken(schema, value, path):
    """(what, body → body broken at path) for each way of breaking the value at path that the schema refuses."""
    schema = resolve(schema)
    if not isinstance(schema, dict):
        return

    def put(new):
        def apply(body):
            if not path:
                return new
            target = body
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = new
            return body
        return apply

    def without(key):
        def apply(body):
            target = body
            for step in path:
                target = target[step]
            del target[key]
            return body
        return apply

    where = "/".join(map(str, path)) or "(body)"
    types = schema.get("type")
    types = types if isinstance(types, list) else [types] if types else []
    if types:
        def allowed(candidate):
            if isinstance(candidate, bool):
                return "boolean" in types
            if isinstance(candidate, int):
                return "integer" in types or "number" in types
            return {str: "string", list: "array", dict: "object"}[type(candidate)] in types
        wrong = next(c for c in ("x", 12345, {"a": 1}, [1], True) if not allowed(c))
        yield f"{where}: {json.dumps(wrong)} is not {types}", put(wrong)
        if "null" not in types:
            yield f"{where}: null", put(None)
    if "enum" in schema:
        yield f"{where}: outside its enum", put("zz-unlisted" if isinstance(schema["enum"][0], str) else 999)
    if schema.get("minLength", 0) > 0:
        yield f"{where}: shorter than {schema['minLength']}", put("P"[: schema["minLength"] - 1])
    if "maxLength" in schema:
        yield f"{where}: longer than {schema['maxLength']}", put("P1D" + "0" * schema["maxLength"])
    if "pattern" in schema:
        yield f"{where}: not matching {schema['pattern']}", put("!\n!")
    if schema.get("format") == "uri":
        yield f"{where}: not a URI", put("not a uri")
    whole = "number" not in types
    for key, step in (("minimum", -1), ("maximum", 1)):
        if key in schema:
            limit = float(schema[key])
            yield f"{where}: past its {key}", put(int(limit) + step if whole else limit + step)
    if "exclusiveMaximum" in schema:
        yield f"{where}: at its exclusive maximum", put(float(schema["exclusiveMaximum"]))
    if isinstance(value, list):
        if schema.get("minItems", 0) > 0:
            yield f"{where}: fewer than {schema['minItems']} items", put(value[: schema["minItems"] - 1])
        if "maxItems" in schema:
            yield f"{where}: more than {schema['maxItems']} items", put((value * (schema["maxItems"] + 1))[: schema["maxItems"] + 1])
        if schema.get("uniqueItems") and value:
            yield f"{where}: a repeated item", put(value + value[:1])
        for index, item in enumerate(value):
            if "items" in schema:
                yield from broken(schema["items"], item, path + [index])
    if isinstance(value, dict):
        if schema.get("additionalProperties") is False:
            yield f"{where}: an unknown field", put({**value, "zzUnknown": 1})
        for key in schema.get("required", []):
            if key in value:
                yield f"{where}: without {key}", without(key)
        properties = schema.get("properties") or {}
        for key, item in value.items():
            if key in properties:
                yield from broken(properties[key], item, path + [key])
            elif isinstance(schema.get("additionalProperties"), dict):
                yield from broken(schema["additionalProperties"], item, path + [key])
    for combinator in ("oneOf", "anyOf"):
        alternatives = [resolve(a) for a in schema.get(combinator, [])]
        if alternatives and all(a.get("type") in ("string", "integer", "null") for a in alternatives):
            yield f"{where}: none of its {combinator} (an empty string)", put("")
            yield f"{where}: none of its {combinator} (a fraction)", put(1.5)


root = base64.b64encode(open("root.der", "rb").read()).decode()
catalog = json.load(open("catalog.json"))
configuration = {
    "appAppleId": 5, "environments": ["Sandbox"], "trustedRoots": [root], "sharedSecret": "s",
    "serverAPI": {"issuerId": "i", "keyId": "k", "privateKey": private_key(), "baseURL": "https://api.storekit-sandbox.apple.com"},
    "verifyReceiptURLs": ["https://buy.itunes.apple.com/verifyReceipt", "https://sandbox.itunes.apple.com/verifyReceipt"], "catalog": catalog,
    "transferPolicy": "transfer", "proceeds": {"smallBusinessProgramSince": "2024-01-01", "storefrontTaxRates": {"USA": 0.1}},
    "offerSigningKey": {"keyId": "k", "privateKey": private_key(), "issuerId": "i"}}
webhook = {"kind": "webhook", "name": "probe", "config": {"url": "https://example.com/hook"}, "events": ["trial_started"],
           "environments": ["Sandbox"], "enabled": False, "retrySchedule": [1, 2]}
experiment = {"key": "probe", "placement": "onboarding", "status": "draft", "seed": "s", "phase": 0, "coverage": 1,
              "variants": [{"key": "a", "weight": 0.5, "payload": {"x": 1}}, {"key": "b", "weight": 0.5, "paywall": "plain"}],
              "targeting": {"storefronts": ["USA"], "minAppVersion": "1.0", "maxAppVersion": "2.0", "customerStates": ["new"],
                            "newUsersOnly": False},
              "namespace": {"id": "ns", "start": 0, "end": 1}, "hashVersion": 2}
# What the bodies below refer to, as they need it (the fuzzing before may have changed the app's environments).
for method, path, body in [("PATCH", f"/v1/apps/{app}", configuration),
                           ("PUT", f"/v1/apps/{app}/paywalls/plain", {"products": ["pro.monthly"]}),
                           ("PUT", f"/v1/apps/{app}/placements/onboarding", {"defaultPaywall": "plain"})]:
    status, text = call(method, path, body)
    if status != 200:
        sys.exit(f"could not prepare the probe ({method} {path}): {status} {text}")
status, text = call("POST", f"/v1/apps/{app}/integrations", webhook)
if status != 201:
    sys.exit(f"could not create the probe's integration: {status} {text}")
integration = json.loads(text)["id"]
status, text = call("POST", f"/v1/apps/{app}/experiments", experiment)
if status != 201:
    sys.exit(f"could not create the probe's experiment: {status} {text}")
keys = (f"probe-{n}" for n in itertools.count())


def fresh_key(body):
    """Each created experiment needs a key of its own."""
    if isinstance(body, dict) and body.get("key") == "probe":
        body["key"] = next(keys)
    return body


# (method, path, the document's path, a body the server accepts, a change made to every body sent)
operations = [
    ("PATCH", f"/v1/apps/{app}", "/v1/apps/{appId}", configuration, None),
    ("PUT", f"/v1/apps/{app}/products", "/v1/apps/{appId}/products", {"products": catalog["products"]}, None),
    ("POST", f"/v1/apps/{app}/integrations", "/v1/apps/{appId}/integrations", webhook, None),
    ("PATCH", f"/v1/apps/{app}/integrations/{integration}", "/v1/apps/{appId}/integrations/{integrationId}",
     {k: v for k, v in webhook.items() if k != "kind"}, None),
    ("POST", f"/v1/apps/{app}/experiments", "/v1/apps/{appId}/experiments", experiment, fresh_key),
    ("PATCH", f"/v1/apps/{app}/experiments/probe", "/v1/apps/{appId}/experiments/{experimentKey}",
     {k: v for k, v in experiment.items() if k not in ("key", "status", "phase")}, None),
    ("PUT", f"/v1/apps/{app}/paywalls/plain", "/v1/apps/{appId}/paywalls/{paywallId}",
     {"id": "plain", "products": ["pro.monthly"], "config": {}}, None),
    ("PUT", f"/v1/apps/{app}/placements/onboarding", "/v1/apps/{appId}/placements/{placementId}", {"defaultPaywall": "plain"}, None),
    ("POST", "/v1/customers/probe/alias", "/v1/customers/{appUserId}/alias", {"alias": "probe-alias"}, None),
]
failures = []
tried = 0
for method, path, documented, body, adjust in operations:
    adjust = adjust or (lambda b: b)
    schema = doc["paths"][documented][method.lower()]["requestBody"]["content"]["application/json"]["schema"]
    status, text = call(method, path, adjust(copy.deepcopy(body)))
    if not 200 <= status < 300:
        failures.append(f"{method} {documented}: the valid body is refused: {status} {text[:300]}")
        continue
    for what, breaking in broken(schema, body, []):
        tried += 1
        status, text = call(method, path, adjust(breaking(copy.deepcopy(body))))
        if status < 400 or status >= 500:
            failures.append(f"{method} {documented}: {what}: {status} {text[:200]}")
print(f"schema probe: {tried} bodies, each broken in one place, against {len(operations)} operations")
if failures:
    print("\n".join(failures))
    sys.exit(1)
print("every one was refused with a 4xx")
