//! [`SearchQuery`]: the words of a search, parsed once for every domain
//! that searches (lenses by full text, battles by title and task).

use crate::error::{LfError, LfResult};
use crate::text::check_length;

/// A parsed search query: lowercase alphanumeric words, deduplicated; every
/// one must match. What "match" means is the searching store's: lenses
/// match a word that starts with it, battles any text that contains it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchQuery {
    terms: Vec<String>,
}

impl SearchQuery {
    pub const MAX_CHARS: usize = 500;
    pub const MAX_TERMS: usize = 16;

    pub fn parse(q: &str) -> LfResult<Self> {
        check_length("query", q, 1, Self::MAX_CHARS)?;
        let mut terms: Vec<String> = Vec::new();
        for word in q.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            let w = word.to_lowercase();
            if !terms.contains(&w) {
                terms.push(w);
            }
        }
        if terms.is_empty() {
            return Err(LfError::invalid_argument(
                "query must contain at least one letter or digit: search matches whole words and word prefixes",
            )
            .with_field("query"));
        }
        if terms.len() > Self::MAX_TERMS {
            return Err(LfError::invalid_argument(format!(
                "query may have at most {} words, got {}",
                Self::MAX_TERMS,
                terms.len()
            ))
            .with_field("query"));
        }
        Ok(Self { terms })
    }

    /// Lowercase alphanumeric words, deduplicated, in query order: never
    /// empty, and never holding a character SQL's `LIKE` treats specially.
    pub fn terms(&self) -> &[String] {
        &self.terms
    }
}
