//! The benchmarks' yardstick: a bare rmcp server with one `echo` tool, no
//! database and no catalog, on rmcp's own transports: stdio by default,
//! stateless Streamable HTTP with JSON answers with `--bind ADDR`.
//! `cargo xtask bench-stdio --baseline` and `bench-http --baseline` run it
//! next to the LenserFight servers, so that a figure measured on a machine
//! whose speed varies comes with the figure of the trivial server the
//! performance aims are set against.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ServerCapabilities,
};
use rmcp::model::{ErrorData, ListToolsResult, PaginatedRequestParams, ServerConfig, Tool};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler, ServiceExt};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The server: `echo` answers its `message` argument as text.
#[derive(Clone)]
struct Echo;

fn echo_tool() -> Tool {
    let serde_json::Value::Object(schema) = serde_json::json!({
        "type": "object",
        "properties": {"message": {"type": "string", "description": "The text to answer."}},
        "required": ["message"],
    }) else {
        unreachable!("a JSON object")
    };
    Tool::new("echo", "Answers its message.", schema)
}

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![echo_tool()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "echo" {
            return Err(ErrorData::invalid_params(format!("no tool named {}", request.name), None));
        }
        match request.arguments.as_ref().and_then(|a| a.get("message")).and_then(|m| m.as_str()) {
            Some(message) => Ok(CallToolResult::success(vec![ContentBlock::text(message)]).into()),
            None => Ok(CallToolResult::error(vec![ContentBlock::text("message is required")]).into()),
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let bind = args.windows(2).find(|w| w[0] == "--bind").map(|w| w[1].clone());
    // The runtimes of the servers it stands next to: lf-mcp-stdio runs its
    // protocol on one thread, lf-mcp-http on tokio's worker threads.
    let runtime = match bind {
        None => tokio::runtime::Builder::new_current_thread().enable_all().build()?,
        Some(_) => tokio::runtime::Builder::new_multi_thread().enable_all().build()?,
    };
    runtime.block_on(async {
        match bind {
            None => {
                Echo.serve(rmcp::transport::stdio()).await?.waiting().await?;
            }
            Some(addr) => {
                let config = StreamableHttpServerConfig::default()
                    .with_legacy_session_mode(false)
                    .with_json_response(true)
                    .with_sse_keep_alive(None);
                let service =
                    StreamableHttpService::new(|| Ok(Echo), Arc::new(NeverSessionManager::default()), config);
                let app = axum::Router::new().route_service("/mcp", service);
                let listener = tokio::net::TcpListener::bind(&addr).await?;
                axum::serve(listener, app).await?;
            }
        }
        Ok(())
    })
}
