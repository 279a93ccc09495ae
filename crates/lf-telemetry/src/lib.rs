//! The process's traces: the spans the LenserFight crates make through
//! `tracing` (a tool call, a workflow run and its steps, a model call, an
//! agent's action), exported over OTLP when the operator names a collector
//! (`LENSERFIGHT_OTLP_ENDPOINT`), and a W3C `traceparent` continued.
//!
//! The binaries' start-up ([`Traces::start`], from lf-server's log set-up)
//! is the only caller: the crates that make spans know nothing of
//! OpenTelemetry. Without an endpoint nothing here is built: no exporter,
//! no thread, and the spans are disabled callsites ([`is_traced`] keeps
//! them out of the logs).
//!
//! Export is OTLP over HTTP with protobuf bodies (`{endpoint}/v1/traces`),
//! batched on the SDK's own thread, sent with reqwest's blocking client
//! built from lf-model's TLS set-up. Sampling is the SDK's: every trace
//! unless `OTEL_TRACES_SAMPLER` says otherwise (a continued trace follows
//! its parent's sampled flag); `OTEL_SERVICE_NAME` and
//! `OTEL_RESOURCE_ATTRIBUTES` name the process.

use std::time::Duration;

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracerProvider, Tracer};
use tracing::{Metadata, Subscriber};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::registry::LookupSpan;

/// The path of traces under an OTLP/HTTP collector's address.
pub const TRACES_PATH: &str = "/v1/traces";

/// How long one export may take before it is given up.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether `meta` is one of the spans this crate exports: a span of a
/// LenserFight crate. The logs leave them out (their events keep their
/// own fields), so that a log line reads the same with traces on or off.
pub fn is_traced(meta: &Metadata<'_>) -> bool {
    meta.is_span() && meta.target().starts_with("lf_")
}

/// The collector's traces URL for `endpoint`, an OTLP/HTTP collector's
/// address (`http://127.0.0.1:4318`), or its traces URL already.
pub fn traces_url(endpoint: &str) -> Result<String, String> {
    let endpoint = endpoint.trim();
    let url = reqwest::Url::parse(endpoint).map_err(|e| format!("not a URL ({e}): {endpoint}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(format!("not an http or https URL: {endpoint}"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("a collector's address has no query or fragment: {endpoint}"));
    }
    let base = endpoint.trim_end_matches('/');
    Ok(match base.ends_with(TRACES_PATH) {
        true => base.to_owned(),
        false => format!("{base}{TRACES_PATH}"),
    })
}

/// The exporter of this process's spans, from [`Traces::start`] until it
/// is dropped, which sends what is left (at most [`EXPORT_TIMEOUT`]).
pub struct Traces {
    provider: SdkTracerProvider,
    tracer: Tracer,
}

impl Traces {
    /// Exports spans to the OTLP/HTTP collector at `endpoint` (see
    /// [`traces_url`]). Call it outside an async runtime: the blocking
    /// HTTP client runs one of its own.
    pub fn start(endpoint: &str) -> Result<Traces, String> {
        let url = traces_url(endpoint)?;
        let mut client = reqwest::blocking::Client::builder().timeout(EXPORT_TIMEOUT);
        if let Some(tls) = lf_model::client_tls() {
            client = client.tls_backend_preconfigured(tls);
        }
        let client = client.build().map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client)
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(url)
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| format!("cannot build the OTLP exporter: {e}"))?;
        let mut resource = Resource::builder();
        if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name("lenserfight");
        }
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource.build())
            .build();
        let tracer = provider.tracer("lenserfight");
        Ok(Traces { provider, tracer })
    }

    /// The layer that turns the LenserFight crates' spans ([`is_traced`])
    /// into OpenTelemetry spans for this exporter.
    pub fn layer<S>(&self) -> impl Layer<S> + Send + Sync + 'static
    where
        S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
    {
        tracing_opentelemetry::layer()
            .with_tracer(self.tracer.clone())
            .with_tracked_inactivity(false)
            .with_threads(false)
            .with_location(false)
            .with_target(false)
            .with_level(false)
            .with_filter(filter_fn(is_traced))
    }

    /// Sends the spans ended so far.
    pub fn flush(&self) {
        if let Err(e) = self.provider.force_flush() {
            eprintln!("lenserfight: cannot send the last traces: {e}");
        }
    }
}

impl Drop for Traces {
    fn drop(&mut self) {
        if let Err(e) = self.provider.shutdown_with_timeout(EXPORT_TIMEOUT) {
            eprintln!("lenserfight: cannot send the last traces: {e}");
        }
    }
}

/// Makes `span` a child of the span a W3C `traceparent` names; a value
/// that is not one leaves it a root. Installed in the catalog
/// (`lf_tools::install_trace_continuation`) while traces are exported.
pub fn continue_trace(span: &tracing::Span, traceparent: &str) {
    let cx = TraceContextPropagator::new().extract(&Traceparent(traceparent));
    if cx.span().span_context().is_valid() {
        let _ = span.set_parent(cx);
    }
}

/// A carrier holding only a `traceparent`.
struct Traceparent<'a>(&'a str);

impl Extractor for Traceparent<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        key.eq_ignore_ascii_case("traceparent").then_some(self.0)
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collectors_address_gets_the_traces_path_once() {
        assert_eq!(traces_url("http://127.0.0.1:4318").unwrap(), "http://127.0.0.1:4318/v1/traces");
        assert_eq!(traces_url("http://otel:4318/").unwrap(), "http://otel:4318/v1/traces");
        assert_eq!(traces_url("https://otel.example/v1/traces").unwrap(), "https://otel.example/v1/traces");
        assert_eq!(traces_url(" https://otel.example/base ").unwrap(), "https://otel.example/base/v1/traces");
        for bad in ["", "otel:4318", "grpc://otel:4317", "http://otel:4318/?x=1", "file:///tmp/t"] {
            assert!(traces_url(bad).is_err(), "{bad}");
        }
    }
}
