//! `cargo xtask <task>`: development tasks.
//!
//! - `gen-docs`: renders docs/tools.md and the README's tool table from the
//!   live catalog. `cargo test -p xtask` fails when either is stale.

mod deps;
mod docs;

use std::path::PathBuf;
use std::process::ExitCode;

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask sits in the workspace").to_path_buf()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("gen-docs") => match docs::write_all(&workspace_root()) {
            Ok(changed) => {
                for path in &changed {
                    eprintln!("updated {}", path.display());
                }
                if changed.is_empty() {
                    eprintln!("docs are up to date");
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("gen-docs: {e}");
                ExitCode::FAILURE
            }
        },
        _ => {
            eprintln!("usage: cargo xtask gen-docs");
            ExitCode::from(2)
        }
    }
}
