//! The server's icon (SEP-973): a small SVG embedded in the binary, handed
//! out in the server's implementation info as a `data:` URI, so that it
//! needs no HTTP route and works over stdio too. Only the server carries
//! one: an icon per tool would be repeated in every `tools/list`.

use rmcp::model::Icon;

/// The icon, as served: an SVG of a lens.
pub const ICON_SVG: &str = include_str!("icon.svg");

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
}
