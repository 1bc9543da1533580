#!/usr/bin/env python3
"""A client that is not ours: Python grpcio with stubs generated from proto/.

Pushes SERIES series x SAMPLES samples to two tenants through gRPC Ingester.Push, reads everything
back through QueryStream and through HTTP /api/v1/export, and checks that each tenant gets exactly
what it wrote and nothing of the other tenant. Exits 0 on success, 1 with a reason otherwise.

usage: grpc_roundtrip.py STUB_DIR GRPC_TARGET HTTP_URL [SERIES] [SAMPLES]
"""
import json
import sys
import time
import urllib.parse
import urllib.request

stub_dir, grpc_target, http_url = sys.argv[1], sys.argv[2], sys.argv[3]
SERIES = int(sys.argv[4]) if len(sys.argv) > 4 else 10000
SAMPLES = int(sys.argv[5]) if len(sys.argv) > 5 else 10
BATCH = 1000  # series per push
sys.path.insert(0, stub_dir)

import grpc  # noqa: E402
from prometheus import remote_pb2, types_pb2  # noqa: E402
from weir import ingester_pb2, ingester_pb2_grpc  # noqa: E402

TENANTS = ["tenant-a", "tenant-b"]
T0 = int(time.time() * 1000) - 600_000  # ten minutes ago, inside every validity window


def expected_data(tenant):
    """Deterministic, distinct data per tenant: {labels tuple: [(ts, value), ...]}."""
    data = {}
    for s in range(SERIES):
        labels = (("__name__", "py_metric_%d" % (s % 7)), ("instance", "host-%05d" % s),
                  ("job", "python"), ("owner", tenant))
        step = 15_000 + (s % 3)
        data[labels] = [(T0 + j * step, s * 0.25 + j * 1.5 + (1000 if tenant == "tenant-b" else 0))
                        for j in range(SAMPLES)]
    return data


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def push(stub, tenant, data):
    items = list(data.items())
    for i in range(0, len(items), BATCH):
        req = remote_pb2.WriteRequest()
        for labels, samples in items[i:i + BATCH]:
            ts = req.timeseries.add()
            for name, value in labels:
                lab = ts.labels.add()
                lab.name, lab.value = name, value
            for t, v in samples:
                smp = ts.samples.add()
                smp.timestamp, smp.value = t, v
        stub.Push(req, metadata=(("x-scope-orgid", tenant),), timeout=60)


def query_stream(stub, tenant):
    req = ingester_pb2.QueryRequest(start_timestamp_ms=0, end_timestamp_ms=2**62)
    m = req.matchers.add()
    m.type, m.name, m.value = types_pb2.LabelMatcher.RE, "__name__", "py_metric_.*"
    got = {}
    for resp in stub.QueryStream(req, metadata=(("x-scope-orgid", tenant),), timeout=120):
        for ts in resp.timeseries:
            key = tuple((l.name, l.value) for l in ts.labels)
            if key in got:
                fail("series returned twice by QueryStream: %s" % (key,))
            got[key] = [(s.timestamp, s.value) for s in ts.samples]
    return got


def export(tenant):
    q = urllib.parse.urlencode({"match[]": '{__name__=~"py_metric_.*"}'})
    req = urllib.request.Request(http_url + "/api/v1/export?" + q, headers={"X-Scope-OrgID": tenant})
    got = {}
    with urllib.request.urlopen(req, timeout=120) as resp:
        for line in resp:
            obj = json.loads(line)
            key = tuple(sorted(obj["metric"].items()))
            got[key] = list(zip(obj["timestamps"], [float(v) for v in obj["values"]]))
    return got


def compare(what, tenant, want, got):
    if got == want:
        return
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    differ = [k for k in want if k in got and got[k] != want[k]]
    fail("%s for %s: %d series missing, %d unexpected, %d with different samples; e.g. %s" % (
        what, tenant, len(missing), len(extra), len(differ), (missing + extra + differ)[:1]))


def main():
    channel = grpc.insecure_channel(grpc_target, options=[
        ("grpc.max_receive_message_length", 256 << 20), ("grpc.max_send_message_length", 256 << 20)])
    stub = ingester_pb2_grpc.IngesterStub(channel)
    want = {t: expected_data(t) for t in TENANTS}
    for t in TENANTS:
        push(stub, t, want[t])
    for t in TENANTS:
        compare("QueryStream", t, want[t], query_stream(stub, t))
        compare("/api/v1/export", t, want[t], export(t))
        other = [x for x in TENANTS if x != t][0]
        names = stub.LabelValues(ingester_pb2.LabelValuesRequest(
            label_name="owner", start_timestamp_ms=0, end_timestamp_ms=2**62),
            metadata=(("x-scope-orgid", t),)).label_values
        if list(names) != [t]:
            fail("tenant %s sees owner values %s (other tenant %s leaked?)" % (t, list(names), other))
    try:
        stub.Push(remote_pb2.WriteRequest(), timeout=10)
        fail("push without tenant succeeded")
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.UNAUTHENTICATED:
            fail("push without tenant: expected UNAUTHENTICATED, got %s" % e.code())
    print("OK: %d tenants x %d series x %d samples round-tripped through gRPC and /api/v1/export"
          % (len(TENANTS), SERIES, SAMPLES), flush=True)


main()
