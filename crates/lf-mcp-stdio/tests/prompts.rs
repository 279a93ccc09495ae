//! Lenses served as prompts over the stdio pipe: `prompts/get` with a
//! missing argument is a JSON-RPC error in the words of prompts, with the
//! missing arguments in its data, and the server logs it as the caller's
//! mistake (at debug), never as a warning.

mod common;

use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use common::Client;
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};

/// One event the server logged.
#[derive(Debug)]
struct Logged {
    level: Level,
    target: String,
    /// Whether the log setup of the binaries drops it (rmcp's copy of an error).
    echo: bool,
    /// Its fields, `name=value` each.
    fields: String,
}

/// Records every event.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Logged>>>);

struct Fields<'a>(&'a mut String);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

impl<S: Subscriber> Layer<S> for Recorder {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let meta = event.metadata();
        let mut fields = String::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(Logged {
            level: *meta.level(),
            target: meta.target().to_owned(),
            echo: lf_tools::is_rmcp_error_echo(meta),
            fields,
        });
    }
}

#[tokio::test]
async fn a_missing_argument_is_named_in_the_words_of_prompts_and_logged_as_the_callers_mistake() {
    let recorder = Recorder::default();
    // This runtime has one thread, which runs the server's tasks too.
    let _logs = tracing::subscriber::set_default(tracing_subscriber::registry().with(recorder.clone()));
    let mut c = Client::initialized("2025-11-25").await;
    let id = c.create_lens(1, "Essay").await;

    let one = c.request(2, "prompts/get", json!({"name": id, "arguments": {"Topic": "tides"}})).await;
    assert_eq!(one["error"]["code"], -32602, "{one}");
    assert_eq!(
        one["error"]["message"],
        "MISSING_PARAMS: Prompt \"Essay\" needs the argument Audience. Ask the user for it, then call prompts/get again with it in arguments."
    );
    assert_eq!(
        (&one["error"]["data"]["code"], &one["error"]["data"]["missing"]),
        (&json!("MISSING_PARAMS"), &json!(["Audience"]))
    );
    assert_eq!(one["error"]["data"]["lens_id"], id.as_str());

    let two = c.request(3, "prompts/get", json!({"name": id})).await;
    assert_eq!(two["error"]["data"]["missing"], json!(["Topic", "Audience"]), "in template order");
    let message = two["error"]["message"].as_str().unwrap();
    assert!(message.contains("needs the arguments Topic, Audience. Ask the user for them"), "{message}");
    assert!(!message.contains("run_lens") && !message.contains("param_values"), "{message}");

    // A tool's refusal is the caller's mistake too.
    let run = c.request(4, "tools/call", json!({"name": "run_lens", "arguments": {"lens_id": id}})).await;
    assert_eq!(run["result"]["structuredContent"]["code"], "MISSING_PARAMS");

    let logged = recorder.0.lock().unwrap();
    assert!(
        logged.iter().any(|e| e.echo),
        "rmcp logs its copy of each JSON-RPC error, and is_rmcp_error_echo recognises it: {logged:#?}"
    );
    let warnings: Vec<&Logged> = logged.iter().filter(|e| e.level <= Level::WARN && !e.echo).collect();
    assert!(warnings.is_empty(), "a caller's mistake is no warning: {warnings:#?}");
    let refusals = logged
        .iter()
        .filter(|e| {
            e.level == Level::DEBUG
                && e.target == "lf_tools::catalog::errors"
                && e.fields.contains("MISSING_PARAMS")
        })
        .count();
    assert_eq!(refusals, 3, "each refusal once, at debug: {logged:#?}");
}
