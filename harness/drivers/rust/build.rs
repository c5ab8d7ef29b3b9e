//! Embeds the release of the `mongodb` crate this build links (read from Cargo.lock, which `--locked` builds
//! honour), so `hello`'s `driver.version` names the driver actually compiled in (protocol section 11).
use std::{env, fs, path::Path};

fn main() {
    let dir = env::var("CARGO_MANIFEST_DIR").unwrap();
    let lock = Path::new(&dir).join("Cargo.lock");
    println!("cargo:rerun-if-changed=Cargo.lock");
    // The shared vocabulary: beside Cargo.toml in the harness's build copy, else where the repository keeps it.
    let copied = Path::new(&dir).join("vocabulary.json");
    let vocabulary = if copied.is_file() { copied } else { Path::new(&dir).join("../../core/vocabulary.json") };
    println!("cargo:rerun-if-changed={}", vocabulary.display());
    println!("cargo:rustc-env=CS_VOCABULARY={}", vocabulary.canonicalize().unwrap_or(vocabulary).display());
    let text = fs::read_to_string(&lock).unwrap_or_default();
    let mut version = String::from("unknown");
    let mut in_mongodb = false;
    for line in text.lines() {
        let line = line.trim();
        if line == "[[package]]" {
            in_mongodb = false;
        } else if line == "name = \"mongodb\"" {
            in_mongodb = true;
        } else if in_mongodb && line.starts_with("version = ") {
            version = line.trim_start_matches("version = ").trim_matches('"').to_string();
            break;
        }
    }
    println!("cargo:rustc-env=CS_MONGODB_VERSION={version}");
    println!("cargo:rustc-env=CS_MONGODB_MIN_WIRE={}", min_wire_version(&version).unwrap_or_default());
}

/// The driver's own `DRIVER_MIN_WIRE_VERSION` (a private constant), read from the crate's source that cargo
/// compiles; empty when it cannot be found (`hello` then says null).
fn min_wire_version(version: &str) -> Option<String> {
    let home = env::var("CARGO_HOME")
        .ok()
        .or_else(|| env::var("HOME").ok().map(|h| format!("{h}/.cargo")))?;
    for registry in fs::read_dir(Path::new(&home).join("registry/src")).ok()?.flatten() {
        let file = registry.path().join(format!("mongodb-{version}/src/sdam/description/server.rs"));
        if let Ok(text) = fs::read_to_string(&file) {
            for line in text.lines() {
                if let Some(rest) = line.trim().strip_prefix("const DRIVER_MIN_WIRE_VERSION: i32 = ") {
                    return Some(rest.trim_end_matches(';').trim().to_string());
                }
            }
        }
    }
    None
}
