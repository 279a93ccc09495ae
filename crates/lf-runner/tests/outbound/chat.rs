//! slack_notify, discord_notify and telegram_notify against fake
//! webhooks and a fake Bot API.

use serde_json::json;

use super::fakes::{HttpFake, Reply};
use super::{World, key, maps_statuses};

#[tokio::test]
async fn slack_notify_posts_the_filled_text_to_the_connections_webhook() {
    let w = World::new();
    let slack = HttpFake::start().await;
    w.connect("slack", "team-slack", json!({}), &slack.url("/services/T1/B2/secret")).await;
    let job = w
        .job(
            "slack_notify",
            json!({"text": "New digest: [[text]]"}),
            Some("team-slack"),
            json!({"input": {"text": "Three things."}}),
        )
        .await;
    assert_eq!(w.run(&job).await.unwrap(), json!({"delivered": true, "status": 200}));
    let seen = slack.one();
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("POST", "/services/T1/B2/secret"));
    assert_eq!(seen.json(), json!({"text": "New digest: Three things."}));
    assert_eq!(seen.header("idempotency-key"), Some(key(&job).as_str()));

    slack.answer(Reply::text(404, "no_service"));
    let f = w.fails(&job, "status_4xx").await;
    assert!(f.message.starts_with("Slack answered 404") && f.message.contains("no_service"), "{}", f.message);
    assert!(!f.message.contains("secret"), "the webhook URL is the secret: {}", f.message);
    maps_statuses(&w, &slack, &job).await;
}

#[tokio::test]
async fn slack_notify_needs_a_connection_holding_a_url() {
    let w = World::new();
    w.connect("slack", "bad", json!({}), "xoxb-not-a-url").await;
    let job = w.job("slack_notify", json!({"text": "hi"}), Some("bad"), json!({})).await;
    let f = w.fails(&job, "invalid_connection").await;
    assert!(f.message.contains("not a webhook URL") && !f.message.contains("xoxb"), "{}", f.message);
}

#[tokio::test]
async fn discord_notify_posts_content_that_pings_no_one() {
    let w = World::new();
    let discord = HttpFake::start().await;
    discord.answer(Reply::text(204, ""));
    w.connect("discord", "community", json!({}), &discord.url("/api/webhooks/1/tok")).await;
    let config = json!({"text": "Winner: [[winner]] @everyone", "username": "LenserFight"});
    let job = w.job("discord_notify", config, Some("community"), json!({"input": {"winner": "A"}})).await;
    assert_eq!(w.run(&job).await.unwrap(), json!({"delivered": true, "status": 204}));
    let seen = discord.one();
    assert_eq!(
        seen.json(),
        json!({"content": "Winner: A @everyone", "allowed_mentions": {"parse": []}, "username": "LenserFight"})
    );
    assert_eq!(seen.header("idempotency-key"), Some(key(&job).as_str()));
    maps_statuses(&w, &discord, &job).await;

    discord.clear();
    let long = "x".repeat(2_001);
    let job = w.job("discord_notify", json!({"text": long}), Some("community"), json!({})).await;
    assert!(w.fails(&job, "invalid_input").await.message.contains("at most 2000"));
    assert!(discord.seen().is_empty());
}

#[tokio::test]
async fn telegram_notify_calls_send_message_with_the_bots_token() {
    let w = World::new();
    let bot = HttpFake::start().await;
    bot.answer(Reply::json(200, json!({"ok": true, "result": {"message_id": 7}})));
    let settings = json!({"base_url": bot.url("/"), "chat_id": "-100123"});
    w.connect("telegram", "bot", settings, "123456:ABC-def_9").await;
    let config = json!({"text": "Digest <b>[[n]]</b>", "parse_mode": "html"});
    let job = w.job("telegram_notify", config, Some("bot"), json!({"input": {"n": 3}})).await;
    assert_eq!(w.run(&job).await.unwrap(), json!({"delivered": true, "status": 200}));
    let seen = bot.one();
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("POST", "/bot123456:ABC-def_9/sendMessage"));
    assert_eq!(seen.json(), json!({"chat_id": "-100123", "text": "Digest <b>3</b>", "parse_mode": "HTML"}));
    assert_eq!(seen.header("idempotency-key"), Some(key(&job).as_str()));

    bot.clear();
    let job =
        w.job("telegram_notify", json!({"text": "hi", "chat_id": "@news"}), Some("bot"), json!({})).await;
    w.run(&job).await.unwrap();
    assert_eq!(
        bot.one().json(),
        json!({"chat_id": "@news", "text": "hi"}),
        "the step's chat wins; plain sends no parse_mode"
    );

    bot.answer(Reply::json(
        400,
        json!({"ok": false, "description": "Bad Request: chat not found for bot123456:ABC-def_9"}),
    ));
    let f = w.fails(&job, "status_4xx").await;
    assert!(f.message.contains("chat not found") && !f.message.contains("ABC-def_9"), "{}", f.message);
    maps_statuses(&w, &bot, &job).await;
}

#[tokio::test]
async fn telegram_notify_needs_a_chat() {
    let w = World::new();
    let bot = HttpFake::start().await;
    w.connect("telegram", "bot", json!({"base_url": bot.url("/")}), "1:x").await;
    let job = w.job("telegram_notify", json!({"text": "hi"}), Some("bot"), json!({})).await;
    assert!(w.fails(&job, "config_invalid").await.message.contains("chat_id is required"));
    assert!(bot.seen().is_empty());
}

#[tokio::test]
async fn a_webhooks_secret_path_is_redacted_from_a_redirect_error() {
    let w = World::new();
    let slack = HttpFake::start().await;
    let path = "/services/T0A1B2C3D/B9Z8Y7X6W/abcdefghijklmnopqrstuvwx";
    w.connect("slack", "team-slack", json!({}), &slack.url(path)).await;
    slack.answer(
        Reply::text(302, "").with_header("location", &format!("{path}/again?from=abcdefghijklmnopqrstuvwx")),
    );
    let job = w.job("slack_notify", json!({"text": "hi"}), Some("team-slack"), json!({})).await;
    let f = w.fails(&job, "too_many_redirects").await;
    assert!(!f.message.contains("abcdefghijklmnopqrstuvwx"), "{}", f.message);
    assert!(!f.message.contains("T0A1B2C3D") && !f.message.contains("B9Z8Y7X6W"), "{}", f.message);
    assert!(f.message.contains("[redacted]"), "{}", f.message);
}
