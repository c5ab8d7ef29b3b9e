//! What a client observed: command, CMAP and SDAM events from the driver's own event handlers (section 6.6),
//! the per-client lists the test asked for, the connection count, and the scope's command log (section 6.4.2).
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use mongodb::bson::{doc, Bson, Document};
use mongodb::event::cmap::{CmapEvent, ConnectionCheckoutFailedReason, ConnectionClosedReason};
use mongodb::event::command::CommandEvent;
use mongodb::event::sdam::SdamEvent;
use mongodb::options::ClientOptions;
use mongodb::event::EventHandler;

use crate::errors::error_type_name;

/// The scope's command log: every command event of every client of the scope, in publication order.
pub type CommandLog = Arc<Mutex<Vec<Document>>>;

#[derive(Default)]
struct Lists {
    command: Vec<Document>,
    cmap: Vec<Document>,
    sdam: Vec<Document>,
    /// requestId -> (databaseName, left out of the client's list)
    started: HashMap<i32, (String, bool)>,
}

/// One client's recorder; the driver calls it from its own tasks, so everything is under one lock.
pub struct Recorder {
    pub client_id: String,
    observe: HashSet<String>,
    ignore: HashSet<String>,
    lists: Mutex<Lists>,
    checked_out: Mutex<i64>,
    log: CommandLog,
}

impl Recorder {
    pub fn new(
        client_id: &str,
        observe: HashSet<String>,
        ignore: HashSet<String>,
        log: CommandLog,
    ) -> Arc<Self> {
        Arc::new(Recorder {
            client_id: client_id.to_string(),
            observe,
            ignore,
            lists: Mutex::new(Lists::default()),
            checked_out: Mutex::new(0),
            log,
        })
    }

    /// Installs the three handlers on the client's options.
    pub fn install(self: &Arc<Self>, options: &mut ClientOptions) {
        let me = self.clone();
        options.command_event_handler = Some(EventHandler::callback(move |e| me.command(e)));
        let me = self.clone();
        options.cmap_event_handler = Some(EventHandler::callback(move |e| me.cmap(e)));
        let me = self.clone();
        options.sdam_event_handler = Some(EventHandler::callback(move |e| me.sdam(e)));
    }

    pub fn events(&self, family: &str) -> Option<Vec<Document>> {
        let lists = self.lists.lock().unwrap();
        match family {
            "command" => Some(lists.command.clone()),
            "cmap" => Some(lists.cmap.clone()),
            "sdam" => Some(lists.sdam.clone()),
            _ => None,
        }
    }

    pub fn connections_checked_out(&self) -> i64 {
        *self.checked_out.lock().unwrap()
    }

    fn command(&self, event: CommandEvent) {
        let mut lists = self.lists.lock().unwrap();
        // Sensitive and internal commands are recorded as they are: the harness leaves them out or blanks them
        // (section 7.1). Only the entity's own `ignoreCommandMonitoringEvents` is applied here.
        let (out, leave_out) = match event {
            CommandEvent::Started(e) => {
                let leave_out = self.ignore.contains(&e.command_name);
                lists.started.insert(e.request_id, (e.db.clone(), leave_out));
                let mut d = doc! {
                    "kind": "commandStartedEvent",
                    "commandName": e.command_name.clone(),
                    "databaseName": e.db.clone(),
                    "command": e.command,
                    "requestId": e.request_id,
                };
                connection_fields(&mut d, e.connection.server_id, e.service_id);
                let observed = self.observe.contains("commandStartedEvent");
                (d, leave_out || !observed)
            }
            CommandEvent::Succeeded(e) => {
                let (db, left) = lists.started.get(&e.request_id).cloned().unwrap_or_default();
                let mut d = doc! {"kind": "commandSucceededEvent", "commandName": e.command_name.clone()};
                if !db.is_empty() {
                    d.insert("databaseName", db);
                }
                d.insert("reply", e.reply);
                d.insert("durationMS", e.duration.as_secs_f64() * 1000.0);
                d.insert("requestId", e.request_id);
                connection_fields(&mut d, e.connection.server_id, e.service_id);
                let observed = self.observe.contains("commandSucceededEvent");
                (d, left || !observed)
            }
            CommandEvent::Failed(e) => {
                let (db, left) = lists.started.get(&e.request_id).cloned().unwrap_or_default();
                let mut d = doc! {"kind": "commandFailedEvent", "commandName": e.command_name.clone()};
                if !db.is_empty() {
                    d.insert("databaseName", db);
                }
                d.insert("failure", failure_document(&e.failure));
                d.insert("durationMS", e.duration.as_secs_f64() * 1000.0);
                d.insert("requestId", e.request_id);
                connection_fields(&mut d, e.connection.server_id, e.service_id);
                let observed = self.observe.contains("commandFailedEvent");
                (d, left || !observed)
            }
            _ => return,
        };
        // The scope's log first (under its own lock, taken while this client's lock is held, so one order).
        {
            let mut entry = out.clone();
            entry.insert("client", self.client_id.clone());
            self.log.lock().unwrap().push(entry);
        }
        if !leave_out {
            lists.command.push(out);
        }
    }

    fn cmap(&self, event: CmapEvent) {
        let mut d = Document::new();
        let kind = match &event {
            CmapEvent::PoolCreated(_) => "poolCreatedEvent",
            CmapEvent::PoolReady(_) => "poolReadyEvent",
            CmapEvent::PoolCleared(e) => {
                if let Some(id) = e.service_id {
                    d.insert("serviceId", id);
                }
                "poolClearedEvent"
            }
            CmapEvent::PoolClosed(_) => "poolClosedEvent",
            CmapEvent::ConnectionCreated(_) => "connectionCreatedEvent",
            CmapEvent::ConnectionReady(_) => "connectionReadyEvent",
            CmapEvent::ConnectionClosed(e) => {
                let reason = match e.reason {
                    ConnectionClosedReason::Stale => Some("stale"),
                    ConnectionClosedReason::Idle => Some("idle"),
                    ConnectionClosedReason::Error => Some("error"),
                    ConnectionClosedReason::PoolClosed => Some("poolClosed"),
                    _ => None,
                };
                if let Some(r) = reason {
                    d.insert("reason", r);
                }
                "connectionClosedEvent"
            }
            CmapEvent::ConnectionCheckoutStarted(_) => "connectionCheckOutStartedEvent",
            CmapEvent::ConnectionCheckoutFailed(e) => {
                let reason = match e.reason {
                    ConnectionCheckoutFailedReason::Timeout => Some("timeout"),
                    ConnectionCheckoutFailedReason::ConnectionError => Some("connectionError"),
                    _ => None,
                };
                if let Some(r) = reason {
                    d.insert("reason", r);
                }
                "connectionCheckOutFailedEvent"
            }
            CmapEvent::ConnectionCheckedOut(_) => {
                *self.checked_out.lock().unwrap() += 1;
                "connectionCheckedOutEvent"
            }
            CmapEvent::ConnectionCheckedIn(_) => {
                *self.checked_out.lock().unwrap() -= 1;
                "connectionCheckedInEvent"
            }
            _ => return,
        };
        if self.observe.contains(kind) {
            let mut out = doc! {"kind": kind};
            out.extend(d);
            self.lists.lock().unwrap().cmap.push(out);
        }
    }

    fn sdam(&self, event: SdamEvent) {
        let out = match event {
            SdamEvent::ServerDescriptionChanged(e) => doc! {
                "kind": "serverDescriptionChangedEvent",
                "previousDescription": {"type": server_type(e.previous_description.server_type())},
                "newDescription": {"type": server_type(e.new_description.server_type())},
            },
            SdamEvent::TopologyDescriptionChanged(e) => doc! {
                "kind": "topologyDescriptionChangedEvent",
                "previousDescription": {"type": e.previous_description.topology_type().to_string()},
                "newDescription": {"type": e.new_description.topology_type().to_string()},
            },
            SdamEvent::TopologyOpening(_) => doc! {"kind": "topologyOpeningEvent"},
            SdamEvent::TopologyClosed(_) => doc! {"kind": "topologyClosedEvent"},
            SdamEvent::ServerHeartbeatStarted(e) => {
                doc! {"kind": "serverHeartbeatStartedEvent", "awaited": e.awaited}
            }
            SdamEvent::ServerHeartbeatSucceeded(e) => {
                doc! {"kind": "serverHeartbeatSucceededEvent", "awaited": e.awaited}
            }
            SdamEvent::ServerHeartbeatFailed(e) => {
                doc! {"kind": "serverHeartbeatFailedEvent", "awaited": e.awaited}
            }
            _ => return,
        };
        let kind = out.get_str("kind").unwrap_or_default().to_string();
        if self.observe.contains(&kind) {
            self.lists.lock().unwrap().sdam.push(out);
        }
    }
}

fn connection_fields(d: &mut Document, server_id: Option<i64>, service_id: Option<mongodb::bson::oid::ObjectId>) {
    if let Some(id) = server_id {
        d.insert("serverConnectionId", id);
    }
    if let Some(id) = service_id {
        d.insert("serviceId", id);
    }
}

fn server_type(t: mongodb::ServerType) -> String {
    use mongodb::ServerType::*;
    match t {
        Standalone => "Standalone",
        Mongos => "Mongos",
        RsPrimary => "RSPrimary",
        RsSecondary => "RSSecondary",
        RsArbiter => "RSArbiter",
        RsOther => "RSOther",
        RsGhost => "RSGhost",
        LoadBalancer => "LoadBalancer",
        _ => "Unknown",
    }
    .to_string()
}

/// A failed event's `failure`: the server's reply when the driver kept it, else `{errmsg, errtype}`.
pub fn failure_document(error: &mongodb::error::Error) -> Document {
    if let Some(raw) = error.server_response() {
        if let Ok(d) = Document::try_from(raw.as_ref()) {
            return d;
        }
    }
    if let mongodb::error::ErrorKind::Command(c) = error.kind.as_ref() {
        let mut d = doc! {"ok": 0.0, "errmsg": c.message.clone(), "code": c.code};
        if !c.code_name.is_empty() {
            d.insert("codeName", c.code_name.clone());
        }
        return d;
    }
    doc! {"errmsg": error.kind.to_string(), "errtype": error_type_name(error)}
}

#[allow(dead_code)]
pub fn as_bson_list(list: Vec<Document>) -> Bson {
    Bson::Array(list.into_iter().map(Bson::Document).collect())
}
