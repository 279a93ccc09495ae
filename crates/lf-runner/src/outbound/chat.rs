//! `slack_notify`, `discord_notify` and `telegram_notify`: one message
//! through a saved connection. Slack and Discord take it on an incoming
//! webhook whose URL is the connection's secret; Telegram through the Bot
//! API's `sendMessage`, with the bot's token as the secret.

use lf_egress::{EgressResponse, Method, Url};
use lf_workflow::engine::Failure;
use lf_workflow::exec::fill_placeholders;
use serde_json::{Value, json};

use super::common::{Config, Opened, Shared, json_request, not_blank, refuse_status, scope, with_key};
use crate::executor::Job;

/// Discord's limit on a message's content, in characters.
const DISCORD_MAX_CHARS: usize = 2_000;
/// Telegram's limit on a message's text, in characters.
const TELEGRAM_MAX_CHARS: usize = 4_096;
const TELEGRAM_API: &str = "https://api.telegram.org";

pub(super) async fn slack(s: &Shared, job: &Job) -> Result<Value, Failure> {
    let text = text(job, "Slack", None)?;
    post_to_webhook(s, job, "slack", "Slack", &json!({ "text": text })).await
}

pub(super) async fn discord(s: &Shared, job: &Job) -> Result<Value, Failure> {
    let text = text(job, "Discord", Some(DISCORD_MAX_CHARS))?;
    // Text filled from a run's inputs may quote anyone: it pings no one.
    let mut message = json!({ "content": text, "allowed_mentions": { "parse": [] } });
    if let Some(name) = Config::of(job).str("username")?.filter(|n| !n.trim().is_empty()) {
        message["username"] = Value::String(name.to_owned());
    }
    post_to_webhook(s, job, "discord", "Discord", &message).await
}

pub(super) async fn telegram(s: &Shared, job: &Job) -> Result<Value, Failure> {
    let c = Config::of(job);
    let text = text(job, "Telegram", Some(TELEGRAM_MAX_CHARS))?;
    let o = s.required_connection(job, &["telegram"]).await?;
    let token = o.secret()?;
    if !token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b':' || b == b'_' || b == b'-') {
        return Err(o.invalid("has a secret that is not a Telegram bot token (digits, a colon, letters)"));
    }
    let chat = match c.get("chat_id") {
        Some(v) => Some(v.clone()),
        None => o.settings().get("chat_id").filter(|v| !v.is_null()).cloned(),
    };
    let chat = match chat {
        Some(Value::String(s)) if !s.trim().is_empty() => Value::String(s.trim().to_owned()),
        Some(n @ Value::Number(_)) => n,
        Some(_) => return Err(Failure::new("config_invalid", "chat_id must be a chat's id or @username")),
        None => {
            return Err(Failure::new(
                "config_invalid",
                format!(
                    "chat_id is required unless the saved connection {:?} has a chat_id setting",
                    o.connection.connection_ref.as_str()
                ),
            ));
        }
    };
    let mut message = json!({ "chat_id": chat, "text": text });
    match c.str("parse_mode")?.unwrap_or("plain") {
        "plain" => {}
        "markdown_v2" => message["parse_mode"] = json!("MarkdownV2"),
        "html" => message["parse_mode"] = json!("HTML"),
        other => {
            return Err(Failure::new(
                "config_invalid",
                format!("parse_mode must be plain, markdown_v2 or html, not {}", lf_core::clip(other, 20)),
            ));
        }
    }
    let mut url = o.base_url("base_url", TELEGRAM_API)?;
    url.path_segments_mut()
        .map_err(|_| o.invalid("has a base_url setting that cannot take a path"))?
        .pop_if_empty()
        .push(&format!("bot{token}"))
        .push("sendMessage");
    let request = json_request(Method::POST, url, &message);
    let answer = s.send(with_key(request, job), None).await?;
    refuse_status(&answer, "Telegram")?;
    let ok = serde_json::from_slice::<Value>(&answer.body)
        .ok()
        .and_then(|v| v.get("ok").and_then(Value::as_bool))
        .unwrap_or(true);
    Ok(delivered(&answer, ok))
}

/// The step's `text`, filled, not blank and at most `max` characters.
fn text(job: &Job, service: &str, max: Option<usize>) -> Result<String, Failure> {
    let text = not_blank("text", fill_placeholders(Config::of(job).required("text")?, &scope(&job.input)))?;
    let chars = text.chars().count();
    match max {
        Some(max) if chars > max => Err(Failure::new(
            "invalid_input",
            format!("text is {chars} characters once filled; {service} takes at most {max}"),
        )),
        _ => Ok(text),
    }
}

/// Posts `message` to the incoming webhook a `provider` connection's
/// secret holds.
async fn post_to_webhook(
    s: &Shared,
    job: &Job,
    provider: &str,
    service: &str,
    message: &Value,
) -> Result<Value, Failure> {
    let o = s.required_connection(job, &[provider]).await?;
    let request = json_request(Method::POST, webhook_url(&o)?, message);
    let answer = s.send(with_key(request, job), None).await?;
    refuse_status(&answer, service)?;
    Ok(delivered(&answer, true))
}

/// The webhook URL a slack or discord connection's secret holds.
fn webhook_url(o: &Opened) -> Result<Url, Failure> {
    Url::parse(o.secret()?).ok().filter(|u| matches!(u.scheme(), "http" | "https")).ok_or_else(|| {
        o.invalid(format!(
            "has a secret that is not a webhook URL: save the {} webhook's URL as its secret",
            o.provider()
        ))
    })
}

fn delivered(answer: &EgressResponse, ok: bool) -> Value {
    json!({ "delivered": ok, "status": answer.status.as_u16() })
}
