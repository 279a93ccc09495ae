//! `github_read` and `github_issue_create`: GitHub's REST API at the
//! saved github connection's `base_url` (default [`DEFAULT_API`]), with
//! its token when there is one.
//!
//! `github_read` outputs, by `resource`:
//! - `repository`: `full_name`, `description`, `url`, `default_branch`,
//!   `stars`, `forks`, `open_issues`, `language`, `topics`, `archived`,
//!   `private`, `pushed_at`;
//! - `issues` (pull requests left out) and `pulls`: `{items}`, each with
//!   `number`, `title`, `state`, `url`, `author`, `labels`, `comments`
//!   (issues) or `draft` and `merged_at` (pulls), `created_at`,
//!   `updated_at` and `body` (its first 2,000 characters);
//! - `readme` and `file`: `content` (text, at most 1 MiB), `size` (bytes),
//!   `truncated`, and for a file its `path`.

use lf_egress::{EgressRequest, EgressResponse, HeaderName, HeaderValue, Method, Url};
use lf_workflow::engine::Failure;
use lf_workflow::exec::fill_placeholders;
use serde_json::{Map, Value, json};

use super::common::{Config, Shared, excerpt, json_answer, not_blank, refuse_status, scope, with_key};
use super::http::credential;
use crate::executor::Job;

/// GitHub's API, where a connection names no `base_url`.
pub(super) const DEFAULT_API: &str = "https://api.github.com";
const API_VERSION: &str = "2022-11-28";
const JSON: &str = "application/vnd.github+json";
/// A file's bytes as they are, rather than base64 in JSON.
const RAW: &str = "application/vnd.github.raw";
/// Most characters of an issue's or pull request's body in a listing.
const BODY_CHARS: usize = 2_000;
/// Most bytes of a file's or README's content in the output.
const MAX_CONTENT_BYTES: usize = 1 << 20;

pub(super) async fn read(s: &Shared, job: &Job) -> Result<Value, Failure> {
    let c = Config::of(job);
    let api = Api::open(s, job, false).await?;
    let (owner, name) = repository(&c)?;
    let state = match c.str("state")?.unwrap_or("open") {
        st @ ("open" | "closed" | "all") => st,
        other => {
            return Err(Failure::new(
                "config_invalid",
                format!("state must be open, closed or all, not {}", lf_core::clip(other, 20)),
            ));
        }
    };
    let limit = c.uint("limit")?.unwrap_or(20).clamp(1, 100) as usize;
    let repo = format!("{owner}/{name}");
    match c.str("resource")?.unwrap_or("repository") {
        "repository" => {
            let r = api.get(s, &["repos", owner, name], &repo, "repository").await?;
            Ok(repository_fields(&r))
        }
        "issues" => {
            // Pull requests are issues too: ask for a full page, keep the issues.
            let query = [("state", state), ("per_page", "100")];
            let list = api.list(s, &["repos", owner, name, "issues"], &query, &repo).await?;
            let items: Vec<Value> = list
                .iter()
                .filter(|i| i.get("pull_request").is_none())
                .take(limit)
                .map(issue_fields)
                .collect();
            Ok(json!({ "items": items }))
        }
        "pulls" => {
            let per_page = limit.to_string();
            let query = [("state", state), ("per_page", per_page.as_str())];
            let list = api.list(s, &["repos", owner, name, "pulls"], &query, &repo).await?;
            Ok(json!({ "items": list.iter().take(limit).map(pull_fields).collect::<Vec<_>>() }))
        }
        "readme" => {
            let answer = api.raw(s, &["repos", owner, name, "readme"], &repo, "README").await?;
            Ok(content(&answer, None))
        }
        "file" => {
            let path = c.str("path")?.map(str::trim).filter(|p| !p.is_empty()).ok_or_else(|| {
                Failure::new(
                    "config_invalid",
                    "path is required when resource is file: the file's path in the repository",
                )
            })?;
            let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
            if parts.iter().any(|p| p.is_empty() || *p == "." || *p == "..") {
                return Err(Failure::new(
                    "config_invalid",
                    format!(
                        "path {} must be a file's path in the repository, such as src/lib.rs",
                        lf_core::clip(path, 100)
                    ),
                ));
            }
            let mut segments = vec!["repos", owner, name, "contents"];
            segments.extend(&parts);
            let answer = api.raw(s, &segments, &repo, &format!("file {path}")).await?;
            Ok(content(&answer, Some(&parts.join("/"))))
        }
        other => Err(Failure::new(
            "config_invalid",
            format!(
                "resource must be repository, issues, pulls, readme or file, not {}",
                lf_core::clip(other, 20)
            ),
        )),
    }
}

pub(super) async fn create_issue(s: &Shared, job: &Job) -> Result<Value, Failure> {
    let c = Config::of(job);
    let api = Api::open(s, job, true).await?;
    let (owner, name) = repository(&c)?;
    let scope = scope(&job.input);
    let mut issue = Map::new();
    issue.insert(
        "title".into(),
        Value::String(not_blank("title", fill_placeholders(c.required("title")?, &scope))?),
    );
    if let Some(body) = c.str("body")? {
        issue.insert("body".into(), Value::String(fill_placeholders(body, &scope)));
    }
    let labels = c.texts("labels")?;
    if !labels.is_empty() {
        issue.insert("labels".into(), json!(labels));
    }
    let request = api
        .request(Method::POST, &["repos", owner, name, "issues"], &[], JSON)
        .header(HeaderName::from_static("content-type"), HeaderValue::from_static("application/json"))
        .body(Value::Object(issue).to_string());
    let answer = s.send(with_key(request, job), None).await?;
    let answer = api.check(answer, &format!("{owner}/{name}"), "repository")?;
    let made = json_answer(&answer, "GitHub")?;
    let number = made.get("number").and_then(Value::as_u64).ok_or_else(|| {
        Failure::new("invalid_response", format!("GitHub answered {} without an issue number", answer.status))
    })?;
    Ok(json!({ "number": number, "url": made.get("html_url").cloned().unwrap_or(Value::Null) }))
}

/// `repository` as (owner, name).
fn repository<'a>(c: &Config<'a>) -> Result<(&'a str, &'a str), Failure> {
    let text = c.required("repository")?.trim();
    let ok = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    };
    match text.split_once('/') {
        Some((owner, name)) if ok(owner) && ok(name) => Ok((owner, name)),
        _ => Err(Failure::new(
            "config_invalid",
            format!(
                "repository must be owner/name, such as rust-lang/rust, not {}",
                lf_core::clip(text, 100)
            ),
        )),
    }
}

/// The API a step reads or writes, and its credential.
struct Api {
    base: Url,
    token: Option<HeaderValue>,
}

impl Api {
    async fn open(s: &Shared, job: &Job, required: bool) -> Result<Api, Failure> {
        let opened = if required {
            Some(s.required_connection(job, &["github"]).await?)
        } else {
            s.connection(job, &["github"]).await?
        };
        let Some(o) = opened else {
            return Ok(Api { base: Url::parse(DEFAULT_API).expect("a URL"), token: None });
        };
        let base = o.base_url("base_url", DEFAULT_API)?;
        if base.cannot_be_a_base() {
            return Err(o.invalid("has a base_url setting that cannot take a path"));
        }
        let token = credential(&o, &format!("Bearer {}", o.secret()?))?;
        Ok(Api { base, token: Some(token) })
    }

    fn request(
        &self,
        method: Method,
        segments: &[&str],
        query: &[(&str, &str)],
        accept: &'static str,
    ) -> EgressRequest {
        let mut url = self.base.clone();
        url.path_segments_mut().expect("checked when opened").pop_if_empty().extend(segments);
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let mut request = EgressRequest::new(method, url)
            .header(HeaderName::from_static("accept"), HeaderValue::from_static(accept))
            .header(HeaderName::from_static("x-github-api-version"), HeaderValue::from_static(API_VERSION));
        if let Some(token) = &self.token {
            request = request.header(HeaderName::from_static("authorization"), token.clone());
        }
        request
    }

    /// The answer, or the failure its status means; `what` names the
    /// thing a 404 did not find.
    fn check(&self, answer: EgressResponse, repo: &str, what: &str) -> Result<EgressResponse, Failure> {
        let status = answer.status.as_u16();
        let spent = answer.headers.get("x-ratelimit-remaining").is_some_and(|v| v.as_bytes() == b"0");
        if status == 404 {
            let hint = if self.token.is_some() {
                "or the connection's token may not read it"
            } else {
                "or it is private: name a saved github connection"
            };
            return Err(Failure::new("not_found", format!("GitHub found no {what} in {repo} ({hint})")));
        }
        if status == 403 && spent {
            return Err(Failure::new(
                "rate_limit",
                format!("GitHub's rate limit is spent: {}", excerpt(&answer.body)),
            ));
        }
        refuse_status(&answer, "GitHub")?;
        Ok(answer)
    }

    async fn get(&self, s: &Shared, segments: &[&str], repo: &str, what: &str) -> Result<Value, Failure> {
        let answer = s.send(self.request(Method::GET, segments, &[], JSON), None).await?;
        json_answer(&self.check(answer, repo, what)?, "GitHub")
    }

    async fn list(
        &self,
        s: &Shared,
        segments: &[&str],
        query: &[(&str, &str)],
        repo: &str,
    ) -> Result<Vec<Value>, Failure> {
        let answer = s.send(self.request(Method::GET, segments, query, JSON), None).await?;
        match json_answer(&self.check(answer, repo, "repository")?, "GitHub")? {
            Value::Array(items) => Ok(items),
            _ => Err(Failure::new("invalid_response", "GitHub answered a listing that is not a list")),
        }
    }

    /// A file's bytes as they are (GitHub's raw media type).
    async fn raw(
        &self,
        s: &Shared,
        segments: &[&str],
        repo: &str,
        what: &str,
    ) -> Result<EgressResponse, Failure> {
        let request = self.request(Method::GET, segments, &[], RAW);
        let answer = s.send(request, None).await?;
        self.check(answer, repo, what)
    }
}

fn pick(from: &Value, keys: &[(&str, &str)]) -> Map<String, Value> {
    keys.iter()
        .map(|(out, key)| ((*out).to_owned(), from.get(*key).cloned().unwrap_or(Value::Null)))
        .collect()
}

fn repository_fields(r: &Value) -> Value {
    Value::Object(pick(
        r,
        &[
            ("full_name", "full_name"),
            ("description", "description"),
            ("url", "html_url"),
            ("default_branch", "default_branch"),
            ("stars", "stargazers_count"),
            ("forks", "forks_count"),
            ("open_issues", "open_issues_count"),
            ("language", "language"),
            ("topics", "topics"),
            ("archived", "archived"),
            ("private", "private"),
            ("pushed_at", "pushed_at"),
        ],
    ))
}

fn common_fields(i: &Value) -> Map<String, Value> {
    let mut out =
        pick(i, &[("number", "number"), ("title", "title"), ("state", "state"), ("url", "html_url")]);
    out.insert("author".into(), i.pointer("/user/login").cloned().unwrap_or(Value::Null));
    let labels: Vec<Value> = i
        .get("labels")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|l| l.get("name").cloned())
        .collect();
    out.insert("labels".into(), Value::Array(labels));
    out
}

fn body_field(i: &Value) -> Value {
    match i.get("body").and_then(Value::as_str) {
        Some(b) => Value::String(lf_core::clip(b, BODY_CHARS).into_owned()),
        None => Value::Null,
    }
}

fn issue_fields(i: &Value) -> Value {
    let mut out = common_fields(i);
    out.extend(pick(
        i,
        &[("comments", "comments"), ("created_at", "created_at"), ("updated_at", "updated_at")],
    ));
    out.insert("body".into(), body_field(i));
    Value::Object(out)
}

fn pull_fields(p: &Value) -> Value {
    let mut out = common_fields(p);
    out.extend(pick(
        p,
        &[
            ("draft", "draft"),
            ("merged_at", "merged_at"),
            ("created_at", "created_at"),
            ("updated_at", "updated_at"),
        ],
    ));
    out.insert("body".into(), body_field(p));
    Value::Object(out)
}

/// A README's or file's content: text, at most [`MAX_CONTENT_BYTES`].
fn content(answer: &EgressResponse, path: Option<&str>) -> Value {
    let body = &answer.body;
    let truncated = body.len() > MAX_CONTENT_BYTES;
    let mut text = String::from_utf8_lossy(&body[..body.len().min(MAX_CONTENT_BYTES)]).into_owned();
    if truncated && text.ends_with('\u{fffd}') {
        // A character cut in two at the limit.
        text.pop();
    }
    let mut out = json!({ "content": text, "size": body.len(), "truncated": truncated });
    if let Some(p) = path {
        out["path"] = Value::String(p.to_owned());
    }
    out
}
