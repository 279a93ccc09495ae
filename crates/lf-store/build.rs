//! The migrations are compiled in (`sqlx::migrate!`): a new file in
//! `migrations/` must rebuild the crate.

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
