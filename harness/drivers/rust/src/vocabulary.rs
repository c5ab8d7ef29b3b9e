//! The harness's shared vocabulary (docs/executor-protocol.md section 12), compiled in: `build.rs` finds
//! `vocabulary.json` (copied next to Cargo.toml by the harness's build, else `harness/core/`) and the build
//! cache is keyed by it, so a changed vocabulary rebuilds the executor.
use std::collections::HashSet;
use std::sync::OnceLock;

const VOCABULARY: &str = include_str!(env!("CS_VOCABULARY"));

fn parsed() -> &'static serde_json::Value {
    static PARSED: OnceLock<serde_json::Value> = OnceLock::new();
    PARSED.get_or_init(|| serde_json::from_str(VOCABULARY).expect("vocabulary.json is JSON"))
}

/// Every event name the unified format defines (command, CMAP and SDAM families): what `observeEvents` may name.
pub fn event_names() -> HashSet<&'static str> {
    let families = parsed()["events"].as_object().expect("vocabulary: events");
    families
        .values()
        .flat_map(|names| names.as_array().expect("vocabulary: an event family is a list"))
        .filter_map(|name| name.as_str())
        .collect()
}
