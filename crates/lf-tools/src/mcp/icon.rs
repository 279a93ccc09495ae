//! Icons (SEP-973), all embedded in the binary.
//!
//! - The server's: a small SVG handed out in the server's implementation
//!   info as a `data:` URI, so that it needs no HTTP route and works over
//!   stdio too.
//! - Each toolset's: an SVG of its own ([`toolset_svg`]), which lf-mcp-http
//!   serves at `GET /icons/{group}.svg`, named by a URL under the server's
//!   public URL ([`CatalogOptions::icon_base`]). `list_toolsets` names each
//!   toolset's, and `tools/list` gives the tools of the opt-in groups their
//!   group's: on every tool of the default listing the URLs would cost some
//!   4,000 bytes of a budget with 57 left (docs/performance.md, "The
//!   catalog listing"). Over stdio there is no URL to name: only the
//!   server's own icon is given.
//!
//! [`CatalogOptions::icon_base`]: crate::CatalogOptions::icon_base

use rmcp::model::Icon;

use crate::catalog::group::Group;

/// The icon, as served: an SVG of a lens.
pub const ICON_SVG: &str = include_str!("icon.svg");

/// Each toolset's icon, by its group's id.
const TOOLSET_SVGS: &[(&str, &str)] = &[
    ("lens", include_str!("icons/lens.svg")),
    ("battle", include_str!("icons/battle.svg")),
    ("search", include_str!("icons/search.svg")),
    ("workflow", include_str!("icons/workflow.svg")),
    ("agent", include_str!("icons/agent.svg")),
    ("model", include_str!("icons/model.svg")),
    ("eval", include_str!("icons/eval.svg")),
    ("connections", include_str!("icons/connections.svg")),
];

/// The SVG of the toolset `id` (a group's id): its own, or the server's for
/// a group that has none yet; `None` for what names no group.
pub fn toolset_svg(id: &str) -> Option<&'static str> {
    let own = TOOLSET_SVGS.iter().find(|(g, _)| *g == id).map(|(_, svg)| *svg);
    own.or_else(|| Group::all().iter().any(|g| g.id == id).then_some(ICON_SVG))
}

/// Where `group`'s icon is served under `base` (the server's public URL).
pub fn toolset_icon_url(base: &str, group: &Group) -> String {
    format!("{}/icons/{}.svg", base.trim_end_matches('/'), group.id)
}

/// `group`'s icons as a tool or toolset carries them: the URL alone (the
/// route answers `image/svg+xml`; a MIME type or size would add 40 bytes
/// to each listed tool).
pub(crate) fn toolset_icons(base: &str, group: &Group) -> Vec<Icon> {
    vec![Icon::new(toolset_icon_url(base, group))]
}

/// `svg` as a `data:image/svg+xml,` URI, percent-encoding everything but
/// the characters a URI carries as they are.
pub fn svg_data_uri(svg: &str) -> String {
    let mut out = String::from("data:image/svg+xml,");
    for b in svg.trim_end().bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$'()*+,;=:@/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The icons of the server's implementation info.
pub fn server_icons() -> Vec<Icon> {
    vec![Icon::new(svg_data_uri(ICON_SVG)).with_mime_type("image/svg+xml").with_sizes(vec!["any".into()])]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(uri: &str) -> String {
        let body = uri.strip_prefix("data:image/svg+xml,").unwrap().as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < body.len() {
            if body[i] == b'%' {
                out.push(u8::from_str_radix(std::str::from_utf8(&body[i + 1..i + 3]).unwrap(), 16).unwrap());
                i += 3;
            } else {
                out.push(body[i]);
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_icon_is_a_small_svg_as_a_data_uri() {
        let icons = server_icons();
        let uri = &icons[0].src;
        assert_eq!(decode(uri), ICON_SVG.trim_end(), "the URI decodes to the embedded SVG");
        assert!(uri.bytes().all(|b| b.is_ascii_graphic()), "no space, quote or non-ASCII is left as is");
        assert!(!uri.contains(['"', '<', '>', '#']));
        assert!(ICON_SVG.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(uri.len() < 512, "{} bytes", uri.len());
        assert_eq!(icons[0].mime_type.as_deref(), Some("image/svg+xml"));
    }

    #[test]
    fn every_group_has_an_svg_of_its_own_and_nothing_else_has_one() {
        for g in Group::all() {
            let svg = toolset_svg(g.id).unwrap();
            assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{}", g.id);
            assert!(svg.len() < 1024, "{}: {} bytes", g.id, svg.len());
            assert!(!svg.contains("<script") && !svg.contains("href"), "{}: nothing active or linked", g.id);
            assert_ne!(svg, ICON_SVG, "{} has an icon of its own", g.id);
        }
        for (id, _) in TOOLSET_SVGS {
            assert!(Group::parse(id).is_ok(), "{id} names a group");
        }
        assert_eq!(toolset_svg("../icon"), None);
        assert_eq!(toolset_svg("LENS"), None, "ids are as listed");
        let lens = Group::parse("lens").unwrap();
        assert_eq!(
            toolset_icon_url("https://mcp.example.com/", lens),
            "https://mcp.example.com/icons/lens.svg"
        );
    }
}
