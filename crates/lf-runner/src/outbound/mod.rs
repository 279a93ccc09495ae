//! The executors of the node types that reach outside the server:
//! `http_request`, `webhook_sender`, `graphql_request` (`http.rs`),
//! `slack_notify`, `discord_notify`, `telegram_notify` (`chat.rs`),
//! `github_read`, `github_issue_create` (`github.rs`), `rss_feed`
//! (`feed.rs`) and `email_send` (`email.rs`). [`Outbound`] holds what they
//! share; steps.rs's table names the type each `OutboundKind` runs.
//!
//! Every HTTP call goes through one [`Egress`], so a URL written into a
//! workflow reaches only what the operator's policy lets through; SMTP,
//! which is not HTTP, checks its server's addresses against the same
//! policy before it connects (`email.rs`). Each request with an effect
//! outside (a webhook, a message, a new issue, an `http_request` other
//! than GET or HEAD) carries the job's idempotency key as
//! `Idempotency-Key`; an e-mail carries it in its `Message-ID`.
//!
//! Failures have the codes the catalog's retry rules name: `timeout`,
//! `connect_error` (DNS, connection, TLS handshake), `status_5xx`,
//! `rate_limit` (429, and GitHub's spent rate limit) are retried; the rest
//! are not: `blocked` (the egress policy refused an address: its message
//! says which and why), `status_4xx` (naming the status and the start of
//! the answer), `not_found` (a GitHub repository, issue list or file; a
//! saved connection), `invalid_input` (the input or a filled template is
//! not what the step can send), `config_invalid`, `invalid_connection`
//! (a saved connection of the wrong provider or without what the step
//! needs), `invalid_response` (an answer that is not what the service
//! promises), `too_large`, `too_many_redirects`, `tls_error`.
//!
//! # Saved connections
//!
//! A step names its connection in its connector; the runner opens it for
//! the run's starter (never the workflow owner's, for someone else's run). What each provider keeps where:
//!
//! | provider | secret | settings |
//! |---|---|---|
//! | `http` | a token, sent as `Authorization: Bearer …` (or as is in the header `auth_header` names), or else a secret URL (starting `http://` or `https://`) | `url`: the endpoint when the step gives none; `headers`: extra headers (strings); `auth_header`: see the secret |
//! | `slack` | the incoming webhook's URL | none |
//! | `discord` | the webhook's URL | none |
//! | `telegram` | the bot's token | `chat_id`: the chat when the step names none; `base_url` (default `https://api.telegram.org`) |
//! | `github` | a token, sent as `Authorization: Bearer …` | `base_url` (default `https://api.github.com`; GitHub Enterprise: `https://host/api/v3`) |
//! | `smtp` | the password | `host` (required); `port` (default 587, or 465 with `security: tls`); `security`: `starttls` (default), `tls` (implicit TLS), or `none` (plain SMTP to a relay that takes mail without a login: the password is never sent then); `username` (the login, default none: no login); `from` (the sender, default `username` when it is an address) |
//!
//! Credentials stay with their service: when an `http` connection holds
//! a URL (its `url` setting or a secret URL), a step's own URL must have
//! the same origin; a `github` connection's token goes only to its
//! `base_url`'s origin (`graphql_request` included). No message of the
//! executors' own holds a secret, but an error quotes the start of the
//! service's answer or a redirect's URL, and a service may echo what it
//! was sent: so every connection a step opens is added to its job's
//! redaction, and what the step gives back passes it
//! ([`crate::Executors::execute`]), for every provider.

mod chat;
pub(crate) mod common;
mod email;
mod feed;
mod github;
mod http;

use std::sync::Arc;

use async_trait::async_trait;
use lf_egress::Egress;
use lf_workflow::ConnectionService;
use lf_workflow::engine::Failure;

use crate::executor::{Done, Executor, Executors, Job};
use crate::steps::{self, Runs};
use common::Shared;

/// What the outbound executors share: the guarded HTTP client (its
/// allow-list also judges SMTP servers) and the saved connections.
#[derive(Clone)]
pub struct Outbound {
    shared: Arc<Shared>,
}

impl Outbound {
    pub fn new(egress: Egress, connections: Arc<ConnectionService>) -> Self {
        Outbound { shared: Arc::new(Shared { egress, connections }) }
    }

    /// `executors` with an executor for each outbound node type (a runner
    /// with these steps alone; [`Executors::all`] has every step).
    pub fn register(self, executors: Executors) -> Executors {
        executors.fill(|runs| match runs {
            Runs::Outbound(kind) => Some(self.step(kind)),
            _ => None,
        })
    }

    /// The executor of `node_type` (a canonical name), if it is an
    /// outbound type.
    pub fn executor(&self, node_type: &str) -> Option<Arc<dyn Executor>> {
        match steps::runs(node_type)? {
            Runs::Outbound(kind) => Some(self.step(kind)),
            _ => None,
        }
    }

    pub(crate) fn step(&self, kind: OutboundKind) -> Arc<dyn Executor> {
        Arc::new(Step { kind, shared: self.shared.clone() })
    }
}

/// Which outbound node type a step is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OutboundKind {
    HttpRequest,
    Webhook,
    Graphql,
    Slack,
    Discord,
    Telegram,
    GithubRead,
    GithubIssue,
    Feed,
    Email,
}

/// One outbound node type.
struct Step {
    kind: OutboundKind,
    shared: Arc<Shared>,
}

#[async_trait]
impl Executor for Step {
    async fn execute(&self, job: &Job) -> Result<Done, Failure> {
        let s = &self.shared;
        let output = match self.kind {
            OutboundKind::HttpRequest => http::http_request(s, job).await,
            OutboundKind::Webhook => http::webhook_sender(s, job).await,
            OutboundKind::Graphql => http::graphql_request(s, job).await,
            OutboundKind::Slack => chat::slack(s, job).await,
            OutboundKind::Discord => chat::discord(s, job).await,
            OutboundKind::Telegram => chat::telegram(s, job).await,
            OutboundKind::GithubRead => github::read(s, job).await,
            OutboundKind::GithubIssue => github::create_issue(s, job).await,
            OutboundKind::Feed => feed::rss_feed(s, job).await,
            OutboundKind::Email => email::email_send(s, job).await,
        }?;
        Ok(Done::output(output))
    }
}
