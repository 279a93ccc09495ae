//! Where the embedded database lives by default, and how a database URL is
//! shown in logs.

use std::path::PathBuf;

use lf_core::{LfError, LfResult};

/// The directory for LenserFight's data: `$XDG_DATA_HOME/lenserfight` when
/// `XDG_DATA_HOME` is an absolute path, else `~/.local/share/lenserfight`.
pub fn data_dir() -> LfResult<PathBuf> {
    let xdg = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from).filter(|p| p.is_absolute());
    let base = match xdg {
        Some(p) => p,
        None => {
            let home = std::env::var_os("HOME").map(PathBuf::from).filter(|p| p.is_absolute()).ok_or_else(|| {
                LfError::invalid_argument(
                    "cannot find your data directory: neither XDG_DATA_HOME nor HOME is set to an absolute path; set LENSERFIGHT_DATABASE_URL",
                )
                .with_field("LENSERFIGHT_DATABASE_URL")
            })?;
            home.join(".local").join("share")
        }
    };
    Ok(base.join("lenserfight"))
}

/// The default `LENSERFIGHT_DATABASE_URL`: `lenserfight.db` in [`data_dir`],
/// so an MCP client may start the server from any working directory. The file
/// and its directories are created on first connect.
pub fn default_database_url() -> LfResult<String> {
    let path = data_dir()?.join("lenserfight.db");
    let path = path.to_str().ok_or_else(|| {
        LfError::invalid_argument(
            "the data directory's path is not valid UTF-8; set LENSERFIGHT_DATABASE_URL",
        )
        .with_field("LENSERFIGHT_DATABASE_URL")
    })?;
    Ok(format!("sqlite://{path}"))
}

/// `url` with any password replaced by `***`, for logs.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
            let masked = if userinfo.contains(':') { format!("{user}:***") } else { user.to_owned() };
            format!("{scheme}://{masked}@{host}{tail}")
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_masked() {
        assert_eq!(
            redact_url("postgres://lf:s3cret@db:5432/lf?sslmode=disable"),
            "postgres://lf:***@db:5432/lf?sslmode=disable"
        );
        assert_eq!(redact_url("postgres://lf@db/lf"), "postgres://lf@db/lf");
        assert_eq!(redact_url("postgresql://a:b:c@h/d"), "postgresql://a:***@h/d");
        assert_eq!(redact_url("sqlite:///home/me/x.db"), "sqlite:///home/me/x.db");
        assert_eq!(redact_url("sqlite:x.db"), "sqlite:x.db");
    }

    #[test]
    fn default_url_is_an_absolute_sqlite_path() {
        let url = default_database_url().unwrap();
        assert!(url.starts_with("sqlite:///"), "{url}");
        assert!(url.ends_with("/lenserfight/lenserfight.db"), "{url}");
    }
}
