//! The README's two configuration tables are the binaries' settings: the
//! first lists `lf-mcp-stdio`'s (the configuration file, then every setting
//! both binaries read or stdio alone reads), the second those only
//! `lf-mcp-http serve` reads, in the order of `Setting::ALL`. Each row's
//! variable and flag are those the binary's command line takes, and its
//! default is what `--help` says; a row that is no setting, or a setting
//! with no row, fails. The defaults `--help` states in words are the ones
//! the code applies.

use clap::{Args as _, CommandFactory};
use lf_server::{CONFIG_ENV, CONFIG_FLAG, CommonArgs, Kind, Reader, Setting};
use lf_tests::readme::{Table, readme, tables};

/// The binary's argument with this id.
fn argument<'a>(command: &'a clap::Command, id: &str) -> &'a clap::Arg {
    command
        .get_arguments()
        .find(|a| a.get_id().as_str() == id)
        .unwrap_or_else(|| panic!("{} has no argument {id}", command.get_name()))
}

/// The default `--help` shows: clap's default value, else the
/// `[default: …]` its help text spells out.
fn help_default(arg: &clap::Arg) -> Option<String> {
    let values: Vec<String> =
        arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
    if !values.is_empty() {
        return Some(values.join(","));
    }
    let help = arg.get_long_help().or(arg.get_help())?.to_string();
    let start = help.find("[default: ")? + "[default: ".len();
    let end = start + help[start..].find(']')?;
    Some(help[start..end].to_owned())
}

/// `` `text` ``, as a variable or a flag is written in a cell.
fn code(text: &str) -> String {
    format!("`{text}`")
}

/// Checks `table` against the arguments of `command` with these ids (file
/// keys), in this order.
fn check(table: &Table<'_>, command: &clap::Command, ids: &[&str]) {
    let at = format!("README.md:{}", table.line);
    assert_eq!(table.header, ["Variable", "Flag", "Default", "Meaning"], "{at}");
    let variables: Vec<&str> = table.rows.iter().map(|r| r[0]).collect();
    let expected: Vec<String> = ids
        .iter()
        .map(|id| code(argument(command, id).get_env().and_then(|e| e.to_str()).unwrap_or("(none)")))
        .collect();
    assert_eq!(variables, expected, "{at}: the rows are {}'s settings, in order", command.get_name());
    for (row, id) in table.rows.iter().zip(ids) {
        let arg = argument(command, id);
        let flag = code(&format!("--{}", arg.get_long().expect("a setting has a flag")));
        assert_eq!(row[1], flag, "{at}: {}'s flag", row[0]);
        let switch = Setting::from_key(id).is_some_and(|s| s.kind() == Kind::Switch);
        let default = row[2].replace('`', "");
        match help_default(arg) {
            _ if switch => assert_eq!(default, "off", "{at}: {} is a switch", row[0]),
            Some(shown) => assert_eq!(default, shown, "{at}: {}'s default is what --help says", row[0]),
            None => assert!(
                matches!(default.as_str(), "unset" | "none"),
                "{at}: {} has no default in --help: the README says unset or none, not {default}",
                row[0]
            ),
        }
    }
}

/// The keys of the settings `reader` alone reads, or both binaries
/// (`Reader::Both`), in the README's order.
fn keys(readers: &[Reader]) -> Vec<&'static str> {
    Setting::ALL.iter().filter(|s| readers.contains(&s.reader())).map(|s| s.key()).collect()
}

#[test]
fn the_readme_configuration_tables_are_the_settings_of_both_binaries() {
    let text = readme();
    let all = tables(&text);
    let mut configuration = all.iter().filter(|t| t.header.first() == Some(&"Variable"));
    let (stdio, http) = (configuration.next(), configuration.next());
    let (Some(stdio), Some(http), None) = (stdio, http, configuration.next()) else {
        panic!("the README has two configuration tables: lf-mcp-stdio's and lf-mcp-http serve's")
    };

    let command = lf_mcp_stdio::Args::command();
    let mut ids = vec!["config"];
    ids.extend(keys(&[Reader::Both, Reader::Stdio]));
    check(stdio, &command, &ids);
    let config = argument(&command, "config");
    assert_eq!(config.get_env().and_then(|e| e.to_str()), Some(CONFIG_ENV));
    assert_eq!(config.get_long().map(|l| format!("--{l}")).as_deref(), Some(CONFIG_FLAG));

    let serve = lf_mcp_http::ServeArgs::augment_args(clap::Command::new("serve"));
    check(http, &serve, &keys(&[Reader::Http]));
    // The sentence before it names what only the stdio server reads.
    for setting in Setting::ALL.iter().filter(|s| s.reader() == Reader::Stdio) {
        assert!(
            http.before.contains(&code(setting.env())),
            "README.md:{}: the text before the HTTP table says serve does not read {}",
            http.line,
            setting.env()
        );
    }

    // The toolsets' row names the groups of the catalog.
    let row = stdio.rows.iter().find(|r| r[0] == code(Setting::Toolsets.env())).expect("a toolsets row");
    let named: Vec<&str> = row[3].split('`').skip(1).step_by(2).collect();
    assert_eq!(named, lf_tools::Group::ids(), "README.md:{}: the toolsets' groups", stdio.line);
}

/// The defaults the run settings' help states in words (`[default: 600]`)
/// are those `CommonArgs::runs` applies when the setting is not given.
#[test]
fn the_run_settings_defaults_in_help_are_the_ones_applied() {
    let command = lf_mcp_stdio::Args::command();
    let runs = CommonArgs::default().runs().expect("the defaults check");
    let limits = runs.defaults.limits;
    let applied = [
        (Setting::RunBudgetCredits, limits.budget_credits.map_or("no limit".to_owned(), |c| c.to_string())),
        (Setting::CreditsPer1kTokens, runs.pricing.credits_per_1k_tokens.to_string()),
        (Setting::RunTimeout, (limits.run_timeout_ms / 1_000).to_string()),
        (Setting::StepTimeout, (limits.node_timeout_ms / 1_000).to_string()),
        (Setting::ParallelSteps, limits.parallel.to_string()),
        (Setting::RunLease, runs.runner.lease.as_secs().to_string()),
        (Setting::RunsPerProcess, runs.runner.max_runs.to_string()),
        (Setting::RunsPerStarter, runs.runner.per_starter.to_string()),
        (Setting::RunnerGrace, runs.runner.grace.as_secs().to_string()),
        (Setting::AgentsPerOwner, runs.agents.per_owner.to_string()),
        (Setting::EventTreeMax, runs.defaults.events.tree_max.to_string()),
        (Setting::EventRunsPerMinute, runs.defaults.events.per_minute.to_string()),
    ];
    let counted = Setting::ALL.iter().filter(|s| s.kind() == Kind::Count && s.reader() == Reader::Both);
    assert_eq!(counted.count(), applied.len(), "every number both binaries read is checked");
    for (setting, value) in applied {
        let arg = argument(&command, setting.key());
        assert_eq!(help_default(arg), Some(value), "{setting}");
    }
}
