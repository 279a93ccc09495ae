//! `rss_feed`: one GET through the egress guard, then the answer read as
//! RSS 2.0, RSS 1.0 (RDF) or Atom by a streaming XML reader. No DTD is
//! processed (an entity the feed declares itself stays as written), the
//! feed is at most [`MAX_FEED_BYTES`], at most [`MAX_ENTRIES`] entries are
//! read and each text is bounded, so the work is linear in the answer.
//!
//! Entries come out newest first (by `pubDate`, `published`, `dc:date` or
//! else `updated`; entries without a date keep their order, after the
//! dated ones), each `{title, link, published, summary}`: `published` in
//! RFC 3339 (UTC) when it reads as a date, else as written; `summary` the
//! entry's description as plain text (tags dropped), at most
//! [`SUMMARY_CHARS`] characters.

use std::cmp::Reverse;

use chrono::{DateTime, SecondsFormat, Utc};
use lf_egress::{EgressRequest, HeaderName, HeaderValue};
use lf_workflow::engine::Failure;
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use serde_json::{Value, json};

use super::common::{Config, Shared, parse_url, refuse_status};
use crate::executor::Job;

/// The largest feed read, in bytes.
pub const MAX_FEED_BYTES: usize = 2 * 1024 * 1024;
/// Most entries read from one feed (before the newest are kept).
pub const MAX_ENTRIES: usize = 1_000;
/// Most characters of an entry's summary.
pub const SUMMARY_CHARS: usize = 1_000;
/// Most characters of a title or link.
const TITLE_CHARS: usize = 500;
/// Most bytes kept of any one text while reading.
const FIELD_BYTES: usize = 64 * 1024;
/// Deepest nesting read.
const MAX_DEPTH: usize = 64;

pub(super) async fn rss_feed(s: &Shared, job: &Job) -> Result<Value, Failure> {
    let c = Config::of(job);
    let url = parse_url("url", c.required("url")?)?;
    let limit = c.uint("limit")?.unwrap_or(20).clamp(1, 100) as usize;
    let request = EgressRequest::get(url).header(
        HeaderName::from_static("accept"),
        HeaderValue::from_static(
            "application/rss+xml, application/atom+xml, application/xml;q=0.9, */*;q=0.8",
        ),
    );
    let answer = s.send(request, c.timeout()?).await?;
    refuse_status(&answer, "the feed")?;
    if answer.body.len() > MAX_FEED_BYTES {
        return Err(Failure::new(
            "too_large",
            format!("the feed is {} bytes; at most {MAX_FEED_BYTES} are read", answer.body.len()),
        ));
    }
    let text = std::str::from_utf8(&answer.body)
        .map_err(|_| Failure::new("invalid_response", "the feed is not UTF-8 text"))?;
    let feed = parse(text).map_err(|why| Failure::new("invalid_response", why))?;
    Ok(feed.output(limit))
}

/// A feed as read.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Feed {
    pub(super) title: Option<String>,
    pub(super) entries: Vec<Entry>,
}

#[derive(Debug, Default, PartialEq)]
pub(super) struct Entry {
    pub(super) title: Option<String>,
    pub(super) link: Option<String>,
    /// The date as written, and as read when it reads.
    pub(super) date: Option<(String, Option<DateTime<Utc>>)>,
    /// Whether `date` is an `updated` (taken only when there is nothing better).
    date_is_update: bool,
    pub(super) summary: Option<String>,
    /// Whether `summary` came from full content (any description wins).
    summary_is_content: bool,
}

impl Feed {
    fn output(mut self, limit: usize) -> Value {
        self.entries.sort_by_key(|e| Reverse(e.date.as_ref().and_then(|d| d.1)));
        let items: Vec<Value> = self
            .entries
            .into_iter()
            .take(limit)
            .map(|e| {
                let published = e.date.map(|(raw, read)| match read {
                    Some(d) => d.to_rfc3339_opts(SecondsFormat::Secs, true),
                    None => raw,
                });
                json!({"title": e.title, "link": e.link, "published": published, "summary": e.summary})
            })
            .collect();
        json!({"title": self.title, "items": items})
    }
}

/// What a text being read will become.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Field {
    FeedTitle,
    Title,
    Link,
    Date { update: bool },
    Summary { content: bool, html: bool },
    Guid,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Rss,
    Atom,
}

struct Capture {
    field: Field,
    /// The depth of the element whose text this is.
    depth: usize,
    text: String,
}

/// Reads `text` as a feed, or says why it is not one.
pub(super) fn parse(text: &str) -> Result<Feed, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = Reader::from_str(text);
    let mut feed = Feed::default();
    let mut kind = None;
    let mut stack: Vec<String> = Vec::new();
    let mut entry: Option<(Entry, usize)> = None;
    let mut capture: Option<Capture> = None;
    let mut guid: Option<String> = None;
    loop {
        let event = reader.read_event().map_err(|e| {
            format!("the feed is not well-formed XML near byte {}: {e}", reader.buffer_position())
        })?;
        match event {
            // Markup inside a text (Atom's xhtml content): its text counts.
            Event::Start(e) if capture.is_some() => {
                if stack.len() == MAX_DEPTH {
                    return Err(format!("the feed nests deeper than {MAX_DEPTH} elements"));
                }
                stack.push(local(&e));
            }
            Event::Empty(_) if capture.is_some() => {}
            ref ev @ (Event::Start(ref e) | Event::Empty(ref e)) => {
                let empty = matches!(ev, Event::Empty(_));
                let name = local(e);
                if stack.is_empty() {
                    kind = Some(match name.as_str() {
                        "rss" | "RDF" => Kind::Rss,
                        "feed" => Kind::Atom,
                        other => {
                            return Err(format!(
                                "the answer is not an RSS or Atom feed: its root element is <{}>",
                                lf_core::clip(other, 40)
                            ));
                        }
                    });
                }
                let kind = kind.expect("set at the root");
                let depth = stack.len() + 1;
                let parent = stack.last().map(String::as_str);
                match &mut entry {
                    None if matches!((kind, name.as_str()), (Kind::Rss, "item") | (Kind::Atom, "entry")) => {
                        if feed.entries.len() == MAX_ENTRIES {
                            break;
                        }
                        entry = Some((Entry::default(), depth));
                        guid = None;
                    }
                    None => {
                        let feed_title = name == "title"
                            && matches!(
                                (kind, parent),
                                (Kind::Rss, Some("channel")) | (Kind::Atom, Some("feed"))
                            );
                        if feed_title && feed.title.is_none() {
                            capture = Some(Capture { field: Field::FeedTitle, depth, text: String::new() });
                        }
                    }
                    Some((current, at)) if depth == *at + 1 => {
                        let html =
                            kind == Kind::Rss || matches!(attr(e, "type").as_deref(), Some("html" | "xhtml"));
                        let field = match name.as_str() {
                            "title" => Some(Field::Title),
                            "link" => match attr(e, "href") {
                                Some(href) => {
                                    let rel = attr(e, "rel");
                                    if current.link.is_none()
                                        && matches!(rel.as_deref(), None | Some("alternate"))
                                    {
                                        current.link = Some(clean(&href, TITLE_CHARS));
                                    }
                                    None
                                }
                                None => Some(Field::Link),
                            },
                            "pubDate" | "published" | "date" | "issued" => {
                                Some(Field::Date { update: false })
                            }
                            "updated" | "modified" => Some(Field::Date { update: true }),
                            "description" | "summary" => Some(Field::Summary { content: false, html }),
                            "encoded" | "content" => Some(Field::Summary { content: true, html }),
                            "guid" | "id" => Some(Field::Guid),
                            _ => None,
                        };
                        if let Some(field) = field.filter(|_| !empty) {
                            capture = Some(Capture { field, depth, text: String::new() });
                        }
                    }
                    Some(_) => {}
                }
                if !empty {
                    if stack.len() == MAX_DEPTH {
                        return Err(format!("the feed nests deeper than {MAX_DEPTH} elements"));
                    }
                    stack.push(name);
                }
            }
            Event::Text(t) => push_text(&mut capture, &t.xml10_content()),
            Event::CData(t) => push_text(&mut capture, &t.xml10_content()),
            Event::GeneralRef(r) => {
                let resolved = match r.resolve_char_ref() {
                    Ok(Some(c)) => Some(c.to_string()),
                    _ => quick_xml::escape::resolve_predefined_entity(&r).map(str::to_owned),
                };
                // An entity the feed declared itself is not expanded.
                push_text(&mut capture, &resolved.unwrap_or_else(|| format!("&{};", &*r)));
            }
            Event::End(_) => {
                let depth = stack.len();
                stack.pop();
                if capture.as_ref().is_some_and(|c| c.depth == depth) {
                    let c = capture.take().expect("checked");
                    match (&mut entry, c.field) {
                        (_, Field::FeedTitle) => {
                            feed.title = Some(clean(&c.text, TITLE_CHARS)).filter(|t| !t.is_empty())
                        }
                        (Some(_), Field::Guid) => guid = Some(c.text),
                        (Some((e, _)), field) => store(e, field, c.text),
                        (None, _) => {}
                    }
                } else if entry.as_ref().is_some_and(|(_, at)| *at == depth) {
                    let (mut done, _) = entry.take().expect("checked");
                    if done.link.is_none() {
                        done.link = guid
                            .take()
                            .map(|g| g.trim().to_owned())
                            .filter(|g| g.starts_with("http://") || g.starts_with("https://"));
                    }
                    feed.entries.push(done);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if kind.is_none() {
        return Err("the answer is empty: not an RSS or Atom feed".to_owned());
    }
    Ok(feed)
}

fn store(e: &mut Entry, field: Field, text: String) {
    match field {
        Field::Title => {
            let t = clean(&text, TITLE_CHARS);
            e.title = Some(t).filter(|t| !t.is_empty());
        }
        Field::Link => {
            if e.link.is_none() {
                e.link = Some(clean(&text, TITLE_CHARS)).filter(|t| !t.is_empty());
            }
        }
        Field::Date { update } => {
            if e.date.is_none() || (e.date_is_update && !update) {
                let raw = text.trim().to_owned();
                let read = DateTime::parse_from_rfc2822(&raw)
                    .or_else(|_| DateTime::parse_from_rfc3339(&raw))
                    .ok()
                    .map(|d| d.with_timezone(&Utc));
                e.date = Some((raw, read)).filter(|(raw, _)| !raw.is_empty());
                e.date_is_update = update;
            }
        }
        Field::Summary { content, html } => {
            if e.summary.is_none() || (e.summary_is_content && !content) {
                let plain = if html { strip_tags(&text) } else { text };
                e.summary = Some(clean(&plain, SUMMARY_CHARS)).filter(|t| !t.is_empty());
                e.summary_is_content = content;
            }
        }
        Field::FeedTitle | Field::Guid => {}
    }
}

fn push_text(capture: &mut Option<Capture>, text: &str) {
    if let Some(c) = capture {
        let room = FIELD_BYTES.saturating_sub(c.text.len());
        let mut end = text.len().min(room);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        c.text.push_str(&text[..end]);
    }
}

fn local(e: &BytesStart<'_>) -> String {
    e.local_name().into_inner().to_owned()
}

/// The unescaped value of the attribute of local name `name`.
fn attr(e: &BytesStart<'_>, name: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().into_inner() == name)
        .and_then(|a| a.normalized_value(quick_xml::XmlVersion::Implicit1_0).ok().map(|v| v.into_owned()))
}

/// HTML as text: tags dropped (a tag becomes a space), entities read.
fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match (in_tag, c) {
            (false, '<') => in_tag = true,
            (true, '>') => {
                in_tag = false;
                out.push(' ');
            }
            (false, c) => out.push(c),
            (true, _) => {}
        }
    }
    match quick_xml::escape::unescape(&out) {
        Ok(text) => text.into_owned(),
        Err(_) => out.replace("&nbsp;", " "),
    }
}

/// Whitespace collapsed, at most `max` characters.
fn clean(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    lf_core::clip(&line, max).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const RSS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel>
  <title>Rust &amp; Friends</title>
  <link>https://blog.example/</link>
  <item>
    <title>Older</title>
    <link>https://blog.example/old</link>
    <pubDate>Mon, 01 Jan 2024 10:00:00 +0000</pubDate>
    <description>&lt;p&gt;Hello &amp;amp; &lt;b&gt;bye&lt;/b&gt;&lt;/p&gt;</description>
  </item>
  <item>
    <title><![CDATA[Newer <one>]]></title>
    <guid>https://blog.example/new</guid>
    <pubDate>Tue, 02 Jan 2024 10:00:00 +0100</pubDate>
    <content:encoded><![CDATA[<p>Full text</p>]]></content:encoded>
  </item>
</channel>
</rss>"#;

    const ATOM: &str = r#"<feed xmlns="http://www.w3.org/2005/Atom">
  <title type="text">Atom feed</title>
  <link rel="self" href="https://a.example/feed.xml"/>
  <entry>
    <title>First</title>
    <link rel="alternate" href="https://a.example/1"/>
    <updated>2024-03-01T00:00:00Z</updated>
    <published>2024-02-01T00:00:00Z</published>
    <summary>Plain &lt;text&gt;</summary>
  </entry>
  <entry>
    <title>Second</title>
    <link href="https://a.example/2"/>
    <updated>2024-02-15T12:00:00+02:00</updated>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Rich</p> text</div></content>
  </entry>
</feed>"#;

    #[test]
    fn reads_rss_newest_first() {
        let out = parse(RSS).unwrap().output(10);
        assert_eq!(out["title"], "Rust & Friends");
        let items = out["items"].as_array().unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0]["title"], "Newer <one>");
        assert_eq!(items[0]["link"], "https://blog.example/new", "a permalink guid stands in for the link");
        assert_eq!(items[0]["published"], "2024-01-02T09:00:00Z");
        assert_eq!(items[0]["summary"], "Full text");
        assert_eq!(items[1]["summary"], "Hello & bye");
        assert_eq!(parse(RSS).unwrap().output(1)["items"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn reads_atom() {
        let out = parse(ATOM).unwrap().output(10);
        assert_eq!(out["title"], "Atom feed");
        let items = out["items"].as_array().unwrap();
        assert_eq!(items[0]["title"], "Second", "updated 2024-02-15 is newer than published 2024-02-01");
        assert_eq!(items[0]["link"], "https://a.example/2");
        assert_eq!(items[0]["summary"], "Rich text");
        assert_eq!(items[1]["published"], "2024-02-01T00:00:00Z", "published wins over updated");
        assert_eq!(items[1]["summary"], "Plain <text>", "type text keeps its angle brackets");
        assert_eq!(items[1]["link"], "https://a.example/1");
    }

    #[test]
    fn refuses_what_is_not_a_feed() {
        assert!(parse("<html><body/></html>").unwrap_err().contains("root element is <html>"));
        assert!(parse("").unwrap_err().contains("empty"));
        assert!(parse("<rss><channel><item></channel></rss>").unwrap_err().contains("not well-formed"));
        let deep = format!("<rss>{}", "<a>".repeat(MAX_DEPTH + 1));
        assert!(parse(&deep).unwrap_err().contains("deeper"));
    }

    #[test]
    fn declared_entities_are_not_expanded() {
        let bomb = r#"<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>
<rss><channel><title>&b;</title><item><title>t &#x41;</title></item></channel></rss>"#;
        let out = parse(bomb).unwrap().output(5);
        assert_eq!(out["title"], "&b;");
        assert_eq!(out["items"][0]["title"], "t A");
    }

    #[test]
    fn entries_and_texts_are_bounded() {
        let many = format!(
            "<rss><channel>{}</channel></rss>",
            "<item><title>x</title></item>".repeat(MAX_ENTRIES + 5)
        );
        assert_eq!(parse(&many).unwrap().entries.len(), MAX_ENTRIES);
        let long = format!(
            "<rss><channel><item><description>{}</description></item></channel></rss>",
            "word ".repeat(1_000)
        );
        let out = parse(&long).unwrap().output(1);
        assert_eq!(out["items"][0]["summary"].as_str().unwrap().chars().count(), SUMMARY_CHARS + 1);
    }
}
