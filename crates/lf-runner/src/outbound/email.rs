//! `email_send`: one plain-text message over SMTP (lettre), through the
//! SMTP server of a saved smtp connection.
//!
//! SMTP does not go through [`lf_egress::Egress`], which speaks HTTP, but
//! its server is judged by the same policy before anything connects: the
//! host's addresses (the literal one, or every one the name resolves to)
//! must each pass [`lf_egress::blocked`] unless the operator's allow-list
//! opens the host or the address, and a cloud metadata address never
//! passes. lettre is then given the checked address itself, so the
//! address connected to is the one checked; TLS still verifies the
//! certificate against the host's name.
//!
//! A message has a `Message-ID` made from the job's idempotency key, so a
//! mail system can tell a retried attempt from a new message. SMTP's own
//! replies map to the HTTP-named codes by what they mean: a temporary
//! refusal (4yz) is `status_5xx` and retried, a permanent one (5yz)
//! `status_4xx` and not.

use std::net::IpAddr;
use std::time::Duration;

use lettre::message::header::ContentType;
use lettre::message::{Mailbox, MessageBuilder};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use lf_egress::{Allow, EgressError, METADATA_REASON, Resolver, SystemResolver, blocked};
use lf_workflow::engine::Failure;
use lf_workflow::exec::fill_placeholders;
use serde_json::{Value, json};

use super::common::{Config, Opened, Shared, not_blank, scope};
use crate::executor::Job;

/// Most recipients of one message (to, cc and reply-to together).
pub const MAX_RECIPIENTS: usize = 50;

pub(super) async fn email_send(s: &Shared, job: &Job) -> Result<Value, Failure> {
    let c = Config::of(job);
    let scope = scope(&job.input);
    let o = s.required_connection(job, &["smtp"]).await?;
    let server = Server::of(&o)?;

    let to = mailboxes("to", c.texts("to")?)?;
    if to.is_empty() {
        return Err(Failure::new("config_invalid", "to must name at least one address"));
    }
    let cc = mailboxes("cc", c.texts("cc")?)?;
    let reply_to = mailboxes("reply_to", c.texts("reply_to")?)?;
    if to.len() + cc.len() + reply_to.len() > MAX_RECIPIENTS {
        return Err(Failure::new(
            "invalid_input",
            format!("a message goes to at most {MAX_RECIPIENTS} addresses (to, cc and reply_to together)"),
        ));
    }
    let subject = not_blank("subject", fill_placeholders(c.required("subject")?, &scope))?;
    let body = fill_placeholders(c.required("body")?, &scope);

    let mut b: MessageBuilder = Message::builder().from(server.from.clone()).subject(subject);
    for m in to {
        b = b.to(m);
    }
    for m in cc {
        b = b.cc(m);
    }
    for m in reply_to {
        b = b.reply_to(m);
    }
    if let Some(key) = &job.idempotency_key {
        b = b.message_id(Some(message_id(key)));
    }
    let message = b
        .header(ContentType::TEXT_PLAIN)
        .body(body)
        .map_err(|e| Failure::new("invalid_input", format!("the message could not be built: {e}")))?;

    let timeout = s.egress.config().timeout;
    let addr = server.address(&s.egress.config().allow).await?;
    let transport = server.transport(addr, &o, timeout)?;
    let reply = match tokio::time::timeout(timeout, transport.send(message)).await {
        Err(_) => {
            return Err(Failure::new(
                "timeout",
                format!(
                    "the SMTP server took longer than {} ms; the message may not have been sent",
                    timeout.as_millis()
                ),
            ));
        }
        Ok(Err(e)) => return Err(smtp_failure(&e)),
        Ok(Ok(reply)) => reply,
    };
    Ok(json!({ "delivered": reply.is_positive(), "status": u16::from(reply.code()) }))
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Security {
    StartTls,
    Tls,
    None,
}

/// What an smtp connection's settings say.
struct Server {
    host: String,
    port: u16,
    security: Security,
    username: Option<String>,
    from: Mailbox,
}

impl Server {
    fn of(o: &Opened) -> Result<Server, Failure> {
        let host = o.setting("host")?.map(str::trim).filter(|h| !h.is_empty());
        let host = host.ok_or_else(|| o.invalid("has no host setting: the SMTP server's name"))?;
        // `[::1]` as a URL writes it; TLS and the resolver want `::1`.
        let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        let security = match o.setting("security")? {
            Some("starttls") => Security::StartTls,
            Some("tls") => Security::Tls,
            Some("none") => Security::None,
            Some(_) => return Err(o.invalid("has a security setting that is not starttls, tls or none")),
            None if matches!(o.settings().get("port").and_then(port_of), Some(465)) => Security::Tls,
            None => Security::StartTls,
        };
        let port = match o.settings().get("port").filter(|v| !v.is_null()) {
            None => match security {
                Security::StartTls => 587,
                Security::Tls => 465,
                Security::None => 25,
            },
            Some(v) => port_of(v).ok_or_else(|| o.invalid("has a port setting that is not a port number"))?,
        };
        let username = o.setting("username")?.map(str::trim).filter(|u| !u.is_empty()).map(str::to_owned);
        let from = match (o.setting("from")?, &username) {
            (Some(f), _) => f.trim().parse::<Mailbox>().map_err(|_| o.invalid("has a from setting that is not an e-mail address"))?,
            (None, Some(u)) => u.parse::<Mailbox>().map_err(|_| {
                o.invalid("has no from setting, and its username is not an e-mail address: set from to the sender's address")
            })?,
            (None, None) => return Err(o.invalid("has no from setting: the sender's address")),
        };
        Ok(Server { host: host.to_owned(), port, security, username, from })
    }

    /// The address to connect to: the host's, each of which the egress
    /// policy lets through.
    async fn address(&self, allow: &Allow) -> Result<IpAddr, Failure> {
        let (addrs, name) = match self.host.parse::<IpAddr>() {
            Ok(ip) => (vec![ip], None),
            Err(_) => {
                let addrs = SystemResolver.resolve(&self.host).await.map_err(|e| {
                    Failure::new(
                        "connect_error",
                        format!("could not resolve the SMTP server {} ({e}); nothing was sent", self.host),
                    )
                })?;
                (addrs, Some(self.host.as_str()))
            }
        };
        for &addr in &addrs {
            if let Some(reason) = refusal(addr, name, allow) {
                let host = name.map_or_else(|| addr.to_string(), str::to_owned);
                let refused = EgressError::Blocked { host, addr, reason };
                return Err(Failure::new("blocked", refused.to_string()));
            }
        }
        addrs.first().copied().ok_or_else(|| {
            Failure::new("connect_error", format!("the SMTP server {} resolved to no address", self.host))
        })
    }

    fn transport(
        &self,
        addr: IpAddr,
        o: &Opened,
        timeout: Duration,
    ) -> Result<AsyncSmtpTransport<Tokio1Executor>, Failure> {
        let tls_failure =
            |e: lettre::transport::smtp::Error| Failure::new("tls_error", format!("TLS setup failed: {e}"));
        let tls = match self.security {
            Security::None => Tls::None,
            Security::StartTls => Tls::Required(TlsParameters::new(self.host.clone()).map_err(tls_failure)?),
            Security::Tls => Tls::Wrapper(TlsParameters::new(self.host.clone()).map_err(tls_failure)?),
        };
        let mut b = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(addr.to_string())
            .port(self.port)
            .tls(tls)
            .timeout(Some(timeout));
        // A password never travels in clear: plain SMTP sends no login.
        if let (Some(user), false) = (&self.username, self.security == Security::None) {
            b = b.credentials(Credentials::new(user.clone(), o.secret()?.to_owned()));
        }
        Ok(b.build())
    }
}

/// Why `addr` (reached through the name `host`, when there is one) may not
/// be connected to: the egress policy's verdict, spelled with its public
/// parts.
fn refusal(addr: IpAddr, host: Option<&str>, allow: &Allow) -> Option<&'static str> {
    let reason = blocked(addr);
    if reason == Some(METADATA_REASON) {
        return reason;
    }
    if host.is_some_and(|h| allow.permits_host(h)) || allow.permits_ip(addr) {
        return None;
    }
    reason
}

fn port_of(v: &Value) -> Option<u16> {
    match v {
        Value::Number(n) => n.as_u64().and_then(|p| u16::try_from(p).ok()),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|p| *p != 0)
}

fn mailboxes(field: &str, texts: Vec<&str>) -> Result<Vec<Mailbox>, Failure> {
    texts
        .into_iter()
        .flat_map(|t| t.split(','))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse::<Mailbox>().map_err(|_| {
                Failure::new(
                    "invalid_input",
                    format!("{field}: {} is not an e-mail address", lf_core::clip(t, 100)),
                )
            })
        })
        .collect()
}

/// A `Message-ID` made from an idempotency key (`run:step:attempt`).
fn message_id(key: &str) -> String {
    let local: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '#') { c } else { '.' })
        .collect();
    format!("<{}@lenserfight.idempotency>", local.trim_matches('.'))
}

fn smtp_failure(e: &lettre::transport::smtp::Error) -> Failure {
    let (code, what) = if e.is_timeout() {
        ("timeout", "the SMTP server did not answer in time")
    } else if e.is_transient() {
        ("status_5xx", "the SMTP server refused the message for now")
    } else if e.is_permanent() {
        ("status_4xx", "the SMTP server refused the message")
    } else if e.is_tls() {
        ("tls_error", "TLS with the SMTP server failed")
    } else {
        ("connect_error", "the SMTP exchange failed")
    };
    let mut message = format!("{what}: {e}");
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = s.source();
    }
    Failure::new(code, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_ids_are_made_of_the_key() {
        assert_eq!(
            message_id("0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d:mail#2:1"),
            "<0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d.mail#2.1@lenserfight.idempotency>"
        );
    }

    #[test]
    fn the_policy_is_egress_policy() {
        let none = Allow::default();
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        assert_eq!(refusal(lo, None, &none), Some("loopback"));
        assert_eq!(refusal(lo, None, &Allow::parse("127.0.0.1").unwrap()), None);
        assert_eq!(refusal(lo, Some("mail.lan"), &Allow::parse("mail.lan").unwrap()), None);
        let md: IpAddr = "169.254.169.254".parse().unwrap();
        assert_eq!(
            refusal(md, Some("x"), &Allow::parse("169.254.0.0/16, x").unwrap()),
            Some(METADATA_REASON)
        );
        assert_eq!(refusal("8.8.8.8".parse().unwrap(), None, &none), None);
    }

    #[test]
    fn addresses_are_read_one_by_one() {
        let list = mailboxes("to", vec!["a@example.com, B <b@example.com>", "c@example.com"]).unwrap();
        assert_eq!(list.len(), 3);
        assert!(
            mailboxes("to", vec!["not an address"]).unwrap_err().message.contains("not an e-mail address")
        );
    }
}
