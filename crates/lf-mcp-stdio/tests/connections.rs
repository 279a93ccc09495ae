//! `lf-mcp-stdio connection add | list | remove` through the built binary:
//! the secret goes in on stdin and never comes out, it is stored sealed,
//! and the key file is made once with mode 0600.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lf-mcp-stdio");
const LENSER: &str = "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d";
const SECRET: &str = "xoxb-0123456789-plaintext-marker";

/// A data directory of its own, no configuration file, no settings from
/// the test's environment.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        Home { dir: tempfile::tempdir().unwrap() }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data").join("lenserfight")
    }

    /// Runs the binary with `args`, `env` and `stdin`, and waits for it.
    fn run(&self, args: &[&str], env: &[(&str, &str)], stdin: &str) -> Output {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .env_remove("LENSERFIGHT_DATABASE_URL")
            .env_remove("LENSERFIGHT_LENSER_ID")
            .env_remove("LENSERFIGHT_CONFIG")
            .env_remove("LENSERFIGHT_SECRET_KEY")
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("LENSERFIGHT_LOG", "trace");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child =
            cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    }

    /// `run` as `LENSER`, expecting success: its stdout.
    fn ok(&self, args: &[&str], stdin: &str) -> String {
        let out = self.run(args, &[("LENSERFIGHT_LENSER_ID", LENSER)], stdin);
        let (stdout, stderr) = texts(&out);
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(
            !stdout.contains(SECRET) && !stderr.contains(SECRET),
            "the secret is never printed or logged"
        );
        stdout
    }
}

fn texts(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Every byte of the database's files (the database and its journal).
fn database_bytes(data: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(data).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap().to_string_lossy().starts_with("lenserfight.db") {
            all.extend(std::fs::read(&path).unwrap());
        }
    }
    all
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn a_connection_round_trips_and_its_secret_stays_sealed() {
    let home = Home::new();
    let add = [
        "connection",
        "add",
        "--provider",
        "slack",
        "--ref",
        "team-slack",
        "--setting",
        "channel=#ops-marker",
    ];
    assert_eq!(home.ok(&add, &format!("{SECRET}\n")), "saved connection team-slack (slack)\n");
    home.ok(
        &["connection", "add", "--provider", "smtp", "--ref", "mail", "--settings", r#"{"port": 587}"#],
        "pw",
    );

    let list = home.ok(&["connection", "list"], "");
    let rows: Vec<Vec<&str>> = list.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows[0], ["ref", "provider", "created", "settings"]);
    assert_eq!(rows.len(), 3, "{list}");
    assert_eq!((rows[1][0], rows[1][1], rows[1][3]), ("mail", "smtp", r#"{"port":587}"#), "sorted by ref");
    assert_eq!(
        (rows[2][0], rows[2][1], rows[2][3]),
        ("team-slack", "slack", "{\"channel\":\"#ops-marker\"}")
    );
    assert!(rows[1][2].ends_with('Z'), "created, in RFC 3339: {}", rows[1][2]);

    // The key file: made on the first add, private, reused by the second.
    let key_file = home.data().join("secret.key");
    let key = std::fs::read_to_string(&key_file).unwrap();
    assert_eq!(key.trim().len(), 64);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777, 0o600);
    }

    // On disk the settings are there in clear, the secret nowhere.
    let bytes = database_bytes(&home.data());
    assert!(contains(&bytes, "#ops-marker"), "the scan reads the rows");
    assert!(!contains(&bytes, SECRET) && !contains(&bytes, "xoxb-"), "no plaintext secret on disk");
    let sealed = sealed_secret(&home.data().join("lenserfight.db"), "team-slack");
    assert_eq!(sealed.len(), 1 + 8 + 24 + SECRET.len() + 16, "format, key id, nonce, ciphertext, tag");
    assert!(!contains(&sealed, SECRET));

    // Another lenser (the local one here) has none of them.
    let out = home.run(&["connection", "list"], &[], "");
    assert!(out.status.success());
    assert_eq!(texts(&out).0, "ref\tprovider\tcreated\tsettings\n");

    assert_eq!(
        home.ok(&["connection", "remove", "--ref", "team-slack"], ""),
        "removed connection team-slack\n"
    );
    let list = home.ok(&["connection", "list"], "");
    assert_eq!(list.lines().count(), 2, "{list}");
    let out =
        home.run(&["connection", "remove", "--ref", "team-slack"], &[("LENSERFIGHT_LENSER_ID", LENSER)], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(texts(&out).1.contains("No saved connection is named \"team-slack\""), "{}", texts(&out).1);
}

/// The `sealed_secret` column of the connection `r`, read straight from the
/// database file.
fn sealed_secret(db: &Path, r: &str) -> Vec<u8> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let url = format!("sqlite://{}", db.display());
        let db = lf_server::Database::connect(&url).await.unwrap();
        let row: (Vec<u8>,) =
            sqlx::query_as("SELECT sealed_secret FROM connections WHERE connection_ref = ?")
                .bind(r)
                .fetch_one(db.sqlite_pool().unwrap())
                .await
                .unwrap();
        db.close().await;
        row.0
    })
}

#[test]
fn bad_input_is_refused_with_what_to_change() {
    let home = Home::new();
    let as_lenser = [("LENSERFIGHT_LENSER_ID", LENSER)];
    for (args, stdin, says) in [
        (vec!["--provider", "notion", "--ref", "n"], "s", "provider must be one of discord, github, http"),
        (vec!["--provider", "slack", "--ref", "n"], "", "give the connection's secret on standard input"),
        (
            vec!["--provider", "slack", "--ref", "n", "--setting", "password=x"],
            "s",
            "\"password\", a secret field",
        ),
        (vec!["--provider", "slack", "--ref", "n", "--setting", "nokey"], "s", "must be KEY=VALUE"),
    ] {
        let mut full = vec!["connection", "add"];
        full.extend(args);
        let out = home.run(&full, &as_lenser, stdin);
        assert_eq!(out.status.code(), Some(1), "{full:?}");
        assert!(texts(&out).1.contains(says), "{says:?} in {}", texts(&out).1);
    }
    home.ok(&["connection", "add", "--provider", "slack", "--ref", "n"], "s");
    let out = home.run(&["connection", "add", "--provider", "discord", "--ref", "n"], &as_lenser, "t");
    assert_eq!(out.status.code(), Some(1));
    assert!(texts(&out).1.contains("A connection named \"n\" is already saved"), "{}", texts(&out).1);

    // A malformed key stops the command naming the setting, and never
    // repeats the value.
    let out = home.run(&["connection", "list"], &[("LENSERFIGHT_SECRET_KEY", "hunter2-not-a-key")], "");
    assert_eq!(out.status.code(), Some(2));
    let stderr = texts(&out).1;
    assert!(stderr.contains("LENSERFIGHT_SECRET_KEY") && stderr.contains("64 hex digits"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
    let out = home.run(&["connection", "list"], &[("LENSERFIGHT_LENSER_ID", "nope")], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(texts(&out).1.contains("LENSERFIGHT_LENSER_ID"), "{}", texts(&out).1);
}

#[test]
fn a_key_file_others_can_read_is_refused() {
    let home = Home::new();
    home.ok(&["connection", "add", "--provider", "http", "--ref", "api"], "token");
    let key_file = home.data().join("secret.key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let out = home.run(
            &["connection", "add", "--provider", "http", "--ref", "api2"],
            &[("LENSERFIGHT_LENSER_ID", LENSER)],
            "token",
        );
        assert_eq!(out.status.code(), Some(2));
        let stderr = texts(&out).1;
        assert!(stderr.contains(&format!("chmod 600 {}", key_file.display())), "{stderr}");
    }
}
