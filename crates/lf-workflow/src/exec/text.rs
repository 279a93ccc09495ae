//! text_splitter: overlapping chunks of a text, cut at whitespace where it
//! can. Linear in what it outputs, which is capped.

use std::ops::Range;

use serde_json::{Value, json};

use super::{Config, NodeError, Within, not_a, select};

/// Most chunks one text is cut into.
pub const MAX_CHUNKS: usize = 10_000;
/// Most bytes all the chunks of one text may hold together (overlaps make
/// the chunks longer than the text).
pub const MAX_CHUNK_BYTES: usize = 16 << 20;

/// `{chunks, count}`: the text at `input_path` in chunks of at most
/// `chunk_size` characters, in order, covering it. A chunk ends just after
/// the last whitespace that leaves it longer than `chunk_overlap`
/// characters (after `chunk_size` characters where there is none). The
/// next one starts `chunk_overlap` characters before that end, moved on to
/// the next word when that falls inside one, so neighbours share at most
/// `chunk_overlap` characters and a shared part starts at a word. An empty
/// text has no chunks.
pub(super) fn text_splitter(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let pick = c.pick("input_path")?;
    let v = select("input_path", &pick, input)?;
    let text = v.as_str().ok_or_else(|| not_a("input_path", &pick, &v, "a text", Within::Input))?;
    let size = usize::try_from(c.uint("chunk_size")?).unwrap_or(usize::MAX);
    let overlap = usize::try_from(c.uint("chunk_overlap")?).unwrap_or(usize::MAX);
    if overlap >= size {
        return Err(NodeError::config(format!(
            "chunk_overlap ({overlap}) must be smaller than chunk_size ({size})"
        )));
    }
    let chunks: Vec<&str> = split(text, size, overlap)?.into_iter().map(|r| &text[r]).collect();
    let count = chunks.len();
    Ok(json!({"chunks": chunks, "count": count}))
}

/// The byte offset `k` characters after `from` (the end if there are fewer).
fn forward(text: &str, from: usize, k: usize) -> usize {
    text[from..].char_indices().nth(k).map_or(text.len(), |(i, _)| from + i)
}

/// The byte offset `k` characters before `from` (the start if there are fewer).
fn backward(text: &str, from: usize, k: usize) -> usize {
    match k {
        0 => from,
        _ => text[..from].char_indices().rev().nth(k - 1).map_or(0, |(i, _)| i),
    }
}

/// The chunks' byte ranges. A chunk costs at most `size` characters of
/// reading, and one cut short at whitespace holds, with the chunk after
/// it, at least `size` characters (nothing after its cut was whitespace),
/// so the work is linear in the output, which [`MAX_CHUNKS`] and
/// [`MAX_CHUNK_BYTES`] cap.
fn split(text: &str, size: usize, overlap: usize) -> Result<Vec<Range<usize>>, NodeError> {
    let mut chunks = Vec::new();
    let mut bytes = 0usize;
    let mut start = 0;
    while start < text.len() {
        let mut end = forward(text, start, size);
        if end < text.len() {
            // From the (overlap + 1)th character on: a chunk must be longer
            // than the overlap for the next one to start after it.
            let lo = forward(text, start, overlap);
            if let Some((i, ch)) = text[lo..end].char_indices().rev().find(|(_, c)| c.is_whitespace()) {
                end = lo + i + ch.len_utf8();
            }
        }
        bytes += end - start;
        if chunks.len() == MAX_CHUNKS || bytes > MAX_CHUNK_BYTES {
            return Err(NodeError::too_large(format!(
                "text_splitter would cut this text into more than {MAX_CHUNKS} chunks or {} MiB of them: raise chunk_size or lower chunk_overlap",
                MAX_CHUNK_BYTES >> 20
            )));
        }
        chunks.push(start..end);
        if end == text.len() {
            break;
        }
        let back = backward(text, end, overlap);
        let at_word = text[..back].chars().next_back().is_none_or(char::is_whitespace);
        start = match text[back..end].char_indices().find(|(_, c)| c.is_whitespace()) {
            Some((i, ch)) if !at_word => back + i + ch.len_utf8(),
            _ => back,
        };
    }
    Ok(chunks)
}

/// Most places `output_parser` tries a JSON value from: each try reads at
/// most the rest of the text, so the work is bounded by this times its
/// length.
pub const MAX_PARSE_STARTS: usize = 64;

/// The first JSON value that starts at one of `starts` (`{` for an object,
/// `[` for an array) in `text`, trying at most [`MAX_PARSE_STARTS`] of
/// them: how a model's structured answer is read out of its prose.
pub fn first_json(text: &str, starts: &[char]) -> Option<Value> {
    text.match_indices(starts).take(MAX_PARSE_STARTS).find_map(|(i, _)| {
        let mut values = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        values.next().and_then(Result::ok).filter(|v| v.is_object() || v.is_array())
    })
}

/// The first JSON object or array in the text at `input_path` (a model
/// often wraps it in prose or a code fence); with `strict`, text holding
/// none fails the step, else the output is null.
pub(super) fn output_parser(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let pick = c.pick("input_path")?;
    let text = match select("input_path", &pick, input)?.into_owned() {
        Value::String(s) => s,
        other => return Err(not_a("input_path", &pick, &other, "a text", Within::Input)),
    };
    match first_json(&text, &['{', '[']) {
        Some(v) => Ok(v),
        None if c.flag("strict")? => Err(NodeError::input(format!(
            "the text holds no JSON object or array (looked from its first {MAX_PARSE_STARTS} brackets): {}",
            lf_core::clip(&text, 80)
        ))),
        None => Ok(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::super::NodeErrorCode::{InputInvalid, TooLarge};
    use super::super::tests::{fails, run};
    use super::*;

    fn chunks(text: &str, size: usize, overlap: usize) -> Vec<&str> {
        split(text, size, overlap).unwrap().into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn cuts_after_whitespace_and_overlaps_from_a_word() {
        let text = "one two three four five six seven";
        assert_eq!(chunks(text, 10, 0), ["one two ", "three ", "four five ", "six seven"]);
        assert_eq!(chunks(text, 12, 4), ["one two ", "two three ", "four five ", "six seven"]);
        assert_eq!(
            chunks("abcdefghij", 4, 1),
            ["abcd", "defg", "ghij"],
            "no whitespace: hard cuts, exact overlaps"
        );
        assert_eq!(chunks("ééé ééé", 4, 0), ["ééé ", "ééé"], "characters, not bytes");
        assert_eq!(chunks("short", 50, 10), ["short"]);
        assert!(chunks("", 10, 0).is_empty());
    }

    #[test]
    fn through_the_step() {
        let out = run(
            "text_splitter",
            json!({"chunk_size": 50, "chunk_overlap": 0, "input_path": "text"}),
            json!({"text": "short"}),
        );
        assert_eq!(out.unwrap(), json!({"chunks": ["short"], "count": 1}));
        let m = fails("text_splitter", json!({}), json!({"text": "a"}), InputInvalid);
        assert_eq!(m, "the input is an object, not a text (input_path is output, the whole input)");
        let m = fails("text_splitter", json!({"input_path": "$.n"}), json!({"n": 5}), InputInvalid);
        assert_eq!(m, "input_path $.n selects a number in the input, not a text");
    }

    #[test]
    fn output_is_capped() {
        let text = "x".repeat(MAX_CHUNKS * 50 + 1);
        let m = fails("text_splitter", json!({"chunk_size": 50, "chunk_overlap": 0}), json!(text), TooLarge);
        assert!(m.contains("more than 10000 chunks"), "{m}");
        let text = "x".repeat(4_000_000);
        let m = fails(
            "text_splitter",
            json!({"chunk_size": 10_000, "chunk_overlap": 9_000}),
            json!(text),
            TooLarge,
        );
        assert!(m.contains("16 MiB"), "{m}");
    }

    proptest! {
        #[test]
        fn chunks_cover_the_text_in_order(text in "[ab é\n]{0,200}", size in 2usize..40, overlap in 0usize..40) {
            let overlap = overlap % size;
            let ranges = split(&text, size, overlap).unwrap();
            let chars = |r: &Range<usize>| text[r.clone()].chars().count();
            prop_assert_eq!(ranges.is_empty(), text.is_empty());
            if let (Some(first), Some(last)) = (ranges.first(), ranges.last()) {
                prop_assert_eq!(first.start, 0);
                prop_assert_eq!(last.end, text.len());
            }
            for r in &ranges {
                prop_assert!(r.start < r.end && chars(r) <= size);
            }
            for w in ranges.windows(2) {
                prop_assert!(w[0].start < w[1].start && w[0].end < w[1].end && w[1].start <= w[0].end);
                prop_assert!(chars(&(w[1].start..w[0].end)) <= overlap);
            }
        }
    }
}
