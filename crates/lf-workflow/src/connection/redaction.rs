//! [`Redaction`]: what the saved connections a step opened must never
//! leave in what the step gives back. Built from each connection's secret
//! and settings; applied once, by the runner, to a step's output, error,
//! log line and saved state before any of them is stored, shown or logged.

use std::borrow::Cow;
use std::fmt;

use serde_json::Value;

use super::model::{Connection, Secret};
use crate::model::JsonObject;
use crate::secrets::{REDACTED, names_a_credential};

/// The shortest value redacted, in characters: a shorter one would match
/// ordinary text.
pub const MIN_SECRET_CHARS: usize = 8;
/// A part of a secret URL this long is redacted even when it holds no
/// digit (shorter ones without a digit read as words: `services`, `api`).
const WORDLIKE_CHARS: usize = 16;

/// The mark `lf_core::clip` ends a clipped text with.
const CLIP_MARK: char = '…';
/// The fewest characters of a value cut short by a clip that are
/// redacted (fewer give away too little to matter, and would match by
/// chance).
const CUT_CHARS: usize = 4;

/// The rule [`Redaction`] applies, as the docs state it.
pub const REDACTION_RULE: &str = "What a step that used a saved connection gives back (its output, its error, its log line, what it saves while it waits) passes one redaction before it is stored, shown or logged: the connection's secret; every path segment, query value, fragment and user name or password of a secret URL (a Slack or Discord webhook's, an `http` connection's) that holds a digit or is at least 16 characters long; the user name, password and credential-named query values of a URL in its settings; and the values of its credential-named `headers` settings, each as written, percent-encoded and JSON-escaped, read `[redacted]`, and so does the start of one (4 characters or more) that a quote clipped at its end. A value shorter than 8 characters is left alone: it would match ordinary text.";

/// The values a step's saved connections must not leave anywhere, in
/// every form they may be quoted in (see [`REDACTION_RULE`]). Its `Debug`
/// shows how many it holds, never which.
#[derive(Clone, Default)]
pub struct Redaction {
    /// Longest first, so a value is replaced before a part of it.
    values: Vec<String>,
}

impl fmt::Debug for Redaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redaction({} values)", self.values.len())
    }
}

impl Redaction {
    /// Nothing to redact yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Adds what `connection` and its opened `secret` must not leave.
    pub fn add_connection(&mut self, connection: &Connection, secret: &Secret) {
        match secret.expose_str() {
            Ok(text) => self.add_secret(text),
            Err(_) => self.add_value(&String::from_utf8_lossy(secret.expose())),
        }
        self.add_settings(&connection.settings);
    }

    /// A connection's secret: the value itself and, when it is a URL, the
    /// parts of it that look made to be secret.
    pub fn add_secret(&mut self, secret: &str) {
        let secret = secret.trim();
        self.add_value(secret);
        let Some(url) = UrlParts::parse(secret) else { return };
        let parts = url.userinfo.iter().chain(&url.segments).chain(url.query.iter().map(|(_, v)| v));
        for part in parts.chain(&url.fragment) {
            for form in [Cow::Borrowed(*part), percent_decode(part)] {
                if looks_made(&form) {
                    self.add_value(&form);
                }
            }
        }
    }

    /// What a connection's settings hold that is a credential: the user
    /// name, password and credential-named query values of every URL in
    /// them, and the values of credential-named `headers`.
    fn add_settings(&mut self, settings: &JsonObject) {
        if let Some(Value::Object(headers)) = settings.get("headers") {
            for (name, value) in headers {
                if let (true, Value::String(v)) = (names_a_credential(name), value) {
                    self.add_value(v.trim());
                }
            }
        }
        let mut stack: Vec<&Value> = settings.values().collect();
        while let Some(v) = stack.pop() {
            match v {
                Value::String(s) => {
                    let Some(url) = UrlParts::parse(s.trim()) else { continue };
                    let named = url.query.iter().filter(|(k, _)| names_a_credential(k)).map(|(_, v)| v);
                    for part in url.userinfo.iter().chain(named) {
                        self.add_value(part);
                        self.add_value(&percent_decode(part));
                    }
                }
                Value::Array(a) => stack.extend(a),
                Value::Object(m) => stack.extend(m.values()),
                _ => {}
            }
        }
    }

    /// `value` as written, JSON-escaped (also with `\/`) and
    /// percent-encoded, unless it is shorter than [`MIN_SECRET_CHARS`].
    pub fn add_value(&mut self, value: &str) {
        if value.chars().count() < MIN_SECRET_CHARS {
            return;
        }
        let escaped = serde_json::to_string(value).unwrap_or_default();
        let escaped = escaped[1..escaped.len() - 1].to_owned();
        let forms = [
            value.to_owned(),
            escaped.replace('/', "\\/"),
            escaped,
            percent_encode(value, false),
            percent_encode(value, true),
            percent_encode(value, false).replace("%20", "+"),
        ];
        for form in forms {
            if !self.values.contains(&form) {
                self.values.push(form);
            }
        }
        self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }

    /// `text` with every value replaced by [`REDACTED`], and the start of
    /// one cut short where the text was clipped (just before a `…`, at
    /// least [`CUT_CHARS`] of it).
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for v in &self.values {
            if out.contains(v.as_str()) {
                out = Cow::Owned(out.replace(v.as_str(), REDACTED));
            }
        }
        if out.contains(CLIP_MARK)
            && let Some(cut) = self.cut_short(&out)
        {
            out = Cow::Owned(cut);
        }
        out
    }

    /// `text` with the start of a value that ends a piece just before a
    /// [`CLIP_MARK`] replaced, if there is one.
    fn cut_short(&self, text: &str) -> Option<String> {
        let mut pieces: Vec<String> = text.split(CLIP_MARK).map(str::to_owned).collect();
        let last = pieces.len() - 1;
        let mut changed = false;
        for piece in &mut pieces[..last] {
            let at = self.values.iter().filter_map(|v| cut_start(piece, v)).min();
            if let Some(at) = at {
                piece.truncate(at);
                piece.push_str(REDACTED);
                changed = true;
            }
        }
        changed.then(|| pieces.join(&CLIP_MARK.to_string()))
    }

    /// [`Redaction::text`] on every string of `value`, object keys too.
    pub fn value(&self, value: &mut Value) {
        if self.is_empty() {
            return;
        }
        let mut stack = vec![value];
        while let Some(v) = stack.pop() {
            match v {
                Value::String(s) => {
                    if let Cow::Owned(r) = self.text(s) {
                        *s = r;
                    }
                }
                Value::Array(a) => stack.extend(a.iter_mut()),
                Value::Object(m) => {
                    if m.keys().any(|k| matches!(self.text(k), Cow::Owned(_))) {
                        let old = std::mem::take(m);
                        *m = old.into_iter().map(|(k, v)| (self.text(&k).into_owned(), v)).collect();
                    }
                    stack.extend(m.values_mut());
                }
                _ => {}
            }
        }
    }
}

/// Where `piece` ends with the start of `value` (at least [`CUT_CHARS`]
/// of it, not all of it): the byte that start begins at.
fn cut_start(piece: &str, value: &str) -> Option<usize> {
    let head: String = value.chars().take(CUT_CHARS).collect();
    if head.chars().count() < CUT_CHARS {
        return None;
    }
    let window = piece.len().saturating_sub(value.len());
    let from = (window..=piece.len()).find(|i| piece.is_char_boundary(*i)).unwrap_or(piece.len());
    piece[from..]
        .match_indices(head.as_str())
        .map(|(i, _)| from + i)
        .find(|&i| value.starts_with(&piece[i..]))
}

/// Whether a part of a secret URL looks made to be secret rather than
/// named: long enough, and with a digit or longer than a word.
fn looks_made(part: &str) -> bool {
    let n = part.chars().count();
    n >= MIN_SECRET_CHARS && (n >= WORDLIKE_CHARS || part.bytes().any(|b| b.is_ascii_digit()))
}

/// The pieces of an http or https URL, as written.
struct UrlParts<'a> {
    userinfo: Vec<&'a str>,
    segments: Vec<&'a str>,
    query: Vec<(&'a str, &'a str)>,
    fragment: Option<&'a str>,
}

impl<'a> UrlParts<'a> {
    fn parse(s: &'a str) -> Option<Self> {
        let (scheme, rest) = s.split_once("://")?;
        if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
            return None;
        }
        let (rest, fragment) = match rest.split_once('#') {
            Some((r, f)) => (r, Some(f)),
            None => (rest, None),
        };
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
        let userinfo = authority.rsplit_once('@').map(|(u, _)| u.split(':').collect()).unwrap_or_default();
        Some(UrlParts {
            userinfo,
            segments: path.split('/').filter(|p| !p.is_empty()).collect(),
            query: query
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| p.split_once('=').unwrap_or((p, "")))
                .collect(),
            fragment: fragment.filter(|f| !f.is_empty()),
        })
    }
}

/// `s` with every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`)
/// as `%XX`.
fn percent_encode(s: &str, lower: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else if lower {
            out.push_str(&format!("%{b:02x}"));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `s` with its `%XX` escapes decoded (as UTF-8, lossily).
fn percent_decode(s: &str) -> Cow<'_, str> {
    if !s.contains('%') {
        return Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).and_then(|c| hex(*c)), b.get(i + 2).and_then(|c| hex(*c))) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    proptest! {
        #[test]
        fn any_secret_and_text_redact_without_panicking(secret in "\\PC{0,40}", text in "\\PC{0,200}") {
            let mut r = Redaction::new();
            r.add_secret(&secret);
            let _ = r.text(&text);
            let mut v = json!({ text.clone(): [text] });
            r.value(&mut v);
        }

        #[test]
        fn clipped_texts_redact_without_panicking(secret in "[ab…é]{8,20}", text in "[ab…é ]{0,80}") {
            let mut r = Redaction::new();
            r.add_secret(&secret);
            let shown = r.text(&text);
            prop_assert!(!shown.contains(&secret));
        }

        #[test]
        fn a_token_never_survives_in_any_form(token in "[A-Za-z0-9_-]{8,40}", before in "\\PC{0,40}", after in "\\PC{0,40}") {
            prop_assume!(!token.contains("redacted"));
            let mut r = Redaction::new();
            r.add_secret(&token);
            let url = format!("https://hooks.example/services/{token}/x");
            let mut hook = Redaction::new();
            hook.add_secret(&url);
            for quoted in [token.clone(), percent_encode(&token, false)] {
                let text = format!("{before}{quoted}{after}");
                let shown = r.text(&text);
                prop_assert!(!shown.contains(&token), "{}", shown);
                // Apart from its URL, a part of a secret URL is redacted when it looks made.
                let shown = hook.text(&text);
                prop_assert_eq!(shown.contains(&token), !looks_made(&token), "{}", shown);
            }
            let quoted = format!("{before}{}{after}", serde_json::to_string(&url).unwrap());
            prop_assert!(!hook.text(&quoted).contains(&token));
            // The same hook's other path (not `replace("/x", …)`: a token
            // may itself start with `x`).
            let next = format!("{before}https://hooks.example/services/{token}/next?again=1{after}");
            prop_assert_eq!(hook.text(&next).contains(&token), !looks_made(&token));
        }
    }

    const HOOK: &str = "https://hooks.slack.example/services/T0A1B2C3D/B9Z8Y7X6W/abcdefghijklmnopqrstuvwx";

    #[test]
    fn a_secret_is_redacted_in_every_form() {
        let mut r = Redaction::new();
        r.add_secret(" canary-token-1234\n");
        assert_eq!(r.text("Bearer canary-token-1234 ok"), "Bearer [redacted] ok");
        assert_eq!(r.text("x=canary-token-1234&y"), "x=[redacted]&y");
        let mut spaced = Redaction::new();
        spaced.add_secret("pass word/with \"quotes\"");
        for form in [
            r#"pass word\/with \"quotes\""#,
            r#"pass word/with \"quotes\""#,
            "pass%20word%2Fwith%20%22quotes%22",
            "pass%20word%2fwith%20%22quotes%22",
            "pass+word%2Fwith+%22quotes%22",
        ] {
            assert_eq!(spaced.text(&format!("<{form}>")), "<[redacted]>", "{form}");
        }
    }

    #[test]
    fn short_values_and_words_are_left_alone() {
        let mut r = Redaction::new();
        r.add_secret("1:x");
        assert!(r.is_empty());
        r.add_secret(HOOK);
        let next = "https://hooks.slack.example/services/T0A1B2C3D/B9Z8Y7X6W/abcdefghijklmnopqrstuvwx/6";
        assert_eq!(r.text(&format!("redirected to {next}")), "redirected to [redacted]/6");
        let moved = "https://elsewhere.example/services/x/abcdefghijklmnopqrstuvwx?id=T0A1B2C3D";
        assert_eq!(r.text(moved), "https://elsewhere.example/services/x/[redacted]?id=[redacted]");
        assert_eq!(r.text("the services answered 1:x"), "the services answered 1:x");
    }

    #[test]
    fn a_value_cut_short_by_a_clip_is_redacted_too() {
        let mut r = Redaction::new();
        r.add_secret("canary-token-1234");
        let clipped = format!("answered 400: GET / authorization: Bearer {}", "canary-tok");
        let clipped = lf_core::clip(&clipped, clipped.chars().count() - 1).into_owned();
        assert_eq!(r.text(&clipped), "answered 400: GET / authorization: Bearer [redacted]…");
        assert_eq!(r.text("url Bearer can… is not a URL"), "url Bearer can… is not a URL");
        assert_eq!(r.text("a cana… b canary-token-1234"), "a [redacted]… b [redacted]");
        assert_eq!(r.text("cut…"), "cut…");
    }

    #[test]
    fn url_settings_and_credential_headers_are_redacted() {
        let mut r = Redaction::new();
        let settings = json!({
            "url": "https://user:hunter2hunter2@api.example/v1/items?page=2&api_key=k3y-k3y-k3y",
            "headers": {"X-Api-Key": "header-secret-9", "Accept": "application/json"},
        });
        r.add_settings(settings.as_object().unwrap());
        let t = "hunter2hunter2 k3y-k3y-k3y header-secret-9 application/json /v1/items";
        assert_eq!(r.text(t), "[redacted] [redacted] [redacted] application/json /v1/items");
    }

    #[test]
    fn values_are_redacted_everywhere_keys_too() {
        let mut r = Redaction::new();
        r.add_secret("canary-token-1234");
        let mut v = json!({"headers": {"authorization": "Bearer canary-token-1234"},
            "canary-token-1234": [1, "a canary-token-1234 b"], "n": 3});
        r.value(&mut v);
        assert_eq!(
            v,
            json!({"headers": {"authorization": "Bearer [redacted]"}, "[redacted]": [1, "a [redacted] b"], "n": 3})
        );
        assert_eq!(format!("{r:?}"), format!("Redaction({} values)", r.values.len()));
        assert!(!format!("{r:?}").contains("canary"));
    }
}
