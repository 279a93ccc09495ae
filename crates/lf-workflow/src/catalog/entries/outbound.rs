//! Everything that reaches outside: HTTP requests, webhooks and GraphQL
//! (through the egress guard), chat notifications and e-mail and GitHub
//! through saved connections, and feeds. Secrets live in the saved
//! connection a step names; a step's config holds none.

use serde_json::{Map, Value, json};

use super::super::Category::{Communication, Integration};
use super::super::spec::{
    ConnectorUse, FieldKind, IoType, NodeTypeSpec, RetryBehavior, SideEffect, entry, field, port,
};
use super::timeout_ms;

const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"];

fn url_or_connector(c: &Map<String, Value>, has_connector: bool) -> Option<(&'static str, String)> {
    (!has_connector && !c.contains_key("url")).then(|| {
        (
            "url",
            "url is required unless the step names a saved http connection (connector) that holds it"
                .to_owned(),
        )
    })
}

fn http_outputs() -> Vec<super::super::spec::Port> {
    vec![
        port("status", IoType::Number, "The HTTP status."),
        port("headers", IoType::Object, "The response headers (lowercase names)."),
        port("body", IoType::Json, "The response body: JSON when it parses, else text."),
    ]
}

fn notify(
    t: &'static str,
    display: &'static str,
    description: &'static str,
    provider: &'static [&'static str],
) -> NodeTypeSpec {
    entry(t, Communication, display, description)
        .connector(ConnectorUse::Required(provider))
        .io(&[IoType::Text, IoType::Json, IoType::Any], IoType::Json)
        .outputs(vec![
            port("delivered", IoType::Boolean, "Whether the service accepted it."),
            port("status", IoType::Number, "The service's HTTP status."),
        ])
}

/// `mcp_tool`: the executor gives these codes only for a tool annotated
/// read-only or idempotent, so no other tool is called twice.
const MCP_RETRY: RetryBehavior = RetryBehavior {
    max_attempts: 3,
    backoff_ms: 1_000,
    retry_on: &[
        "tool_error_retryable",
        "protocol_error_retryable",
        "timeout_retryable",
        "connect_error_retryable",
    ],
};

pub(super) fn entries() -> Vec<NodeTypeSpec> {
    vec![
        entry("http_request", Integration, "HTTP request", "Sends one HTTP request through the server's egress guard (no private or metadata addresses, at most 5 redirects, bounded size and time); a saved http connection may add its headers or bearer token.")
            .aliases(&["http", "fetch", "api_call"])
            .caps(&["http", "api", "fetch", "request"])
            .connector(ConnectorUse::Optional(&["http"]))
            .io(&[IoType::Any], IoType::Json)
            .outputs(http_outputs())
            .fields(vec![
                field("url", "URL", FieldKind::Url, "The URL, [[name]] placeholders filled from the inputs.").required(),
                field("method", "Method", FieldKind::Select, "The HTTP method.").default(json!("GET")).options(METHODS),
                field("headers", "Headers", FieldKind::StringMap, "Extra headers (never credentials: a saved connection carries those)."),
                field("body", "Body", FieldKind::Json, "A JSON body; omit to send the node's `input` with POST, PUT and PATCH."),
                timeout_ms(),
            ])
            .side_effect(SideEffect::ExternalWrite)
            .example("Fetch a JSON API.", json!({"url": "https://api.example.com/items", "method": "GET"}), json!(null), json!({"status": 200, "headers": {"content-type": "application/json"}, "body": {"items": []}}), Some(("extract_field", "body → input")))
            .use_case("Read from or write to any HTTP API the operator allows."),
        entry("webhook_sender", Integration, "Send webhook", "POSTs the part of its input at `payload_path` as JSON to `url` or to the URL of a saved http connection, with an Idempotency-Key of (run, node, attempt).")
            .aliases(&["webhook_send", "post_webhook"])
            .caps(&["webhook", "http", "notify", "outbound"])
            .connector(ConnectorUse::Optional(&["http"]))
            .side_effect(SideEffect::ExternalWrite)
            .outputs(http_outputs())
            .fields(vec![
                field("url", "URL", FieldKind::Url, "Where to post; omit when the saved connection holds it (webhook URLs are often secret)."),
                field("payload_path", "Payload", FieldKind::JsonPath, "The part of the input to send.").default(json!("output")),
                timeout_ms(),
            ])
            .rule(url_or_connector)
            .example("Tell another system a digest is ready.", json!({"url": "https://hooks.example.com/digest"}), json!({"title": "Weekly digest"}), json!({"status": 202, "headers": {}, "body": null}), None)
            .use_case("Hand results to any system that takes webhooks."),
        entry("graphql_request", Integration, "GraphQL request", "Sends `query` with `variables` to a GraphQL endpoint through the egress guard; a saved http connection may add its credentials.")
            .aliases(&["graphql"])
            .caps(&["graphql", "api", "http"])
            .connector(ConnectorUse::Optional(&["http", "github"]))
            .side_effect(SideEffect::ExternalWrite)
            .outputs(vec![port("data", IoType::Json, "The `data` of the answer."), port("errors", IoType::Array, "Its `errors`, if any."), port("status", IoType::Number, "The HTTP status.")])
            .fields(vec![
                field("url", "Endpoint", FieldKind::Url, "The GraphQL endpoint.").required(),
                field("query", "Query", FieldKind::Template, "The GraphQL document.").required(),
                field("variables", "Variables", FieldKind::Object, "Its variables; strings may hold [[name]] placeholders."),
                timeout_ms(),
            ])
            .example("Read a repository's stars.", json!({"url": "https://api.github.com/graphql", "query": "query { viewer { login } }"}), json!(null), json!({"data": {"viewer": {"login": "ada"}}, "errors": [], "status": 200}), Some(("extract_field", "data → input")))
            .use_case("Query GraphQL APIs without writing HTTP by hand."),
        notify("slack_notify", "Slack message", "Posts `text` to Slack through the incoming webhook of a saved slack connection.", &["slack"])
            .aliases(&["slack", "slack_send", "slack_message"])
            .caps(&["slack", "chat", "notify", "message"])
            .fields(vec![field("text", "Text", FieldKind::Template, "The message, [[name]] placeholders filled from the inputs.").required()])
            .example("Announce a digest.", json!({"text": "New digest: [[text]]"}), json!({"text": "Three things happened."}), json!({"delivered": true, "status": 200}), None)
            .use_case("Tell a team channel what a run found."),
        notify("discord_notify", "Discord message", "Posts `text` to Discord through the webhook of a saved discord connection.", &["discord"])
            .aliases(&["discord", "discord_send"])
            .caps(&["discord", "chat", "notify", "message"])
            .fields(vec![
                field("text", "Text", FieldKind::Template, "The message (up to 2,000 characters once filled).").required(),
                field("username", "Name", FieldKind::String, "The name the message is posted under."),
            ])
            .example("Post a result to a server.", json!({"text": "Winner: [[winner]]"}), json!({"winner": "A"}), json!({"delivered": true, "status": 204}), None)
            .use_case("Keep a community informed."),
        notify("telegram_notify", "Telegram message", "Sends `text` through the bot of a saved telegram connection to `chat_id` (or the connection's chat).", &["telegram"])
            .aliases(&["telegram", "telegram_send"])
            .caps(&["telegram", "chat", "notify", "message"])
            .fields(vec![
                field("text", "Text", FieldKind::Template, "The message.").required(),
                field("chat_id", "Chat", FieldKind::String, "The chat to send to; omit to use the connection's.").aliases(&["chatId"]),
                field("parse_mode", "Formatting", FieldKind::Select, "How Telegram reads the text.").default(json!("plain")).options(&["plain", "markdown_v2", "html"]),
            ])
            .example("Message a channel.", json!({"text": "Digest ready"}), json!(null), json!({"delivered": true, "status": 200}), None)
            .use_case("Reach people on their phones."),
        notify("email_send", "Send e-mail", "Sends an e-mail through the SMTP server of a saved smtp connection.", &["smtp"])
            .aliases(&["email", "send_email", "smtp_send"])
            .caps(&["email", "smtp", "notify", "message"])
            .fields(vec![
                field("to", "To", FieldKind::EmailList, "One address or a list of them.").required(),
                field("subject", "Subject", FieldKind::Template, "The subject line.").required(),
                field("body", "Body", FieldKind::Template, "The plain-text body.").required(),
                field("cc", "Cc", FieldKind::EmailList, "Copies to."),
                field("reply_to", "Reply to", FieldKind::EmailList, "Where replies go.").aliases(&["replyTo"]),
            ])
            .example("Mail the weekly digest.", json!({"to": "team@example.com", "subject": "Weekly digest", "body": "[[text]]"}), json!({"text": "This week…"}), json!({"delivered": true, "status": 250}), None)
            .use_case("Deliver a report to people who live in their inbox."),
        entry("github_read", Integration, "Read GitHub", "Reads a repository, its issues, its pull requests, its README or one file from the GitHub API (a saved github connection for private repositories and higher limits).")
            .aliases(&["github"])
            .caps(&["github", "git", "issues", "read"])
            .connector(ConnectorUse::Optional(&["github"]))
            .fields(vec![
                field("repository", "Repository", FieldKind::String, "owner/name, such as rust-lang/rust.").required(),
                field("resource", "What", FieldKind::Select, "What to read.").default(json!("repository")).options(&["repository", "issues", "pulls", "readme", "file"]),
                field("path", "File path", FieldKind::String, "The file to read (resource file)."),
                field("state", "State", FieldKind::Select, "Which issues or pull requests.").default(json!("open")).options(&["open", "closed", "all"]),
                field("limit", "Most items", FieldKind::Integer, "How many issues or pull requests.").default(json!(20)).range(1.0, 100.0),
            ])
            .example("List open issues.", json!({"repository": "rust-lang/rust", "resource": "issues", "limit": 5}), json!(null), json!({"items": [{"number": 1, "title": "…"}]}), Some(("summarizer", "items → input")))
            .use_case("Summarize what happened in a repository this week."),
        entry("github_issue_create", Integration, "Open GitHub issue", "Opens an issue in `repository` through a saved github connection.")
            .aliases(&["github_issue"])
            .caps(&["github", "issues", "create"])
            .connector(ConnectorUse::Required(&["github"]))
            .side_effect(SideEffect::ExternalWrite)
            .outputs(vec![port("number", IoType::Number, "The issue's number."), port("url", IoType::Text, "Its page.")])
            .fields(vec![
                field("repository", "Repository", FieldKind::String, "owner/name.").required(),
                field("title", "Title", FieldKind::Template, "The issue's title.").required(),
                field("body", "Body", FieldKind::Template, "Its text (Markdown)."),
                field("labels", "Labels", FieldKind::StringList, "Labels to put on it."),
            ])
            .example("File a bug a check found.", json!({"repository": "acme/app", "title": "Broken link: [[url]]"}), json!({"url": "https://acme.example/x"}), json!({"number": 42, "url": "https://github.com/acme/app/issues/42"}), None)
            .use_case("Turn findings into tracked work."),
        entry("mcp_tool", Integration, "Call MCP tool", "Calls one tool of an outside MCP server saved as a connection of provider mcp (through the egress guard): `arguments`, [[name]] placeholders filled from the inputs (a string that is only a placeholder keeps the value's type), or else the input object, checked against the tool's saved input schema. The output is the tool's structured content, else its text, cut at 1 MB and cleaned as third-party content; a result the server marks isError fails the step with its message. Retried only when the tool is annotated read-only or idempotent.")
            .aliases(&["mcp", "mcp_client", "mcp_call"])
            .caps(&["mcp", "tool", "integration", "outside"])
            .connector(ConnectorUse::Required(&["mcp"]))
            .io(&[IoType::Any], IoType::Json)
            .outputs(vec![port("output", IoType::Json, "The structured content, else the text (an object when the text is JSON).")])
            .fields(vec![
                field("tool", "Tool", FieldKind::String, "The tool's name, as list_connection_tools shows it (its mode must not be off).").required(),
                field("arguments", "Arguments", FieldKind::Json, "The tool's arguments (an object); omit to send the input object."),
            ])
            .retry(MCP_RETRY)
            .side_effect(SideEffect::ExternalWrite)
            .example("Echo through an outside server.", json!({"tool": "echo", "arguments": {"text": "[[title]]"}}), json!({"title": "hi"}), json!({"text": "hi"}), Some(("extract_field", "output → input")))
            .use_case("Use any MCP server's tools from a workflow."),
        entry("rss_feed", Integration, "Read feed", "Reads an RSS or Atom feed through the egress guard: its newest `limit` entries.")
            .aliases(&["rss", "atom", "feed"])
            .caps(&["rss", "atom", "feed", "news"])
            .outputs(vec![port("title", IoType::Text, "The feed's title."), port("items", IoType::Array, "Entries: {title, link, published, summary}, newest first.")])
            .fields(vec![
                field("url", "Feed URL", FieldKind::Url, "The feed.").required().aliases(&["feedUrl"]),
                field("limit", "Most entries", FieldKind::Integer, "How many entries.").default(json!(20)).range(1.0, 100.0),
                timeout_ms(),
            ])
            .example("Read a news feed.", json!({"url": "https://blog.rust-lang.org/feed.xml", "limit": 10}), json!(null), json!({"title": "Rust Blog", "items": [{"title": "…", "link": "…"}]}), Some(("loop_map", "items → input")))
            .use_case("Feed a digest from blogs and news sites."),
    ]
}
