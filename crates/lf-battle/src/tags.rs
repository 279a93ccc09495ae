//! A battle's tags, the categories `get_leaderboard` rates one of: a tag
//! is compared trimmed and lowercase, 1 to [`MAX_TAG_CHARS`] characters,
//! at most [`MAX_TAGS`] a battle. Experiments' cases are rated under their
//! tags alike.

use lf_core::{LfError, LfResult};

/// Most tags of a battle.
pub const MAX_TAGS: usize = 5;
/// Longest tag, in characters.
pub const MAX_TAG_CHARS: usize = 32;

/// A category as compared: trimmed and lowercase; INVALID_ARGUMENT naming
/// `field` when empty or over [`MAX_TAG_CHARS`] characters.
pub fn category(field: &str, given: &str) -> LfResult<String> {
    let tag = given.trim().to_lowercase();
    let n = tag.chars().count();
    if n == 0 || n > MAX_TAG_CHARS {
        return Err(LfError::invalid_argument(format!("A tag is 1 to {MAX_TAG_CHARS} characters; got {n}."))
            .with_field(field));
    }
    Ok(tag)
}

/// A battle's tags: each a [`category`], named once (in the order given),
/// at most [`MAX_TAGS`].
pub fn battle_tags(given: Vec<String>) -> LfResult<Vec<String>> {
    if given.len() > MAX_TAGS {
        return Err(LfError::invalid_argument(format!("Give at most {MAX_TAGS} tags.")).with_field("tags"));
    }
    let mut tags: Vec<String> = Vec::new();
    for t in &given {
        let tag = category("tags", t)?;
        if !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    Ok(tags)
}
