//! The README as its tests read it: its fenced code blocks, each with the
//! `<!-- example: NAME -->` marker on the line before it, if any, and its
//! Markdown tables. What a block or a table must be is the tests' business.

use std::path::{Path, PathBuf};

/// The workspace's root directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the tests crate sits in the workspace").to_owned()
}

/// The README's text.
pub fn readme() -> String {
    std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md is readable")
}

/// A fenced code block.
#[derive(Debug, Clone, Copy)]
pub struct Block<'a> {
    /// The word after the opening fence (`json`, `sh`...), empty if none.
    pub lang: &'a str,
    /// NAME of the `<!-- example: NAME -->` line right before the fence.
    pub marker: Option<&'a str>,
    /// The lines between the fences, each ending in a newline.
    pub body: &'a str,
    /// The line of the opening fence, counted from 1.
    pub line: usize,
}

/// Every fenced code block of `text`, in order. Panics on a block that is
/// never closed.
pub fn blocks(text: &str) -> Vec<Block<'_>> {
    let mut out = Vec::new();
    let mut previous: Option<&str> = None;
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n').enumerate();
    while let Some((i, line)) = lines.next() {
        offset += line.len();
        let Some(lang) = line.trim_end().strip_prefix("```") else {
            previous = Some(line.trim_end());
            continue;
        };
        let start = offset;
        let end = loop {
            let (_, inner) = lines.next().unwrap_or_else(|| panic!("README.md:{}: unclosed block", i + 1));
            let at = offset;
            offset += inner.len();
            if inner.trim_end() == "```" {
                break at;
            }
        };
        let marker = previous
            .and_then(|p| p.strip_prefix("<!-- example:"))
            .and_then(|p| p.strip_suffix("-->"))
            .map(str::trim);
        out.push(Block { lang, marker, body: &text[start..end], line: i + 1 });
        previous = None;
    }
    out
}

/// A Markdown table: its header's cells and its rows' cells, trimmed.
#[derive(Debug, Clone)]
pub struct Table<'a> {
    pub header: Vec<&'a str>,
    pub rows: Vec<Vec<&'a str>>,
    /// The header's line, counted from 1.
    pub line: usize,
    /// The text from the end of the previous table (or the start of the
    /// file) to this one's header.
    pub before: &'a str,
}

/// Every table of `text`, in order.
pub fn tables(text: &str) -> Vec<Table<'_>> {
    let mut out: Vec<Table<'_>> = Vec::new();
    let mut since = 0;
    let mut offset = 0;
    let mut current: Option<Table<'_>> = None;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        if !line.starts_with('|') {
            if let Some(table) = current.take() {
                out.push(table);
                since = start;
            }
            continue;
        }
        match &mut current {
            None => {
                let before = &text[since..start];
                current = Some(Table { header: cells(line), rows: Vec::new(), line: i + 1, before });
            }
            // The line under the header.
            Some(table) if table.rows.is_empty() && line.starts_with("|-") => {}
            Some(table) => table.rows.push(cells(line)),
        }
    }
    out.extend(current);
    out
}

/// The cells of a table's line, trimmed.
fn cells(line: &str) -> Vec<&str> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(str::trim).collect()
}
