//! email_send against a tiny SMTP server on loopback.

use serde_json::json;

use super::fakes::SmtpFake;
use super::{World, egress, key};

async fn mail_world(w: &World, smtp: &SmtpFake) {
    let settings = json!({"host": "127.0.0.1", "port": smtp.port(), "security": "none", "from": "Bot <bot@example.com>"});
    w.connect("smtp", "mail", settings, "hunter2").await;
}

fn config() -> serde_json::Value {
    json!({
        "to": ["team@example.com", "lead@example.com"],
        "cc": "copy@example.com",
        "reply_to": "replies@example.com",
        "subject": "Weekly digest: [[n]] items",
        "body": "This week: [[text]]\n.\nEnd.",
    })
}

#[tokio::test]
async fn email_send_delivers_one_message_keyed_by_its_message_id() {
    let w = World::new();
    let smtp = SmtpFake::start().await;
    mail_world(&w, &smtp).await;
    let job =
        w.job("email_send", config(), Some("mail"), json!({"input": {"n": 3, "text": "a, b, c"}})).await;
    assert_eq!(w.run(&job).await.unwrap(), json!({"delivered": true, "status": 250}));
    let mails = smtp.mails();
    assert_eq!(mails.len(), 1);
    let mail = &mails[0];
    assert_eq!(mail.from, "bot@example.com");
    assert_eq!(mail.to, ["team@example.com", "lead@example.com", "copy@example.com"]);
    let data = &mail.data;
    assert!(data.contains("Subject: Weekly digest: 3 items\r\n"), "{data}");
    assert!(data.contains("From: Bot <bot@example.com>\r\n"), "{data}");
    assert!(data.contains("Reply-To: replies@example.com\r\n"), "{data}");
    assert!(data.contains("This week: a, b, c\r\n.\r\nEnd."), "a lone dot survives stuffing: {data}");
    let id = key(&job).replace(':', ".");
    assert!(data.contains(&format!("Message-ID: <{id}@lenserfight.idempotency>")), "{data}");
    assert!(!data.contains("hunter2"));
}

#[tokio::test]
async fn email_send_maps_smtp_refusals() {
    let w = World::new();
    let smtp = SmtpFake::start().await;
    mail_world(&w, &smtp).await;
    let job = w.job("email_send", config(), Some("mail"), json!({"input": {"n": 1, "text": "x"}})).await;
    smtp.answer_rcpt("550 5.1.1 no such user");
    assert!(w.fails(&job, "status_4xx").await.message.contains("no such user"));
    smtp.answer_rcpt("451 4.3.0 try again later");
    assert!(w.fails(&job, "status_5xx").await.message.contains("try again later"));
    assert!(smtp.mails().is_empty());
}

#[tokio::test]
async fn email_send_checks_its_server_against_the_egress_policy() {
    let w = World::with(egress(""));
    let smtp = SmtpFake::start().await;
    mail_world(&w, &smtp).await;
    let job = w.job("email_send", config(), Some("mail"), json!({"input": {"n": 1, "text": "x"}})).await;
    let f = w.fails(&job, "blocked").await;
    assert!(f.message.contains("loopback"), "{}", f.message);
    assert_eq!(smtp.connections(), 0, "nothing connected to the server");

    w.connect(
        "smtp",
        "meta",
        json!({"host": "169.254.169.254", "security": "none", "from": "a@example.com"}),
        "p",
    )
    .await;
    let job = w.job("email_send", config(), Some("meta"), json!({})).await;
    assert!(w.fails(&job, "blocked").await.message.contains("cloud metadata"));
}
