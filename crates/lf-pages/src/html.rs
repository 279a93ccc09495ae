//! Every page goes out through [`page`], with the security headers. Its
//! markup is an [`Html`] (lf-tools' [`lf_tools::markup`], which the MCP
//! resources' SVG charts share): this crate's own markup, and anything
//! else escaped, so an answer's `<script>` is shown as text.

use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode, header};
pub use lf_tools::markup::Html;

/// The policy of every page: nothing inline, nothing from elsewhere; forms
/// post only here; never framed.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The headers of every answer of the pages.
pub fn secure(headers: &mut HeaderMap) {
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // Not `no-referrer`: with it browsers send `Origin: null` on a form's
    // POST, which the host's origin check refuses.
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

/// Who is signed in, for the header: their handle and the sign-out form's
/// CSRF token.
pub struct Header<'a> {
    pub handle: &'a str,
    pub csrf: &'a str,
}

/// A whole page.
pub fn page(status: StatusCode, title: &str, who: Option<&Header<'_>>, body: &Html) -> Response {
    let mut h = Html::raw(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<link rel=\"stylesheet\" href=\"/pages/style.css\"><script src=\"/pages/keys.js\" defer></script><title>",
    );
    h.push_text(title).push_raw(" · LenserFight</title></head><body><header><nav>");
    h.push_raw("<a href=\"/arena\">Arena</a> <a href=\"/leaderboard\">Leaderboard</a>");
    match who {
        Some(who) => {
            h.push_raw("<form class=\"out\" method=\"post\" action=\"/sign-out\"><span>");
            h.push_text(who.handle);
            h.push_raw("</span> <input type=\"hidden\" name=\"csrf\" value=\"");
            h.push_text(who.csrf);
            h.push_raw("\"><button type=\"submit\">Sign out</button></form>");
        }
        None => {
            h.push_raw(" <a href=\"/sign-in\">Sign in</a>");
        }
    }
    h.push_raw("</nav></header><main>").push(body).push_raw("</main></body></html>");
    let mut response =
        (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], h.into_string()).into_response();
    secure(response.headers_mut());
    response
}

/// 404 for what does not exist or the person may not read: the same answer
/// for both.
pub fn not_found(who: Option<&Header<'_>>) -> Response {
    page(
        StatusCode::NOT_FOUND,
        "Not found",
        who,
        &Html::raw("<h1>Not found</h1><p>There is nothing here, or nothing you can see.</p>"),
    )
}

/// A page saying what went wrong.
pub fn problem(status: StatusCode, who: Option<&Header<'_>>, message: &str) -> Response {
    let mut body = Html::raw("<h1>That did not work</h1><p class=\"error\" role=\"alert\">");
    body.push_text(message).push_raw("</p>");
    page(status, "Problem", who, &body)
}

/// 303 to `to` (a path of this site).
pub fn see_other(to: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    secure(response.headers_mut());
    response
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:68rem;margin:0 auto;padding:0 1rem;color:#1d1d1f}\
header nav{display:flex;gap:1rem;align-items:center;padding:.8rem 0;border-bottom:1px solid #ddd}\
header form.out{margin-left:auto}h1{font-size:1.4rem}.error{color:#b00020}\
.prompt{white-space:pre-wrap;background:#f5f5f7;padding:.8rem;border-radius:.4rem}\
.answers{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:1rem}\
.answer{border:1px solid #ccc;border-radius:.4rem;padding:.8rem}.answer h2{font-size:1.1rem;margin:0 0 .5rem}\
.answer pre{white-space:pre-wrap;word-break:break-word;font-family:inherit;margin:0}\
.author{color:#0a5;font-weight:600}.mine{outline:3px solid #0a5}\
.vote button{font-size:1rem;padding:.5rem 1rem;margin:.3rem .5rem .3rem 0}kbd{border:1px solid #999;border-radius:3px;padding:0 .3rem}\
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #eee}\
td.n{text-align:right}svg.iv line{stroke:#555;stroke-width:2}svg.iv circle{fill:#06c}\
label{display:block;margin:.8rem 0}input[type=text],input[type=password]{width:100%;max-width:24rem;padding:.5rem;font-size:1rem}\
.meta{color:#555}.idx{color:#777;font-size:.85em}table.matrix{width:auto}table.matrix td.cell{text-align:center;padding:0}\
td.cell a{display:block;padding:.3rem .5rem;color:#111;text-decoration:none}td.pending{color:#999;background:#f5f5f7}\
.h0{background:#e8867f}.h1{background:#ec9a7e}.h2{background:#efae7f}.h3{background:#f1c183}.h4{background:#f2d48a}\
.h5{background:#efe394}.h6{background:#dbe496}.h7{background:#c3df96}.h8{background:#a9d796}.h9{background:#8fcf95}\
.h10{background:#74c693}td.error a{font-style:italic}tr.fail td:nth-child(3){color:#b00020}\
section.result{border:1px solid #ccc;border-radius:.4rem;padding:.2rem .8rem;margin:1rem 0}.verdict{text-transform:uppercase}\
section.passed .verdict{color:#0a5}section.failed .verdict,section.error .verdict{color:#b00020}\
div.graph{overflow-x:auto}svg.graph rect{fill:#eee;stroke:#888;stroke-width:1.5}svg.graph text{font-size:13px;fill:#111}\
svg.graph text.status{font-size:11px;fill:#333}svg.graph path.edge{fill:none;stroke:#888;stroke-width:1.5}\
svg.graph marker path{fill:#888}g.st-completed rect{fill:#c9ecd4;stroke:#2e8b57}g.st-failed rect{fill:#f6c9c9;stroke:#b00020}\
g.st-running rect,g.st-retrying rect{fill:#cfe2fb;stroke:#06c}g.st-skipped rect{fill:#f5f5f7;stroke:#bbb}\
g.st-cancelled rect{fill:#eee;stroke:#777;stroke-dasharray:4 3}table.log pre{white-space:pre-wrap;max-width:40rem}\
table.log td{vertical-align:top}table.figures small,table.log td:nth-child(4){white-space:nowrap}.logline{overflow-wrap:anywhere}.logline .level{font-weight:600;text-transform:uppercase;font-size:.8em}\
td.sig{white-space:nowrap;color:#777}td.sig.yes{color:#111;font-weight:600}section.regressions h3{color:#b00020}\
section.fixes h3{color:#0a5}section.changes ul{columns:16rem;padding-left:1.2rem}section.compare form{margin:1rem 0}\
section.compare label{display:inline;margin:0}section.compare input[type=text]{max-width:22rem;padding:.3rem}";

/// A key votes: `a`, `b`, … for the answer in that position, `t` for a
/// tie. The buttons work without it.
const SCRIPT: &str = "document.addEventListener('keydown',function(e){\
if(e.ctrlKey||e.metaKey||e.altKey||e.repeat)return;\
var t=e.target;if(t&&(t.tagName==='INPUT'||t.tagName==='TEXTAREA'))return;\
var b=document.querySelector('form.vote button[data-key=\"'+e.key.toLowerCase()+'\"]');\
if(b){e.preventDefault();b.click();}});";

fn asset(kind: &'static str, body: &'static str) -> Response {
    let mut response = ([(header::CONTENT_TYPE, kind)], body).into_response();
    secure(response.headers_mut());
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300"));
    response
}

/// `GET /pages/style.css`.
pub async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE)
}

/// `GET /pages/keys.js`.
pub async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        let h = Html::text("<script>alert('x')</script> & \"q\"");
        assert_eq!(h.as_str(), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
    }

    #[test]
    fn every_page_has_the_policy() {
        let r = page(StatusCode::OK, "t", None, &Html::raw("<p>x</p>"));
        let csp = r.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"), "{csp}");
        assert_eq!(r.headers()[header::X_FRAME_OPTIONS], "DENY");
    }
}
