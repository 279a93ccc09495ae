//! `GET /icons/{group}.svg`: each toolset's icon (SEP-973), embedded in the
//! binary (lf-tools' `toolset_svg`). The URLs `tools/list` and
//! `list_toolsets` name point here, under the public URL. No token is
//! asked: an icon tells nothing and a client fetches it as an image.

use axum::extract::Path;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, HeaderName, HeaderValue, X_CONTENT_TYPE_OPTIONS,
};

use crate::responses::json_error;

/// An icon changes only with a release: a day's caching.
const CACHED: &str = "public, max-age=86400";
/// An SVG opened by itself runs nothing and loads nothing.
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

/// The icon `file` names (`{group}.svg`), or 404.
pub async fn icon(Path(file): Path<String>) -> Response {
    let Some(svg) = file.strip_suffix(".svg").and_then(lf_tools::toolset_svg) else {
        return json_error(
            StatusCode::NOT_FOUND,
            "not_found",
            "no such icon; toolsets' icons are /icons/{toolset}.svg",
        );
    };
    let mut response = svg.into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("image/svg+xml"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(CACHED));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY));
    // Clients in a browser show it from their own origin.
    headers.insert(
        HeaderName::from_static("cross-origin-resource-policy"),
        HeaderValue::from_static("cross-origin"),
    );
    response
}
