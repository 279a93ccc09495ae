//! The configuration file: an optional TOML file with the settings' keys
//! (`database_url = "sqlite:/srv/lf.db"`, `read_only = true`,
//! `toolsets = ["lens"]`), read from `--config PATH` (or
//! `LENSERFIGHT_CONFIG`), else from `$XDG_CONFIG_HOME/lenserfight/config.toml`,
//! else from `~/.config/lenserfight/config.toml`.
//!
//! Flags win, then the environment, then the file, then the built-in
//! defaults. That is clap's own order for flags, environment and defaults,
//! so [`parse`] reads the file's values in as the arguments' defaults and
//! lets clap parse again: a value from the file goes through the same
//! parser, and the same checks after it, as the same value given as a flag.
//!
//! An unknown key stops start-up naming it, as does a value of the wrong
//! type (naming the key and the file); a missing default file is no file,
//! a missing file named by `--config` is an error. Both binaries accept
//! every key, each reading its own: one file serves both.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgMatches, Command, Parser};

use crate::config::CommonArgs;
use crate::settings::{ConfigError, Kind, Setting};

/// The configuration file looked for when none is named:
/// `$XDG_CONFIG_HOME/lenserfight/config.toml` when `XDG_CONFIG_HOME` is an
/// absolute path, else `~/.config/lenserfight/config.toml`; `None` when
/// neither variable gives an absolute path.
pub fn default_config_path() -> Option<PathBuf> {
    let absolute = |v: &str| std::env::var_os(v).map(PathBuf::from).filter(|p| p.is_absolute());
    let base = absolute("XDG_CONFIG_HOME").or_else(|| absolute("HOME").map(|h| h.join(".config")))?;
    Some(base.join("lenserfight").join("config.toml"))
}

/// The key of the operator's model endpoints: `[[models]]` tables.
pub const MODELS_KEY: &str = "models";

/// The `[[models]]` tables of the file at `path`: each with known keys of
/// the right type (checked further at start-up, where the key's variable
/// is read).
fn endpoints(path: &Path, value: &toml::Value) -> Result<Vec<lf_model::RawEndpoint>, ConfigError> {
    let bad = |message: String| ConfigError::File { file: path.to_owned(), named: false, message };
    let Some(items) = value.as_array() else {
        return Err(bad("models must be [[models]] tables (name, base_url, api_key or api_key_env, model, concurrency, timeout)".into()));
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("[[models]] entry {}", i + 1);
        let table = item.as_table().ok_or_else(|| bad(format!("{at} is not a table")))?;
        let mut e = lf_model::RawEndpoint::default();
        for (k, v) in table {
            let text =
                || v.as_str().map(str::to_owned).ok_or_else(|| bad(format!("{at}: {k} must be a string")));
            let count = || {
                v.as_integer()
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or_else(|| bad(format!("{at}: {k} must be a whole number, 0 or more")))
            };
            match k.as_str() {
                "name" => e.name = Some(text()?),
                "base_url" => e.base_url = Some(text()?),
                "api_key" => e.api_key = Some(text()?),
                "api_key_env" => e.api_key_env = Some(text()?),
                "model" => e.model = Some(text()?),
                "concurrency" => e.concurrency = Some(count()?),
                "timeout" => e.timeout = Some(count()?),
                other => {
                    return Err(bad(format!(
                        "{at}: unknown key {other:?}; an entry takes name, base_url, api_key or api_key_env, model, concurrency and timeout"
                    )));
                }
            }
        }
        out.push(e);
    }
    Ok(out)
}

/// The values of a configuration file, each as the text a flag would take.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigFile {
    path: PathBuf,
    values: BTreeMap<Setting, Vec<String>>,
    /// The `[[models]]` entries: the operator's model endpoints.
    models: Vec<lf_model::RawEndpoint>,
}

impl ConfigFile {
    /// Reads and checks the file at `path`. `named`: whether the user named
    /// it (then a missing file is an error; otherwise `Ok(None)`).
    pub fn read(path: &Path, named: bool) -> Result<Option<ConfigFile>, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(path, &text).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !named => Ok(None),
            Err(e) => Err(ConfigError::File {
                file: path.to_owned(),
                named,
                message: format!("cannot read the configuration file: {e}"),
            }),
        }
    }

    /// Checks `text`, the configuration file at `path`: TOML, known keys
    /// only, each with a value of its setting's type.
    pub fn parse(path: &Path, text: &str) -> Result<ConfigFile, ConfigError> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| ConfigError::File {
            file: path.to_owned(),
            named: false,
            message: match e.span() {
                Some(span) => format!(
                    "not valid TOML at line {}: {}",
                    1 + text[..span.start.min(text.len())].matches('\n').count(),
                    e.message()
                ),
                None => format!("not valid TOML: {}", e.message()),
            },
        })?;
        let mut values = BTreeMap::new();
        let mut models = Vec::new();
        for (key, value) in &table {
            if key == MODELS_KEY {
                models = endpoints(path, value)?;
                continue;
            }
            let setting = Setting::from_key(key)
                .ok_or_else(|| ConfigError::UnknownKey { file: path.to_owned(), key: key.clone() })?;
            let bad = |what: &str| ConfigError::in_file(setting, path, format!("expected {what}"));
            let texts = match (setting.kind(), value) {
                (Kind::Text, toml::Value::String(s)) => vec![s.clone()],
                (Kind::Text, _) => return Err(bad("a string (in quotes)")),
                (Kind::Switch, toml::Value::Boolean(b)) => vec![b.to_string()],
                (Kind::Switch, _) => return Err(bad("true or false")),
                (Kind::Count, toml::Value::Integer(n)) if *n >= 0 => vec![n.to_string()],
                (Kind::Count, _) => return Err(bad("a whole number, 0 or more")),
                (Kind::List, toml::Value::String(s)) => vec![s.clone()],
                // An empty list is what an empty variable is: a list of nothing.
                (Kind::List, toml::Value::Array(items)) if items.is_empty() => vec![String::new()],
                (Kind::List, toml::Value::Array(items)) => items
                    .iter()
                    .map(|i| i.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| bad("a list of strings"))?,
                (Kind::List, _) => return Err(bad("a list of strings")),
            };
            values.insert(setting, texts);
        }
        Ok(ConfigFile { path: path.to_owned(), values, models })
    }

    /// The `[[models]]` entries, unchecked (see `lf_model::NamedEndpoint::parse`).
    pub fn models(&self) -> &[lf_model::RawEndpoint] {
        &self.models
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The value of `setting`, as the text (or texts, for a list) a flag
    /// would take; `None` when the file does not set it.
    pub fn get(&self, setting: Setting) -> Option<&[String]> {
        self.values.get(&setting).map(Vec::as_slice)
    }

    /// `command` and its subcommands with the file's values as the defaults
    /// of the arguments whose id is a key.
    fn defaults_of(&self, mut command: Command) -> Command {
        let ids: Vec<String> = command.get_arguments().map(|a| a.get_id().to_string()).collect();
        for id in ids {
            if let Some(values) = Setting::from_key(&id).and_then(|s| self.get(s)) {
                let values = values.to_vec();
                command = command.mut_arg(id, |a| a.default_values(values));
            }
        }
        let subcommands: Vec<String> = command.get_subcommands().map(|s| s.get_name().to_owned()).collect();
        for name in subcommands {
            command = command.mut_subcommand(name, |s| self.defaults_of(s));
        }
        command
    }
}

/// Which settings came from which configuration file: what a configuration
/// error needs to name the key where the user wrote it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FromFile {
    /// The configuration file read, if any.
    pub path: Option<PathBuf>,
    /// The settings whose value is the file's (no flag or variable set them).
    pub settings: BTreeSet<Setting>,
    /// The file's `[[models]]` entries, unchecked.
    pub models: Vec<lf_model::RawEndpoint>,
}

impl FromFile {
    /// The file `setting`'s value came from, if it came from the file.
    pub fn file_of(&self, setting: Setting) -> Option<&Path> {
        self.path.as_deref().filter(|_| self.settings.contains(&setting))
    }

    /// A bad value of `setting`, named where it was set.
    pub fn bad(&self, setting: Setting, message: impl std::fmt::Display) -> ConfigError {
        match self.file_of(setting) {
            Some(file) => ConfigError::in_file(setting, file, message),
            None => ConfigError::value(setting, message),
        }
    }
}

/// A binary's command line: what [`parse`] needs besides clap's derive, the
/// shared arguments of the command that runs, to record there which
/// settings came from the file.
pub trait Arguments: Parser {
    /// The shared arguments of the command that runs.
    fn common_mut(&mut self) -> &mut CommonArgs;
}

/// Why the command line could not be read.
#[derive(Debug)]
pub enum ParseError {
    /// clap's own: a usage error, or `--help` / `--version` (see
    /// [`clap::Error::exit`]).
    Usage(clap::Error),
    /// The configuration file, or a value in it.
    Config(ConfigError),
}

/// Reads the process's command line, environment and configuration file
/// into `T`. On a usage error, `--help` or `--version` it does what clap
/// does (prints, and exits with clap's code); a configuration file that
/// cannot be used is an error naming it.
pub fn parse<T: Arguments>() -> Result<T, ConfigError> {
    match try_parse_from(std::env::args_os()) {
        Ok(args) => Ok(args),
        Err(ParseError::Usage(e)) => e.exit(),
        Err(ParseError::Config(e)) => Err(e),
    }
}

/// [`parse`] over `args` (the program name first), returning clap's errors.
pub fn try_parse_from<T: Arguments>(
    args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
) -> Result<T, ParseError> {
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    // First without the file: to find it, and to answer --help, --version
    // and usage errors exactly as without one.
    let first = T::command().try_get_matches_from(&args).map_err(ParseError::Usage)?;
    let (path, named) = match config_path(&first) {
        Some(p) => (Some(p), true),
        None => (default_config_path(), false),
    };
    let file = match path {
        Some(p) => ConfigFile::read(&p, named).map_err(ParseError::Config)?,
        None => None,
    };
    let Some(file) = file else {
        return T::from_arg_matches(&first).map_err(ParseError::Usage);
    };
    let matches = file.defaults_of(T::command()).try_get_matches_from(&args).map_err(ParseError::Usage)?;
    let mut parsed = T::from_arg_matches(&matches).map_err(ParseError::Usage)?;
    let mut settings = BTreeSet::new();
    from_defaults(&matches, &file, &mut settings);
    parsed.common_mut().from_file =
        FromFile { path: Some(file.path.clone()), settings, models: file.models.clone() };
    Ok(parsed)
}

/// `--config`'s value, in the deepest (sub)command that has one.
fn config_path(matches: &ArgMatches) -> Option<PathBuf> {
    let here = matches.try_get_one::<PathBuf>("config").ok().flatten().cloned();
    let deeper = matches.subcommand().and_then(|(_, m)| config_path(m));
    deeper.or(here).filter(|p| !p.as_os_str().is_empty())
}

/// Adds the settings of `file` that `matches` took from their defaults, that
/// is from the file, at every level of subcommands.
fn from_defaults(matches: &ArgMatches, file: &ConfigFile, out: &mut BTreeSet<Setting>) {
    for id in matches.ids() {
        let from_file = |s: &Setting| {
            file.get(*s).is_some() && matches.value_source(id.as_str()) == Some(ValueSource::DefaultValue)
        };
        out.extend(Setting::from_key(id.as_str()).filter(from_file));
    }
    if let Some((_, sub)) = matches.subcommand() {
        from_defaults(sub, file, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments shaped like the binaries' (no environment variables, so
    /// the test's environment cannot change the result).
    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        common: CommonArgs,
        #[arg(long, default_value = "127.0.0.1:8080")]
        bind: String,
        #[arg(long, default_value_t = 30)]
        request_timeout: u64,
        #[arg(long)]
        sessions: bool,
        #[arg(long, value_delimiter = ',')]
        allowed_origins: Option<Vec<String>>,
    }

    impl Arguments for Cli {
        fn common_mut(&mut self) -> &mut CommonArgs {
            &mut self.common
        }
    }

    fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    fn parse_with(path: &Path, flags: &[&str]) -> Result<Cli, ParseError> {
        let mut args = vec!["lf".to_owned(), "--config".to_owned(), path.display().to_string()];
        args.extend(flags.iter().map(|s| (*s).to_owned()));
        try_parse_from::<Cli>(args)
    }

    fn config_error(r: Result<Cli, ParseError>) -> ConfigError {
        match r {
            Err(ParseError::Config(e)) => e,
            other => panic!("expected a configuration error, got {other:?}"),
        }
    }

    #[test]
    fn the_file_fills_what_flags_leave_unset() {
        let (_dir, path) = write(
            "bind = \"127.0.0.1:9000\"\nrequest_timeout = 5\nsessions = true\n\
             toolsets = [\"lens\"]\nallowed_origins = \"https://a.example,https://b.example\"\n\
             read_only = true\n",
        );
        let cli = parse_with(&path, &["--request-timeout", "7", "--toolsets", "battle"]).unwrap();
        assert_eq!(cli.bind, "127.0.0.1:9000", "from the file");
        assert_eq!(cli.request_timeout, 7, "the flag wins");
        assert!(cli.sessions && cli.common.read_only, "switches from the file");
        assert_eq!(cli.common.toolsets, Some(vec!["battle".to_owned()]), "the flag wins");
        assert_eq!(
            cli.allowed_origins,
            Some(vec!["https://a.example".to_owned(), "https://b.example".to_owned()]),
            "a list as one comma-separated string"
        );
        assert_eq!(cli.common.log, None, "neither: unset (RUST_LOG or info, when logs start)");
        let from = &cli.common.from_file;
        assert_eq!(from.path.as_deref(), Some(path.as_path()));
        assert_eq!(from.file_of(Setting::Bind), Some(path.as_path()));
        assert_eq!(from.file_of(Setting::RequestTimeout), None, "set by a flag");
        assert_eq!(from.file_of(Setting::Log), None, "not in the file");
        let e = from.bad(Setting::Bind, "no good");
        assert_eq!(e.to_string(), format!("configuration error: bind in {}: no good", path.display()));
        assert_eq!(
            from.bad(Setting::RequestTimeout, "no good").to_string(),
            "configuration error: LENSERFIGHT_REQUEST_TIMEOUT (--request-timeout): no good"
        );
    }

    #[test]
    fn an_unknown_key_stops_naming_it() {
        for text in ["bnid = \"x\"\n", "[model]\nname = \"x\"\n", "config = \"/etc/other.toml\"\n"] {
            let (_dir, path) = write(text);
            let e = config_error(parse_with(&path, &[]));
            let key = text.trim_start_matches('[').split([' ', ']']).next().unwrap();
            assert_eq!(e, ConfigError::UnknownKey { file: path.clone(), key: key.to_owned() }, "{text}");
            assert!(e.to_string().contains(&format!("unknown key {key:?}")), "{e}");
            assert!(e.to_string().contains("database_url"), "it lists the keys: {e}");
        }
    }

    #[test]
    fn a_bad_value_names_its_key_and_file() {
        for (text, setting) in [
            ("read_only = \"yes\"\n", Setting::ReadOnly),
            ("request_timeout = -1\n", Setting::RequestTimeout),
            ("request_timeout = \"30\"\n", Setting::RequestTimeout),
            ("bind = 8080\n", Setting::Bind),
            ("toolsets = [\"lens\", 2]\n", Setting::Toolsets),
        ] {
            let (_dir, path) = write(text);
            let e = config_error(parse_with(&path, &[]));
            assert_eq!(e.setting(), Some(setting), "{text}");
            let shown = e.to_string();
            assert!(shown.contains(&format!("{} in {}", setting.key(), path.display())), "{shown}");
        }
        let (_dir, path) = write("bind = \"x\"\nthis is not toml\n");
        let e = config_error(parse_with(&path, &[]));
        assert!(e.to_string().contains("not valid TOML at line 2"), "{e}");
    }

    #[test]
    fn a_named_file_must_exist_and_the_default_need_not() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.toml");
        let e = config_error(parse_with(&missing, &[]));
        assert!(matches!(e, ConfigError::File { named: true, .. }), "{e:?}");
        assert!(e.to_string().starts_with("configuration error: LENSERFIGHT_CONFIG (--config): "), "{e}");
        assert!(e.to_string().contains("nope.toml"), "{e}");
        assert_eq!(ConfigFile::read(&missing, false).unwrap(), None, "an absent default file is no file");
    }

    #[test]
    fn without_a_file_nothing_changes() {
        let dir = tempfile::tempdir().unwrap();
        let (_d, path) = write("");
        let empty = parse_with(&path, &["--bind", "0.0.0.0:1"]).unwrap();
        assert_eq!(empty.bind, "0.0.0.0:1");
        assert_eq!(empty.common.from_file.settings, BTreeSet::new());
        // And clap's own errors stay clap's.
        let e = parse_with(&dir.path().join("absent.toml"), &["--request-timeout", "soon"]);
        assert!(matches!(e, Err(ParseError::Usage(_))), "usage errors come before the file");
    }

    #[test]
    fn models_entries_are_read_and_checked() {
        let (_dir, path) = write(
            "model_base_url = \"http://localhost:11434/v1\"\nmodel_name = \"llama3.2\"\n\n\
             [[models]]\nname = \"openai\"\nbase_url = \"https://api.openai.com/v1\"\n\
             api_key_env = \"LF_TEST_MODELS_KEY_THAT_IS_UNSET\"\nmodel = \"gpt-4o-mini\"\n\n\
             [[models]]\nname = \"vllm\"\nbase_url = \"http://10.0.0.5:8000/v1\"\napi_key = \"sk-inline\"\n\
             concurrency = 2\ntimeout = 30\n",
        );
        let cli = parse_with(&path, &[]).unwrap();
        let models = &cli.common.from_file.models;
        assert_eq!(models.len(), 2);
        assert_eq!(models[1].concurrency, Some(2));
        assert_eq!(models[0].api_key_env.as_deref(), Some("LF_TEST_MODELS_KEY_THAT_IS_UNSET"));
        let provider = cli.common.model_provider().unwrap();
        // The first names a variable that is not set: an error naming the entry and field.
        let e = cli.common.endpoints(provider.clone()).unwrap_err().to_string();
        assert!(e.contains("[[models]] entry 1 (openai): api_key_env") && e.contains("config.toml"), "{e}");
        let mut common = cli.common.clone();
        common.from_file.models.remove(0);
        let all = common.endpoints(provider).unwrap();
        assert_eq!(
            all.listed(),
            [("default".to_owned(), Some("llama3.2".to_owned())), ("vllm".to_owned(), None)],
            "the LENSERFIGHT_MODEL_* settings are the entry named default"
        );
        assert!(!format!("{all:?}").contains("sk-inline"));

        for (text, says) in [
            ("models = 3\n", "[[models]] tables"),
            ("[[models]]\nname = \"x\"\nbase_url = \"http://x\"\nsecret = \"y\"\n", "unknown key \"secret\""),
            ("[[models]]\nname = \"x\"\nconcurrency = \"many\"\n", "concurrency must be a whole number"),
        ] {
            let (_dir, path) = write(text);
            let e = config_error(parse_with(&path, &[])).to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
        let (_dir, path) = write("[[models]]\nname = \"default\"\nbase_url = \"http://x/v1\"\n");
        let cli = parse_with(&path, &[]).unwrap();
        let e = cli.common.endpoints(cli.common.model_provider().unwrap()).unwrap_err().to_string();
        assert!(e.contains("(default): name"), "{e}");
    }
}
