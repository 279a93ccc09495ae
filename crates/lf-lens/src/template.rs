//! The token grammar of lens templates.
//!
//! - `[[Label]]` is a required parameter, `[[Label!]]` an optional one;
//!   `[[Label:type]]` and `[[Label:type!]]` carry a type hint (one of
//!   [`TypeHint`]; any other suffix after the last `:` is part of the label).
//! - Whitespace inside the brackets is trimmed. A label starts with a letter,
//!   a digit or `_`, holds no `[`, `]` or line break, and is at most
//!   [`MAX_LABEL_CHARS`] characters; anything else between brackets is text.
//! - Labels match case-insensitively; repeated tokens are one parameter, whose
//!   spelling, flags and position are those of its first occurrence.
//! - `\[[` is a literal `[[` (the backslash is dropped on resolution). An
//!   unterminated `[[` is text.
//!
//! Parsing is a single left-to-right pass: every byte is looked at a bounded
//! number of times, so time is linear in the body length, and no input panics.
//!
//! The grammar keeps an unterminated `[[` as text, so `review this [[Language
//! code` has no parameter at all, silently. [`Template::warnings`] (and
//! [`lint`]) name each such `[[` that a label follows, where it is and the
//! token it likely meant, so that the tools can tell the author.

use std::fmt;
use std::ops::Range;

/// The longest label a token may have, in characters.
pub const MAX_LABEL_CHARS: usize = 100;
/// Most [`Unterminated`] warnings a template reports: the first ones in the
/// body, enough to show the author the mistake without echoing a body made
/// of `[[`.
pub const MAX_WARNINGS: usize = 10;

/// A type hint of a typed token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeHint {
    Text,
    Textarea,
    Json,
    Number,
    Integer,
    Float,
    Decimal,
    Boolean,
    Select,
    Multiselect,
    Array,
    Url,
    Date,
    Datetime,
    File,
    Files,
    Connector,
}

impl TypeHint {
    pub const ALL: [TypeHint; 17] = [
        TypeHint::Text,
        TypeHint::Textarea,
        TypeHint::Json,
        TypeHint::Number,
        TypeHint::Integer,
        TypeHint::Float,
        TypeHint::Decimal,
        TypeHint::Boolean,
        TypeHint::Select,
        TypeHint::Multiselect,
        TypeHint::Array,
        TypeHint::Url,
        TypeHint::Date,
        TypeHint::Datetime,
        TypeHint::File,
        TypeHint::Files,
        TypeHint::Connector,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            TypeHint::Text => "text",
            TypeHint::Textarea => "textarea",
            TypeHint::Json => "json",
            TypeHint::Number => "number",
            TypeHint::Integer => "integer",
            TypeHint::Float => "float",
            TypeHint::Decimal => "decimal",
            TypeHint::Boolean => "boolean",
            TypeHint::Select => "select",
            TypeHint::Multiselect => "multiselect",
            TypeHint::Array => "array",
            TypeHint::Url => "url",
            TypeHint::Date => "date",
            TypeHint::Datetime => "datetime",
            TypeHint::File => "file",
            TypeHint::Files => "files",
            TypeHint::Connector => "connector",
        }
    }

    /// Case-insensitive, surrounding whitespace ignored.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        Self::ALL.into_iter().find(|t| t.as_str().eq_ignore_ascii_case(s))
    }
}

impl fmt::Display for TypeHint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The key labels are matched by: the label lowercased.
pub fn label_key(label: &str) -> String {
    label.to_lowercase()
}

/// One token occurrence in a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token<'a> {
    /// The token as written, brackets included.
    pub raw: &'a str,
    /// The label, trimmed, as spelled here.
    pub label: &'a str,
    pub optional: bool,
    pub type_hint: Option<TypeHint>,
    /// Byte range of `raw` in the body.
    pub span: (usize, usize),
    /// Index into [`Template::params`].
    pub param: usize,
}

/// A parameter as the body declares it (first occurrence wins).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamDecl {
    pub label: String,
    pub key: String,
    pub optional: bool,
    pub type_hint: Option<TypeHint>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    Text(Range<usize>),
    Token(usize),
}

/// A parsed template: the body split into literal text and tokens.
#[derive(Clone, Debug)]
pub struct Template<'a> {
    body: &'a str,
    segments: Vec<Segment>,
    tokens: Vec<Token<'a>>,
    params: Vec<ParamDecl>,
    /// Byte offsets of the first [`MAX_WARNINGS`] unterminated openings
    /// that a label follows.
    unterminated: Vec<usize>,
}

/// A `[[` that opens no token although a label follows it on its line
/// (`review this [[Language code carefully`): text by the grammar, most
/// likely a parameter whose `]]` was forgotten.
///
/// Only a `[[` not closed before the end of its line (or before the next
/// `[`) is one: a `[[` closed by a single `]` is how nested lists are
/// written (`[[1, 2], [3, 4]]`), and one closed by `]]` around something
/// that is not a label (`[[-x]]`) was closed on purpose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unterminated {
    /// Where the `[[` starts, in characters from the start of the body (0 first).
    pub offset: usize,
    /// Its line, 1 first.
    pub line: usize,
    /// Its column in that line, in characters, 1 first.
    pub column: usize,
    /// The token it likely meant, as written: `[[` and the word after it
    /// (`[[Language`).
    pub token: String,
}

impl Unterminated {
    /// The stable code of this warning, for clients to match on.
    pub const CODE: &'static str = "UNTERMINATED_TOKEN";

    /// What is wrong and what to write instead.
    pub fn message(&self) -> String {
        format!(
            "{} at line {}, column {} is not closed, so it is text and not a parameter: close it as {}]] to make a parameter, or write \\[[ for a literal [[.",
            self.token, self.line, self.column, self.token
        )
    }
}

/// The [`Unterminated`] warnings of `body` (see [`Template::warnings`]).
pub fn lint(body: &str) -> Vec<Unterminated> {
    Template::parse(body).warnings()
}

/// Whether the text after an unclosed `[[` (up to where its scan stopped)
/// begins with what would start a label.
fn label_follows(inside: &str) -> bool {
    inside.trim_start().chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Parses the inside of `[[ ... ]]` (without brackets) into a token's label,
/// optional flag and type hint, or `None` if it is not a token.
fn parse_inner(inner: &str) -> Option<(&str, bool, Option<TypeHint>)> {
    let mut s = inner.trim();
    let mut optional = false;
    if let Some(rest) = s.strip_suffix('!') {
        optional = true;
        s = rest.trim_end();
    }
    let mut type_hint = None;
    if let Some(colon) = s.rfind(':')
        && let Some(t) = TypeHint::parse(&s[colon + 1..])
    {
        type_hint = Some(t);
        s = s[..colon].trim_end();
    }
    let first = s.chars().next()?;
    if !(first.is_alphanumeric() || first == '_') {
        return None;
    }
    if s.chars().nth(MAX_LABEL_CHARS).is_some() {
        return None;
    }
    Some((s, optional, type_hint))
}

impl<'a> Template<'a> {
    /// Parses `body`. Never fails: what is not a token is text.
    pub fn parse(body: &'a str) -> Self {
        let bytes = body.as_bytes();
        let mut segments = Vec::new();
        let mut tokens: Vec<Token<'a>> = Vec::new();
        let mut params: Vec<ParamDecl> = Vec::new();
        // Key to index into `params`: one lookup per token, whatever the
        // number of distinct parameters, so parsing stays linear.
        let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        let mut unterminated = Vec::new();
        let mut text_start = 0;
        let mut i = 0;
        while let Some(off) = memchr::memchr(b'[', &bytes[i..]) {
            let at = i + off;
            if bytes.get(at + 1) != Some(&b'[') {
                i = at + 1;
                continue;
            }
            // `\[[` is a literal `[[`: keep the text before the backslash, skip
            // the backslash, and emit the brackets as text.
            if at > 0 && bytes[at - 1] == b'\\' {
                if text_start < at - 1 {
                    segments.push(Segment::Text(text_start..at - 1));
                }
                text_start = at;
                i = at + 2;
                continue;
            }
            // Scan the inside up to the first `[`, `]` or line break.
            let inner_start = at + 2;
            let mut j = inner_start;
            while j < bytes.len() && !matches!(bytes[j], b'[' | b']' | b'\n' | b'\r') {
                j += 1;
            }
            let closed = bytes.get(j) == Some(&b']') && bytes.get(j + 1) == Some(&b']');
            if !closed {
                // Not a token here. A `[` right after the opening pair may
                // start one (`[[[x]]`); otherwise nothing between can.
                if j > inner_start
                    && bytes.get(j) != Some(&b']')
                    && unterminated.len() < MAX_WARNINGS
                    && label_follows(&body[inner_start..j])
                {
                    unterminated.push(at);
                }
                i = if j == inner_start { at + 1 } else { j };
                continue;
            }
            let end = j + 2;
            let Some((label, optional, type_hint)) = parse_inner(&body[inner_start..j]) else {
                i = end;
                continue;
            };
            let key = label_key(label);
            let param = match index.get(&key) {
                Some(&p) => p,
                None => {
                    index.insert(key.clone(), params.len());
                    params.push(ParamDecl { label: label.to_owned(), key, optional, type_hint });
                    params.len() - 1
                }
            };
            if text_start < at {
                segments.push(Segment::Text(text_start..at));
            }
            segments.push(Segment::Token(tokens.len()));
            tokens.push(Token { raw: &body[at..end], label, optional, type_hint, span: (at, end), param });
            text_start = end;
            i = end;
        }
        if text_start < bytes.len() {
            segments.push(Segment::Text(text_start..bytes.len()));
        }
        Template { body, segments, tokens, params, unterminated }
    }

    pub fn body(&self) -> &'a str {
        self.body
    }

    /// Every token occurrence, in body order.
    pub fn tokens(&self) -> &[Token<'a>] {
        &self.tokens
    }

    /// The distinct parameters, in order of first appearance.
    pub fn params(&self) -> &[ParamDecl] {
        &self.params
    }

    /// The distinct tokens as first written, brackets included, in order.
    pub fn raw_tokens(&self) -> Vec<&'a str> {
        let mut seen = vec![false; self.params.len()];
        let mut out = Vec::with_capacity(self.params.len());
        for t in &self.tokens {
            if !std::mem::replace(&mut seen[t.param], true) {
                out.push(t.raw);
            }
        }
        out
    }

    /// The first [`MAX_WARNINGS`] unterminated `[[` a label follows, in body
    /// order. Linear in the body up to the last of them.
    pub fn warnings(&self) -> Vec<Unterminated> {
        let mut out = Vec::with_capacity(self.unterminated.len());
        // One walk over the body: characters, lines and columns up to each
        // opening in turn.
        let (mut at, mut offset, mut line, mut column) = (0, 0, 1, 1);
        for &open in &self.unterminated {
            for c in self.body[at..open].chars() {
                offset += 1;
                if c == '\n' {
                    line += 1;
                    column = 1;
                } else {
                    column += 1;
                }
            }
            at = open;
            let word = self.body[open + 2..].trim_start();
            let end = word
                .char_indices()
                .take(MAX_LABEL_CHARS + 1)
                .find(|(_, c)| c.is_whitespace() || matches!(c, '[' | ']'))
                .map_or_else(|| word.chars().take(MAX_LABEL_CHARS).map(char::len_utf8).sum(), |(i, _)| i);
            out.push(Unterminated { offset, line, column, token: format!("[[{}", &word[..end]) });
        }
        out
    }

    /// Replaces every token with the value of its parameter: `values[i]` is
    /// the value of `params()[i]`. Escaped brackets come out as `[[`.
    ///
    /// # Panics
    /// Never: a missing entry in `values` resolves to the empty string.
    pub fn resolve<S: AsRef<str>>(&self, values: &[S]) -> String {
        let mut cap = 0;
        for seg in &self.segments {
            cap += match seg {
                Segment::Text(r) => r.len(),
                Segment::Token(t) => values.get(self.tokens[*t].param).map_or(0, |v| v.as_ref().len()),
            };
        }
        let mut out = String::with_capacity(cap);
        for seg in &self.segments {
            match seg {
                Segment::Text(r) => out.push_str(&self.body[r.clone()]),
                Segment::Token(t) => {
                    if let Some(v) = values.get(self.tokens[*t].param) {
                        out.push_str(v.as_ref());
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(body: &str) -> Vec<(String, bool, Option<TypeHint>)> {
        Template::parse(body).params().iter().map(|p| (p.label.clone(), p.optional, p.type_hint)).collect()
    }

    #[test]
    fn spec_example() {
        let body = "You are a senior [[Language]] engineer. Review the following code.\n\nCode:\n[[Code]]\n\nFocus area: [[FocusArea!]]";
        assert_eq!(
            labels(body),
            vec![
                ("Language".into(), false, None),
                ("Code".into(), false, None),
                ("FocusArea".into(), true, None)
            ]
        );
    }

    // The original's token-grammar vectors, with DESIGN.md's trimming rule.
    #[test]
    fn original_token_vectors() {
        assert_eq!(labels("[[Topic]]"), vec![("Topic".into(), false, None)]);
        assert_eq!(labels("[[Tone!]]"), vec![("Tone".into(), true, None)]);
        assert_eq!(labels("[[Input PDF:file]]"), vec![("Input PDF".into(), false, Some(TypeHint::File))]);
        assert_eq!(labels("[[Notes:textarea!]]"), vec![("Notes".into(), true, Some(TypeHint::Textarea))]);
        assert_eq!(labels("[[ratio:16]]"), vec![("ratio:16".into(), false, None)]);
        assert_eq!(labels("[[:11111111-2222-3333-4444-555555555555]]"), vec![]);
        assert_eq!(
            labels("[[Topic]] [[:11111111-2222-3333-4444-555555555555]] [[Attachment:file]]"),
            vec![("Topic".into(), false, None), ("Attachment".into(), false, Some(TypeHint::File))]
        );
        assert_eq!(label_key("Visual Tone"), "visual tone");
        assert_eq!(label_key("color-palette"), "color-palette");
    }

    #[test]
    fn duplicates_and_case_first_spelling_wins() {
        let t = Template::parse("Hello [[Name]] and [[name]] in [[Lang!]] [[ NAME ! ]]");
        assert_eq!(t.params().len(), 2);
        assert_eq!(t.params()[0].label, "Name");
        assert!(!t.params()[0].optional);
        assert_eq!(t.raw_tokens(), vec!["[[Name]]", "[[Lang!]]"]);
        assert_eq!(t.tokens().len(), 4);
        assert_eq!(t.resolve(&["Sky", "EN"]), "Hello Sky and Sky in EN Sky");
    }

    #[test]
    fn whitespace_trimmed_and_type_case_insensitive() {
        assert_eq!(labels("[[  Topic  ]]"), vec![("Topic".into(), false, None)]);
        assert_eq!(
            labels("[[Context : TextArea ! ]]"),
            vec![("Context".into(), true, Some(TypeHint::Textarea))]
        );
        assert_eq!(labels("[[a!b]]"), vec![("a!b".into(), false, None)]);
    }

    #[test]
    fn not_tokens() {
        for body in [
            "[[]]",
            "[[   ]]",
            "[[!]]",
            "[[-x]]",
            "[[ :text]]",
            "[[a\nb]]",
            "[[a]b]]",
            "[[unterminated",
            "[[a]",
            "[ [a]]",
            "\\[[Escaped]]",
        ] {
            assert_eq!(labels(body), vec![], "{body:?}");
        }
        let long = format!("[[{}]]", "a".repeat(MAX_LABEL_CHARS + 1));
        assert_eq!(labels(&long), vec![]);
        let ok = format!("[[{}]]", "a".repeat(MAX_LABEL_CHARS));
        assert_eq!(labels(&ok).len(), 1);
    }

    #[test]
    fn nested_brackets_find_the_inner_token() {
        assert_eq!(labels("[[[x]]]"), vec![("x".into(), false, None)]);
        assert_eq!(Template::parse("[[[x]]]").resolve(&["1"]), "[1]");
        assert_eq!(labels("[[a [[b]]"), vec![("b".into(), false, None)]);
    }

    #[test]
    fn escape_is_literal_and_dropped_on_resolve() {
        let t = Template::parse(r"Write \[[Name]] literally, then [[Name]].");
        assert_eq!(t.params().len(), 1);
        assert_eq!(t.resolve(&["Ada"]), "Write [[Name]] literally, then Ada.");
    }

    #[test]
    fn text_without_tokens_round_trips() {
        let body = "plain [ text ] with [[-x]] stray ] brackets [ and [[unterminated";
        let t = Template::parse(body);
        assert!(t.params().is_empty());
        assert_eq!(t.resolve::<&str>(&[]), body);
    }

    #[test]
    fn multibyte_labels() {
        let t = Template::parse("Écris sur [[Thème]] et [[thème]] en [[Язык!]]");
        assert_eq!(t.params().len(), 2);
        assert_eq!(t.resolve(&["la mer", "français"]), "Écris sur la mer et la mer en français");
    }

    fn warned(body: &str) -> Vec<(usize, usize, usize, String)> {
        lint(body).into_iter().map(|w| (w.offset, w.line, w.column, w.token)).collect()
    }

    #[test]
    fn an_unterminated_token_is_named_where_it_is() {
        let body = "Please review this [[Language code carefully.\nThen [[Code]] and [[Tone";
        assert_eq!(labels(body), vec![("Code".into(), false, None)], "still text by the grammar");
        assert_eq!(warned(body), vec![(19, 1, 20, "[[Language".into()), (64, 2, 19, "[[Tone".into())]);
        let w = &lint(body)[0];
        assert_eq!(
            w.message(),
            r"[[Language at line 1, column 20 is not closed, so it is text and not a parameter: close it as [[Language]] to make a parameter, or write \[[ for a literal [[."
        );
    }

    #[test]
    fn offsets_and_columns_count_characters() {
        assert_eq!(warned("Écris «[[Thème"), vec![(7, 1, 8, "[[Thème".into())]);
        assert_eq!(warned("a\r\nb [[ x y"), vec![(5, 2, 3, "[[x".into())]);
    }

    #[test]
    fn what_is_not_warned_about() {
        for body in [
            "[[Closed]] and [[Optional!]]",
            "[[1, 2], [3, 4]]",
            "[[a]",
            "[[-x]] [[!]] [[ :text]]",
            "[[",
            "[[   \nnext line",
            "[[-dash first",
            r"\[[Escaped and literal",
            "[[[x]]]",
            "[[\n  1, 2\n]]",
        ] {
            assert_eq!(warned(body), vec![], "{body:?}");
        }
    }

    #[test]
    fn an_opening_cut_short_by_another_is_warned_about() {
        assert_eq!(warned("[[a [[b]]"), vec![(0, 1, 1, "[[a".into())]);
        assert_eq!(warned("x [[Name\n"), vec![(2, 1, 3, "[[Name".into())]);
    }

    #[test]
    fn warnings_are_bounded() {
        let body = "[[a ".repeat(1_000);
        let w = lint(&body);
        assert_eq!(w.len(), MAX_WARNINGS);
        assert_eq!(w[MAX_WARNINGS - 1].offset, 4 * (MAX_WARNINGS - 1));
        let long = format!("[[{}", "é".repeat(MAX_LABEL_CHARS * 2));
        assert_eq!(lint(&long)[0].token.chars().count(), 2 + MAX_LABEL_CHARS);
    }
}
