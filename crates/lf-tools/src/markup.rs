//! Markup that escapes by default, for HTML and SVG: [`Html`] holds markup
//! this program wrote; anything else enters through [`Html::text`] (or
//! `push_text`), which escapes it, so an answer's `<script>` is shown as
//! text. lf-pages writes its pages with it, and the chart resources
//! (`mcp/charts.rs`) their SVG.

use std::fmt::Write as _;

/// A piece of markup.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Html(String);

impl Html {
    /// Markup written by this program, trusted as is. Never give it outside text.
    pub fn raw(markup: &str) -> Html {
        Html(markup.to_owned())
    }

    /// `text`, escaped.
    pub fn text(text: &str) -> Html {
        let mut out = Html::default();
        out.push_text(text);
        out
    }

    /// Appends markup written here.
    pub fn push_raw(&mut self, markup: &str) -> &mut Self {
        self.0.push_str(markup);
        self
    }

    /// Appends `text`, escaped (element content and quoted attribute values).
    pub fn push_text(&mut self, text: &str) -> &mut Self {
        for c in text.chars() {
            match c {
                '&' => self.0.push_str("&amp;"),
                '<' => self.0.push_str("&lt;"),
                '>' => self.0.push_str("&gt;"),
                '"' => self.0.push_str("&quot;"),
                '\'' => self.0.push_str("&#39;"),
                c => self.0.push(c),
            }
        }
        self
    }

    /// Appends other markup.
    pub fn push(&mut self, other: &Html) -> &mut Self {
        self.0.push_str(&other.0);
        self
    }

    /// Appends a number or another value whose `Display` is markup-safe.
    pub fn push_display(&mut self, value: impl std::fmt::Display) -> &mut Self {
        let _ = write!(self.0, "{value}");
        self
    }

    /// The markup.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}
