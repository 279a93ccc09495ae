//! The span of each tool call, for whoever collects spans (the binaries'
//! OTLP exporter, lf-telemetry), and the W3C `traceparent` a request's
//! `params._meta` carries, continued through [`install_continuation`].
//!
//! Spans are made through `tracing` only: this crate knows no exporter.
//! With no subscriber interested in them (traces off) a span is a disabled
//! callsite and the `traceparent` is not read.

use std::sync::OnceLock;

use lf_core::meter::{OK, Outcome};
use tracing::Span;
use tracing::field::Empty;

/// Sets a span's parent to the trace a W3C `traceparent` names.
pub type Continuation = fn(&Span, &str);

static CONTINUE: OnceLock<Continuation> = OnceLock::new();

/// Makes `continuation` set the parent of each tool call's span that came
/// with a `traceparent`. Installed by the binaries when traces are
/// exported; the first one stays.
pub fn install_continuation(continuation: Continuation) -> bool {
    CONTINUE.set(continuation).is_ok()
}

/// Whether a `traceparent` is continued: spans are exported.
pub(crate) fn continues() -> bool {
    CONTINUE.get().is_some()
}

/// The span of a call of `tool` (MCP's and the GenAI conventions'
/// attributes), continuing `traceparent` when one came and spans are kept.
pub(crate) fn tool_call(tool: &str, traceparent: Option<&str>) -> Span {
    let span = tracing::info_span!(
        "tools/call",
        otel.name = %format_args!("tools/call {tool}"),
        otel.kind = "server",
        mcp.method.name = "tools/call",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        "error.type" = Empty,
        otel.status_code = Empty,
    );
    if let (Some(parent), Some(continuation)) = (traceparent, CONTINUE.get())
        && !span.is_disabled()
    {
        continuation(&span, parent);
    }
    span
}

/// Marks the current tool call's span as failed with `outcome`'s code.
pub(crate) fn ended(outcome: Outcome) {
    if outcome != OK {
        let span = Span::current();
        span.record("error.type", outcome);
        span.record("otel.status_code", "ERROR");
    }
}
