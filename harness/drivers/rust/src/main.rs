//! The harness's executor for the MongoDB Rust driver: docs/executor-protocol.md, version 1.
//!
//! JSON lines on stdin (requests) and stdout (replies, nothing else); diagnostics on stderr. Requests are
//! handled one at a time on a tokio runtime, in the order they came.
mod ejson;
mod entities;
mod errors;
mod events;
mod ops;
mod stream;
mod vocabulary;

use std::collections::HashMap;
use std::io::{BufRead, Write};

use mongodb::bson::Bson;
use serde_json::{json, Map, Value};

use entities::Scope;
use errors::Failure;

/// The iteration modes of section 6.4.1 this executor drives for real: the `Stream` impl's `next()` (the
/// driver's most common API) and `ChangeStream::next_if_any`.
pub const MODES: [&str; 2] = ["next", "tryNext"];

pub const OPERATIONS: [&str; 27] = [
    "createChangeStream",
    "iterateUntilDocumentOrError",
    "iterateOnce",
    "close",
    "getResumeToken",
    "insertOne",
    "insertMany",
    "updateOne",
    "updateMany",
    "replaceOne",
    "deleteOne",
    "deleteMany",
    "find",
    "aggregate",
    "runCommand",
    "createCollection",
    "dropCollection",
    "drop",
    "rename",
    "createIndex",
    "dropIndex",
    "startTransaction",
    "commitTransaction",
    "abortTransaction",
    "endSession",
    "countDocuments",
    "estimatedDocumentCount",
];

/// A successful reply's BSON part.
pub struct Outcome {
    pub result: Bson,
    pub kind: Option<&'static str>,
    pub entity: Option<String>,
}

impl Outcome {
    pub fn value(result: Bson) -> Self {
        Outcome { result, kind: None, entity: None }
    }
    pub fn null() -> Self {
        Self::value(Bson::Null)
    }
}

enum Reply {
    Plain(Value),
    Bson(Outcome),
}

struct State {
    scopes: HashMap<String, Scope>,
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut lock = stdin.lock();
        loop {
            let mut line = Vec::new();
            match lock.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    runtime.block_on(async move {
        let mut state = State { scopes: HashMap::new() };
        while let Some(line) = rx.recv().await {
            handle_line(&mut state, &line).await;
        }
        // EOF: close every scope, then exit 0.
        let scopes: Vec<Scope> = state.scopes.drain().map(|(_, s)| s).collect();
        for scope in scopes {
            scope.close().await;
        }
    });
    let _ = std::io::stdout().flush();
    std::process::exit(0);
}

async fn handle_line(state: &mut State, line: &[u8]) {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end_matches(['\n', '\r']);
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("cs-rust-executor: ignoring a line that is not JSON ({e}): {:.200}", text);
            return;
        }
    };
    let Value::Object(request) = value else {
        eprintln!("cs-rust-executor: ignoring a line that is not a JSON object: {:.200}", text);
        return;
    };
    let id = match request.get("id") {
        Some(v @ (Value::Number(_) | Value::Object(_))) => ejson::plain_int(v),
        _ => None,
    };
    let Some(id) = id else {
        eprintln!("cs-rust-executor: ignoring a line without an integer id: {:.200}", text);
        return;
    };
    let method = request.get("method").and_then(Value::as_str).unwrap_or("").to_string();
    let reply = match request.get("params") {
        Some(Value::Object(params)) => dispatch(state, &method, params).await,
        None | Some(Value::Null) => dispatch(state, &method, &Map::new()).await,
        Some(_) => Err(Failure::invalid("params must be an object")),
    };
    let line = match reply {
        Ok(Reply::Plain(result)) => json!({"id": id, "ok": true, "result": result}),
        Ok(Reply::Bson(outcome)) => {
            let mut reply = json!({"id": id, "ok": true, "result": ejson::to_json(outcome.result)});
            if let Some(kind) = outcome.kind {
                reply["resultKind"] = json!(kind);
            }
            if let Some(entity) = outcome.entity {
                reply["entity"] = json!(entity);
            }
            reply
        }
        Err(failure) => json!({"id": id, "ok": false, "error": ejson::to_json(Bson::Document(failure.0))}),
    };
    let mut out = serde_json::to_string(&line).unwrap_or_else(|e| {
        json!({"id": id, "ok": false, "error": {"kind": "internal", "message": format!("cannot encode: {e}")}})
            .to_string()
    });
    out.push('\n');
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    let _ = lock.write_all(out.as_bytes());
    let _ = lock.flush();
}

fn param_str<'a>(params: &'a Map<String, Value>, key: &str) -> Result<&'a str, Failure> {
    params.get(key).and_then(Value::as_str).ok_or_else(|| Failure::invalid(format!("params.{key} must be a string")))
}

async fn dispatch(state: &mut State, method: &str, params: &Map<String, Value>) -> Result<Reply, Failure> {
    match method {
        "hello" => Ok(Reply::Plain(hello())),
        "echo" => {
            let value = params.get("value").cloned().unwrap_or(Value::Null);
            let bson = ejson::to_bson(&value).map_err(Failure::invalid)?;
            Ok(Reply::Bson(Outcome::value(bson)))
        }
        "openScope" => {
            let id = param_str(params, "scope")?;
            if state.scopes.contains_key(id) {
                return Err(Failure::invalid(format!("scope {id:?} is already open")));
            }
            let uri = param_str(params, "uri")?.to_string();
            let budget = params.get("iterationTimeoutMS").and_then(ejson::plain_int).unwrap_or(10_000).max(0) as u64;
            let heartbeat = match params.get("heartbeatFrequencyMS") {
                None | Some(Value::Null) => None,
                Some(v) => Some(
                    ejson::plain_int(v)
                        .filter(|n| *n > 0)
                        .ok_or_else(|| Failure::invalid("heartbeatFrequencyMS must be a positive integer or null"))?
                        as u64,
                ),
            };
            let mode = match params.get("iterationMode") {
                None | Some(Value::Null) => MODES[0],
                Some(Value::String(m)) => *MODES
                    .iter()
                    .find(|x| **x == m.as_str())
                    .ok_or_else(|| Failure::invalid(format!("iteration mode {m:?} is not one hello listed")))?,
                Some(other) => return Err(Failure::invalid(format!("iterationMode must be a string, got {other}"))),
            };
            state.scopes.insert(id.to_string(), Scope::new(uri, budget, heartbeat, mode));
            Ok(Reply::Bson(Outcome::null()))
        }
        "closeScope" => {
            let id = param_str(params, "scope")?;
            if let Some(scope) = state.scopes.remove(id) {
                scope.close().await;
            }
            Ok(Reply::Bson(Outcome::null()))
        }
        "createEntity" | "run" | "events" | "sessionLsid" | "connectionsCheckedOut" | "commandLog" | "setEntity" => {
            let id = param_str(params, "scope")?;
            let scope = state
                .scopes
                .get_mut(id)
                .ok_or_else(|| Failure::invalid(format!("unknown scope {id:?}")))?;
            scope_call(scope, method, params).await.map(Reply::Bson)
        }
        other => Err(Failure::not_implemented(format!("method {other:?} is not implemented"))),
    }
}

async fn scope_call(scope: &mut Scope, method: &str, params: &Map<String, Value>) -> Result<Outcome, Failure> {
    match method {
        "createEntity" => {
            let entity = ejson::to_doc(params.get("entity").unwrap_or(&Value::Null)).map_err(Failure::invalid)?;
            scope.create_entity(&entity).await?;
            Ok(Outcome::null())
        }
        "run" => {
            let operation =
                ejson::to_doc(params.get("operation").unwrap_or(&Value::Null)).map_err(Failure::invalid)?;
            let budget = match params.get("budgetMS") {
                None | Some(Value::Null) => None,
                Some(v) => Some(v),
            };
            ops::run(scope, &operation, budget).await
        }
        "events" => {
            let client = param_str(params, "client")?;
            let family = param_str(params, "eventType")?;
            let recorder = scope.recorder(client)?;
            let list = recorder
                .events(family)
                .ok_or_else(|| Failure::invalid(format!("unknown eventType {family:?}")))?;
            Ok(Outcome::value(Bson::Array(list.into_iter().map(Bson::Document).collect())))
        }
        "connectionsCheckedOut" => {
            let client = param_str(params, "client")?;
            Ok(Outcome::value(Bson::Int64(scope.recorder(client)?.connections_checked_out())))
        }
        "sessionLsid" => {
            let session = param_str(params, "session")?;
            Ok(Outcome::value(Bson::Document(scope.session_lsid(session)?)))
        }
        "commandLog" => {
            let from = params
                .get("from")
                .and_then(ejson::plain_int)
                .filter(|n| *n >= 0)
                .ok_or_else(|| Failure::invalid("commandLog needs an integer from >= 0"))? as usize;
            let log = scope.log.lock().unwrap();
            if from > log.len() {
                return Err(Failure::invalid(format!("from {from} is past the log's end ({})", log.len())));
            }
            Ok(Outcome::value(Bson::Array(log[from..].iter().cloned().map(Bson::Document).collect())))
        }
        "setEntity" => {
            let new = param_str(params, "id")?;
            let old = param_str(params, "entity")?;
            scope.rename_entity(old, new)?;
            Ok(Outcome::null())
        }
        _ => unreachable!(),
    }
}

fn hello() -> Value {
    let min_wire: Value = env!("CS_MONGODB_MIN_WIRE").parse::<i64>().map(Value::from).unwrap_or(Value::Null);
    json!({
        "protocolVersion": 1,
        "driver": {"name": "rust", "version": env!("CS_MONGODB_VERSION"), "language": "rust"},
        "capabilities": ["session_lsid", "connections_checked_out", "cmap_events", "sdam_events", "command_log"],
        "operations": OPERATIONS,
        "fastHeartbeatMS": entities::FAST_HEARTBEAT_MS,
        "minWireVersion": min_wire,
        "iterationModes": MODES,
    })
}
