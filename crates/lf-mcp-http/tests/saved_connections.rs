//! `lf-mcp-http admin connection add | list | remove --handle H` through
//! the built binary: the same commands as lf-mcp-stdio's, for the lenser a
//! handle names.

#[path = "common/process.rs"]
mod process;

const SECRET: &str = "smtp-password-plaintext-marker";

struct Admin(process::Home);

impl Admin {
    /// Runs `lf-mcp-http admin …args` with `stdin`, on a database and key
    /// of its own: exit code, stdout, stderr.
    fn run(&self, args: &[&str], stdin: &str) -> (Option<i32>, String, String) {
        let out = self.0.admin_output(args, stdin, &[("LENSERFIGHT_LOG", "debug")]);
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
    let admin = Admin(process::Home::new());
    let (code, _, stderr) = admin.run(&["create-lenser", "--handle", "ops_team"], "a long password\n");
    assert_eq!(code, Some(0), "{stderr}");

    let add = ["connection", "add", "--handle", "ops_team", "--provider", "smtp", "--ref", "mail"];
    let mut with_settings = add.to_vec();
    with_settings.extend(["--setting", "host=smtp.example.com", "--settings", r#"{"port": 587}"#]);
    let (code, stdout, stderr) = admin.run(&with_settings, SECRET);
    assert_eq!((code, stdout.as_str()), (Some(0), "saved connection mail (smtp)\n"), "{stderr}");
    assert!(admin.0.path().join("data/lenserfight/secret.key").exists(), "the key file is made");

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
