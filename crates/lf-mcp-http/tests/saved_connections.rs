//! `lf-mcp-http admin connection add | list | remove --handle H` through
//! the built binary: the same commands as lf-mcp-stdio's, for the lenser a
//! handle names.

use std::io::Write;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lf-mcp-http");
const SECRET: &str = "smtp-password-plaintext-marker";

struct Admin {
    dir: tempfile::TempDir,
}

impl Admin {
    /// Runs `lf-mcp-http admin …args` with `stdin`, on a database and key
    /// of its own: exit code, stdout, stderr.
    fn run(&self, args: &[&str], stdin: &str) -> (Option<i32>, String, String) {
        let url = format!("sqlite://{}", self.dir.path().join("lf.db").display());
        let mut child = Command::new(BIN)
            .arg("admin")
            .args(args)
            .env_remove("LENSERFIGHT_CONFIG")
            .env_remove("LENSERFIGHT_SECRET_KEY")
            .env("LENSERFIGHT_DATABASE_URL", url)
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("LENSERFIGHT_LOG", "debug")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        let out: Output = child.wait_with_output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        assert!(
            !stdout.contains(SECRET) && !stderr.contains(SECRET),
            "the secret is never printed or logged"
        );
        (out.status.code(), stdout, stderr)
    }
}

#[test]
fn admin_connections_round_trip_for_a_handle() {
    let admin = Admin { dir: tempfile::tempdir().unwrap() };
    let (code, _, stderr) = admin.run(&["create-lenser", "--handle", "ops_team"], "a long password\n");
    assert_eq!(code, Some(0), "{stderr}");

    let add = ["connection", "add", "--handle", "ops_team", "--provider", "smtp", "--ref", "mail"];
    let mut with_settings = add.to_vec();
    with_settings.extend(["--setting", "host=smtp.example.com", "--settings", r#"{"port": 587}"#]);
    let (code, stdout, stderr) = admin.run(&with_settings, SECRET);
    assert_eq!((code, stdout.as_str()), (Some(0), "saved connection mail (smtp)\n"), "{stderr}");
    assert!(admin.dir.path().join("data/lenserfight/secret.key").exists(), "the key file is made");

    let (code, stdout, _) = admin.run(&["connection", "list", "--handle", "ops_team"], "");
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(lines[1].starts_with("mail\tsmtp\t"), "{stdout}");
    assert!(lines[1].ends_with(r#"{"port":587,"host":"smtp.example.com"}"#), "{stdout}");

    let (code, _, stderr) = admin.run(&add, "another");
    assert_eq!(code, Some(1));
    assert!(stderr.contains("A connection named \"mail\" is already saved"), "{stderr}");
    let (code, _, stderr) = admin.run(&["connection", "list", "--handle", "nobody_here"], "");
    assert_eq!(code, Some(1));
    assert!(stderr.contains("no lenser has the handle nobody_here"), "{stderr}");

    let (code, stdout, _) = admin.run(&["connection", "remove", "--handle", "ops_team", "--ref", "mail"], "");
    assert_eq!((code, stdout.as_str()), (Some(0), "removed connection mail\n"));
    let (_, stdout, _) = admin.run(&["connection", "list", "--handle", "ops_team"], "");
    assert_eq!(stdout, "ref\tprovider\tcreated\tsettings\n");
}
