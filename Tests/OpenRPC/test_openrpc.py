"""rpc.discover, read by third-party code: the PyPI `openrpc` package's document model
(pydantic) must load it, every schema in it must be valid JSON Schema (draft 7, the
`jsonschema` package), and the real daemon's results must validate against the result
schemas it declares. Run by `make test-openrpc` in its own venv, against
$FRAMERATED_BIN_DIR/framerated (started here on a private socket)."""

import json
import os
import socket
import subprocess
import tempfile
import time

import jsonschema
import openrpc
import pytest


@pytest.fixture(scope="module")
def daemon():
    binary = os.path.join(os.environ["FRAMERATED_BIN_DIR"], "framerated")
    directory = tempfile.mkdtemp(prefix="framerated-openrpc.")
    path = os.path.join(directory, "framerated.sock")
    process = subprocess.Popen([binary, "--socket", path], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(path)
            break
        except OSError:
            sock.close()
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"framerated did not listen on {path}")
            time.sleep(0.02)
    reader = sock.makefile("rb")
    ids = iter(range(1, 1_000_000))

    def call(method, params=None):
        request = {"jsonrpc": "2.0", "id": next(ids), "method": method}
        if params is not None:
            request["params"] = params
        sock.sendall(json.dumps(request).encode() + b"\n")
        while True:
            reply = json.loads(reader.readline())
            if "id" in reply:  # skip Tick and Event notifications
                assert "result" in reply, reply
                return reply["result"]

    yield call
    sock.close()
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def document(daemon):
    return daemon("rpc.discover")


def test_the_openrpc_package_loads_the_document(document):
    model = openrpc.OpenRPC(**document)
    assert model.openrpc.startswith("1.3")
    assert model.info.title == "framerated"
    names = [method.name for method in model.methods]
    assert "framerate.v1.DisplayLink/Register" in names
    assert "rpc.discover" not in names
    register = next(m for m in model.methods if m.name == "framerate.v1.DisplayLink/Register")
    assert [p.name for p in register.params if p.required] == ["range"]
    assert any(error.code == -32602 for error in register.errors)


def test_every_schema_is_valid_json_schema(document):
    for method in document["methods"]:
        for param in method["params"]:
            jsonschema.Draft7Validator.check_schema(param["schema"])
        jsonschema.Draft7Validator.check_schema(method["result"]["schema"])
    for notification in document["x-notifications"]:
        for param in notification["params"]:
            jsonschema.Draft7Validator.check_schema(param["schema"])


def test_real_results_validate_against_the_declared_schemas(daemon, document):
    schemas = {method["name"]: method["result"]["schema"] for method in document["methods"]}
    link = daemon("framerate.v1.DisplayLink/Register", {"range": {"minimum": 30, "maximum": 60, "preferred": 60}})
    results = {
        "framerate.v1.DisplayLink/Register": link,
        "framerate.v1.DisplayLink/Update": daemon("framerate.v1.DisplayLink/Update", {"link": link["link"], "paused": True}),
        "framerate.v1.Compositor/GetState": daemon("framerate.v1.Compositor/GetState"),
        "framerate.v1.Compositor/Watch": daemon("framerate.v1.Compositor/Watch"),
        "grpc.health.v1.Health/Check": daemon("grpc.health.v1.Health/Check"),
        "framerate.v1.Reflection/ListServices": daemon("framerate.v1.Reflection/ListServices"),
        "framerate.v1.DisplayLink/Invalidate": daemon("framerate.v1.DisplayLink/Invalidate", {"link": link["link"]}),
    }
    for name, result in results.items():
        jsonschema.validate(result, schemas[name], cls=jsonschema.Draft7Validator)
    # A wrong result fails, so the validation above is not vacuous.
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"status": 1}, schemas["grpc.health.v1.Health/Check"])
