//! `check-arch`: ARCHITECTURE.md held to the tree. The map is only worth
//! reading while it is true, and the two ways it goes stale silently are a
//! crate nobody wrote a section for and a path that moved: this check
//! finds both, and keeps the map short enough to read in one sitting.
//!
//! What counts as a path: a token in backticks, or a Markdown link's
//! target, that names a file by a known extension or ends in `/`, with no
//! placeholder (`<group>`, `{id}`, `*`). It is looked for from the
//! repository's root and from `crates/`, then from the crate whose section it is in (its
//! folder, then `src/`), and a bare file name anywhere in that crate.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The file the check reads.
pub const FILE: &str = "ARCHITECTURE.md";

/// Most lines the map may have: under 450, read in one sitting.
pub const MAX_LINES: usize = 449;

/// The extensions a token must end with to be read as a file's path.
const EXTENSIONS: &[&str] = &[".rs", ".md", ".toml", ".sql", ".sh", ".py", ".json", ".txt", ".yml", ".html"];

/// The workspace's members, as paths from the root: every folder under
/// `crates/` with a manifest, then `xtask` and `tests`.
pub fn members(root: &Path) -> Result<Vec<String>, String> {
    let crates = root.join("crates");
    let entries = std::fs::read_dir(&crates).map_err(|e| format!("reading {}: {e}", crates.display()))?;
    let mut members: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| format!("crates/{}", e.file_name().to_string_lossy()))
        .collect();
    members.sort();
    members.extend(["xtask".to_owned(), "tests".to_owned()]);
    Ok(members)
}

/// A section of the map: the member it is about (from a heading that names
/// one in backticks), and the paths it names, each with its line.
struct Section<'a> {
    member: Option<&'a str>,
    paths: Vec<(usize, &'a str)>,
}

/// The tokens of `line` in backticks and the targets of its Markdown links.
fn tokens(line: &str) -> impl Iterator<Item = &str> {
    let ticked = line.split('`').skip(1).step_by(2);
    let linked = line.split("](").skip(1).filter_map(|rest| rest.split_once(')').map(|(target, _)| target));
    ticked.chain(linked)
}

/// Whether `token` reads as the path of a file or folder of the tree.
fn is_path(token: &str) -> bool {
    let token = token.split_once('#').map_or(token, |(path, _)| path);
    let plain = !token.is_empty()
        && !token.contains("://")
        && token.chars().all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c));
    plain && (token.ends_with('/') || EXTENSIONS.iter().any(|ext| token.ends_with(ext)))
}

/// The map cut into sections at its headings.
fn sections<'a>(text: &'a str, members: &'a [String]) -> Vec<Section<'a>> {
    let mut sections = vec![Section { member: None, paths: Vec::new() }];
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced && line.starts_with('#') {
            let named =
                tokens(line).find_map(|t| members.iter().find(|m| m.as_str() == t.trim_end_matches('/')));
            // A sub-heading stays in its crate's section.
            let top = line.starts_with("## ") || line.starts_with("### ");
            if top || named.is_some() {
                sections.push(Section { member: named.map(String::as_str), paths: Vec::new() });
            }
        }
        if fenced {
            continue;
        }
        let section = sections.last_mut().expect("there is always a section");
        section.paths.extend(tokens(line).filter(|t| is_path(t)).map(|t| (i + 1, t)));
    }
    sections
}

/// Every file below `dir` named `name`, skipping build output.
fn find_named(dir: &Path, name: &str, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            if entry.file_name() != "target" {
                find_named(&path, name, found);
            }
        } else if entry.file_name().to_str() == Some(name) {
            found.push(path);
        }
    }
}

/// Whether `path`, named in the section of `member`, exists.
fn exists(root: &Path, member: Option<&str>, path: &str) -> bool {
    let path = path.split_once('#').map_or(path, |(p, _)| p);
    if root.join(path).exists() || root.join("crates").join(path).exists() {
        return true;
    }
    let Some(member) = member else { return false };
    let dir = root.join(member);
    if dir.join(path).exists() || dir.join("src").join(path).exists() {
        return true;
    }
    if path.contains('/') {
        return false;
    }
    let mut found = Vec::new();
    find_named(&dir, path, &mut found);
    !found.is_empty()
}

/// What is wrong with `text` as the map of the tree at `root`: members
/// without a section, paths that do not exist, too many lines.
pub fn problems(root: &Path, text: &str, members: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    let lines = text.lines().count();
    if lines > MAX_LINES {
        problems.push(format!("{FILE} has {lines} lines; keep it to {MAX_LINES} at most"));
    }
    let sections = sections(text, members);
    let covered: BTreeSet<&str> = sections.iter().filter_map(|s| s.member).collect();
    for member in members.iter().filter(|m| !covered.contains(m.as_str())) {
        problems.push(format!("{FILE} has no section for {member}: add a heading `### `{member}`` with what it is for, the files to open first and its invariants"));
    }
    for section in &sections {
        for (line, path) in &section.paths {
            if !exists(root, section.member, path) {
                let place = section.member.map_or(String::new(), |m| format!(" (nor in {m})"));
                problems.push(format!("{FILE}:{line} names {path}, which does not exist{place}"));
            }
        }
    }
    problems
}

/// `cargo xtask check-arch`.
pub fn check(root: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(root.join(FILE)).map_err(|e| format!("reading {FILE}: {e}"))?;
    let problems = problems(root, &text, &members(root)?);
    if problems.is_empty() {
        eprintln!("{FILE} names every crate and only paths that exist");
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        crate::workspace_root()
    }

    #[test]
    fn the_architecture_map_is_true() {
        if let Err(problems) = check(&root()) {
            panic!("{problems}");
        }
    }

    #[test]
    fn a_member_without_a_section_is_named() {
        let members = vec!["crates/lf-core".to_owned(), "xtask".to_owned()];
        let text = "# Architecture\n\n### `crates/lf-core`\n\nIds.\n";
        assert_eq!(
            problems(&root(), text, &members),
            vec![
                "ARCHITECTURE.md has no section for xtask: add a heading `### `xtask`` with what it is for, the files to open first and its invariants"
            ]
        );
    }

    #[test]
    fn a_path_that_does_not_exist_is_named_with_its_line() {
        let members = vec!["crates/lf-core".to_owned()];
        let text = "### `crates/lf-core`\n\n`src/call.rs`, `call.rs` and `error.rs#L1` exist;\n`src/gone.rs` does not, nor [this](docs/gone.md).\n";
        assert_eq!(
            problems(&root(), text, &members),
            vec![
                "ARCHITECTURE.md:4 names src/gone.rs, which does not exist (nor in crates/lf-core)",
                "ARCHITECTURE.md:4 names docs/gone.md, which does not exist (nor in crates/lf-core)",
            ]
        );
    }

    #[test]
    fn placeholders_code_and_names_are_not_paths() {
        for token in [
            "groups/<group>/<tool>.rs",
            "lenserfight://lenses/{id}",
            "LfError",
            "a b.rs",
            "*.rs",
            "https://x/y.md",
        ] {
            assert!(!is_path(token), "{token}");
        }
        for token in ["src/lib.rs", "docs/", "README.md#quick-start", "crates/lf-store/migrations/"] {
            assert!(is_path(token), "{token}");
        }
    }

    #[test]
    fn fenced_blocks_and_length_are_held() {
        let members = vec!["crates/lf-core".to_owned()];
        let fenced = "### `crates/lf-core`\n```\n`src/gone.rs`\n```\n";
        assert!(problems(&root(), fenced, &members).is_empty());
        let long = format!("### `crates/lf-core`\n{}", "line\n".repeat(MAX_LINES));
        assert_eq!(
            problems(&root(), &long, &members),
            vec![format!("ARCHITECTURE.md has {} lines; keep it to 449 at most", MAX_LINES + 1)]
        );
    }
}
