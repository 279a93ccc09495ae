//! rss_feed against a feed served on loopback.

use serde_json::json;

use super::fakes::{HttpFake, Reply};
use super::{World, maps_statuses};

const RSS: &str = r#"<?xml version="1.0"?>
<rss version="2.0"><channel><title>Rust Blog</title>
<item><title>Old</title><link>https://blog.example/old</link><pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate><description>First &amp; oldest</description></item>
<item><title>New</title><link>https://blog.example/new</link><pubDate>Wed, 03 Jan 2024 00:00:00 GMT</pubDate><description>&lt;p&gt;Newest&lt;/p&gt;</description></item>
<item><title>Mid</title><link>https://blog.example/mid</link><pubDate>Tue, 02 Jan 2024 00:00:00 GMT</pubDate></item>
</channel></rss>"#;

const ATOM: &str = r#"<feed xmlns="http://www.w3.org/2005/Atom"><title>Atom</title>
<entry><title>One</title><link href="https://a.example/1"/><updated>2024-01-01T00:00:00Z</updated><summary>s1</summary></entry>
</feed>"#;

#[tokio::test]
async fn rss_feed_reads_rss_newest_first_up_to_its_limit() {
    let w = World::new();
    let feed = HttpFake::start().await;
    feed.answer(Reply::text(200, RSS).typed("application/rss+xml"));
    let job = w.job("rss_feed", json!({"url": feed.url("/feed.xml"), "limit": 2}), None, json!({})).await;
    let out = w.run(&job).await.unwrap();
    assert_eq!(
        out,
        json!({"title": "Rust Blog", "items": [
            {"title": "New", "link": "https://blog.example/new", "published": "2024-01-03T00:00:00Z", "summary": "Newest"},
            {"title": "Mid", "link": "https://blog.example/mid", "published": "2024-01-02T00:00:00Z", "summary": null},
        ]})
    );
    let seen = feed.one();
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("GET", "/feed.xml"));
    assert!(seen.header("accept").is_some_and(|a| a.contains("application/rss+xml")));
    assert_eq!(seen.header("idempotency-key"), None);
}

#[tokio::test]
async fn rss_feed_reads_atom_and_refuses_what_is_not_a_feed() {
    let w = World::new();
    let feed = HttpFake::start().await;
    feed.answer(Reply::text(200, ATOM).typed("application/atom+xml"));
    let job = w.job("rss_feed", json!({"url": feed.url("/atom")}), None, json!({})).await;
    let out = w.run(&job).await.unwrap();
    assert_eq!(out["title"], "Atom");
    assert_eq!(
        out["items"],
        json!([{"title": "One", "link": "https://a.example/1", "published": "2024-01-01T00:00:00Z", "summary": "s1"}])
    );
    feed.answer(Reply::text(200, "<html><body>Hello</body></html>").typed("text/html"));
    assert!(w.fails(&job, "invalid_response").await.message.contains("not an RSS or Atom feed"));
    feed.answer(Reply::text(200, "<rss><channel>"));
    w.run(&job).await.expect("an unclosed feed reads as far as it goes");
    feed.answer(Reply::text(200, "<rss><channel></item></rss>"));
    assert!(w.fails(&job, "invalid_response").await.message.contains("not well-formed"));
    maps_statuses(&w, &feed, &job).await;
}
