//! The built binary with `LENSERFIGHT_OTLP_ENDPOINT` set to a collector
//! of the test's own on 127.0.0.1 (a few lines of HTTP reading OTLP's
//! protobuf): a workflow run's span is the parent of its steps' spans, in
//! one trace, and a tool call whose `_meta` carries a W3C `traceparent`
//! continues that trace, whether rmcp or the direct path answers it.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::json;

mod piped;
use piped::{BIN, Piped};

const LENSER: &str = "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d";

/// Spans posted to `/v1/traces`, as the collector received them.
type Received = Arc<Mutex<Vec<Span>>>;

/// A collector on 127.0.0.1: answers every POST with 200 and keeps the
/// spans of those to `/v1/traces`. Its address.
fn collector() -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let received = Received::default();
    let kept = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let kept = kept.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                // Requests one after another on a kept-alive connection.
                loop {
                    let mut head = String::new();
                    if reader.read_line(&mut head).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut length = 0;
                    loop {
                        let mut line = String::new();
                        reader.read_line(&mut line).unwrap();
                        if line.trim().is_empty() {
                            break;
                        }
                        if let Some((k, v)) = line.split_once(':')
                            && k.eq_ignore_ascii_case("content-length")
                        {
                            length = v.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    if head.starts_with("POST /v1/traces ") {
                        let request = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
                        let mut k = kept.lock().unwrap();
                        for resource in request.resource_spans {
                            for scope in resource.scope_spans {
                                k.extend(scope.spans);
                            }
                        }
                    }
                    let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                    stream.write_all(answer.as_bytes()).unwrap();
                }
            });
        }
    });
    (address, received)
}

/// A span's string attribute `key`.
fn attribute<'a>(span: &'a Span, key: &str) -> Option<&'a str> {
    span.attributes.iter().find(|kv| kv.key == key).and_then(|kv| {
        match kv.value.as_ref()?.value.as_ref()? {
            Any::StringValue(s) => Some(s.as_str()),
            _ => None,
        }
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_runs_steps_are_its_spans_children_and_a_traceparent_is_continued() {
    let (endpoint, received) = collector();
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(BIN);
    cmd.env("LENSERFIGHT_DATABASE_URL", format!("sqlite:{}", dir.path().join("traces.db").display()))
        .env("LENSERFIGHT_LENSER_ID", LENSER)
        .env("LENSERFIGHT_LOG", "warn")
        .env("LENSERFIGHT_OTLP_ENDPOINT", &endpoint)
        .env_remove("LENSERFIGHT_CONFIG")
        .env_remove("OTEL_TRACES_SAMPLER")
        .env_remove("OTEL_SERVICE_NAME")
        .env("XDG_CONFIG_HOME", dir.path());
    let mut s = Piped::start(cmd, "traces");

    let manual = json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"});
    let log = json!({"key": "log", "kind": "tool", "name": "Log", "node_type": "logger",
                     "config": {"message": "traced", "level": "info"}});
    let made = s.tool(
        "create_workflow",
        json!({"title": "Traced", "visibility": "private", "steps": [manual, log],
               "connections": [{"from_step": "start", "to_step": "log", "input_parameter": "input"}]}),
    );
    // Two calls continuing two traces of the "client".
    let (start_trace, start_parent) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let (read_trace, read_parent) = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");
    let traceparent = |trace: &str, parent: &str| format!("00-{trace}-{parent}-01");
    let started = s.call(
        "tools/call",
        json!({"name": "run_workflow", "arguments": {"workflow_id": made["id"]},
               "_meta": {"traceparent": traceparent(start_trace, start_parent)}}),
    );
    let result = &started["result"];
    let run = result["structuredContent"]["id"]
        .as_str()
        .or_else(|| result["task"]["taskId"].as_str())
        .unwrap_or_else(|| panic!("a run's id: {started}"))
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status = s.call(
            "tools/call",
            json!({"name": "get_workflow_run_status", "arguments": {"run_id": run},
                   "_meta": {"traceparent": traceparent(read_trace, read_parent)}}),
        );
        let status = &status["result"]["structuredContent"]["status"];
        if status == "completed" {
            break;
        }
        assert_ne!(status, "failed");
        assert!(Instant::now() < deadline, "the run did not complete: {status}");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Leaving sends the spans still batched.
    assert!(s.finish().success());

    let spans = received.lock().unwrap().clone();
    let named = |name: &str| -> Vec<&Span> { spans.iter().filter(|s| s.name == name).collect() };
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();

    let runs: Vec<&Span> = named("workflow run")
        .into_iter()
        .filter(|s| attribute(s, "lf.run.id") == Some(run.as_str()))
        .collect();
    assert_eq!(runs.len(), 1, "one drive of the run: {names:?}");
    let run_span = runs[0];
    assert_eq!(attribute(run_span, "lf.workflow.id"), made["id"].as_str());
    let steps = named("step log");
    assert_eq!(steps.len(), 1, "the logger step ran once: {names:?}");
    for step in steps.iter().chain(named("step start").iter()) {
        assert_eq!(step.trace_id, run_span.trace_id, "a step is in its run's trace");
        assert_eq!(step.parent_span_id, run_span.span_id, "a step's parent is its run");
        assert_eq!(attribute(step, "lf.step.key").map(|k| format!("step {k}")), Some(step.name.clone()));
    }

    let calls = |tool: &str| -> Vec<&Span> { named(&format!("tools/call {tool}")) };
    let start = calls("run_workflow");
    assert_eq!(start.len(), 1, "{names:?}");
    assert_eq!(hex(&start[0].trace_id), start_trace, "run_workflow continues the client's trace");
    assert_eq!(hex(&start[0].parent_span_id), start_parent);
    assert_eq!(attribute(start[0], "gen_ai.tool.name"), Some("run_workflow"));
    let reads = calls("get_workflow_run_status");
    assert!(!reads.is_empty(), "{names:?}");
    for read in reads {
        assert_eq!(hex(&read.trace_id), read_trace, "each read continues the client's trace");
        assert_eq!(hex(&read.parent_span_id), read_parent);
    }
    // A call without a traceparent starts a trace of its own.
    let create = calls("create_workflow");
    assert_eq!(create.len(), 1, "{names:?}");
    assert!(create[0].parent_span_id.is_empty(), "a root: {:?}", create[0].parent_span_id);
    let by_trace: HashMap<&[u8], usize> = spans.iter().fold(HashMap::new(), |mut m, s| {
        *m.entry(s.trace_id.as_slice()).or_default() += 1;
        m
    });
    assert!(by_trace.len() >= 4, "create, start, reads and the run are traces apart: {by_trace:?}");
}
