//! Scopes and their entities (sections 5 and 6.1): clients, databases, collections, sessions, streams.
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mongodb::bson::{Bson, Document};
use mongodb::options::{
    Acknowledgment, ClientOptions, CollectionOptions, DatabaseOptions, ReadConcern, ReadPreference,
    SelectionCriteria, ServerApi, ServerApiVersion, SessionOptions, TransactionOptions, WriteConcern,
};
use mongodb::{Client, ClientSession, Collection, Database};

use crate::ejson::bson_int;
use crate::errors::Failure;
use crate::events::{CommandLog, Recorder};
use crate::stream::StreamEnt;

/// The driver refuses a heartbeat frequency below 500 ms (`MIN_HEARTBEAT_FREQUENCY`), its floor too.
pub const FAST_HEARTBEAT_MS: u64 = 500;

pub struct ClientEnt {
    pub client: Client,
    pub recorder: Arc<Recorder>,
}

pub struct SessionEnt {
    pub session: Option<ClientSession>,
    pub lsid: Document,
}

pub enum Entity {
    Client(ClientEnt),
    Database { db: Database, client: String },
    Collection { coll: Collection<Document>, client: String },
    Session(SessionEnt),
    Stream(StreamEnt),
}

impl Entity {
    fn kind(&self) -> &'static str {
        match self {
            Entity::Client(_) => "client",
            Entity::Database { .. } => "database",
            Entity::Collection { .. } => "collection",
            Entity::Session(_) => "session",
            Entity::Stream(_) => "change stream",
        }
    }
}

pub struct Scope {
    pub uri: String,
    pub budget_ms: u64,
    pub heartbeat_ms: Option<u64>,
    pub mode: &'static str,
    pub log: CommandLog,
    pub entities: HashMap<String, Entity>,
    /// Entities in creation order, closed in reverse.
    order: Vec<String>,
    counter: u64,
}

impl Scope {
    pub fn new(uri: String, budget_ms: u64, heartbeat_ms: Option<u64>, mode: &'static str) -> Self {
        Scope {
            uri,
            budget_ms,
            heartbeat_ms,
            mode,
            log: Arc::new(Mutex::new(Vec::new())),
            entities: HashMap::new(),
            order: Vec::new(),
            counter: 0,
        }
    }

    pub fn insert(&mut self, id: &str, entity: Entity) -> Result<(), Failure> {
        if self.entities.contains_key(id) {
            return Err(Failure::invalid(format!("entity id {id:?} is taken")));
        }
        self.entities.insert(id.to_string(), entity);
        self.order.push(id.to_string());
        Ok(())
    }

    /// A name of the executor's own for a driver object returned without `saveResultAsEntity`.
    pub fn fresh_name(&mut self) -> String {
        self.counter += 1;
        format!("$result{}", self.counter)
    }

    pub fn rename_entity(&mut self, old: &str, new: &str) -> Result<(), Failure> {
        if self.entities.contains_key(new) {
            return Err(Failure::invalid(format!("entity id {new:?} is taken")));
        }
        let entity = self.entities.remove(old).ok_or_else(|| Failure::invalid(format!("unknown entity {old:?}")))?;
        self.entities.insert(new.to_string(), entity);
        for name in self.order.iter_mut() {
            if name == old {
                *name = new.to_string();
            }
        }
        Ok(())
    }

    pub fn get(&self, id: &str) -> Result<&Entity, Failure> {
        self.entities.get(id).ok_or_else(|| Failure::invalid(format!("unknown entity {id:?}")))
    }

    pub fn recorder(&self, id: &str) -> Result<Arc<Recorder>, Failure> {
        match self.get(id)? {
            Entity::Client(c) => Ok(c.recorder.clone()),
            other => Err(Failure::invalid(format!("entity {id:?} is a {}, not a client", other.kind()))),
        }
    }

    pub fn client(&self, id: &str) -> Result<Client, Failure> {
        match self.get(id)? {
            Entity::Client(c) => Ok(c.client.clone()),
            other => Err(Failure::invalid(format!("entity {id:?} is a {}, not a client", other.kind()))),
        }
    }

    pub fn session_lsid(&self, id: &str) -> Result<Document, Failure> {
        match self.get(id)? {
            Entity::Session(s) => Ok(s.lsid.clone()),
            other => Err(Failure::invalid(format!("entity {id:?} is a {}, not a session", other.kind()))),
        }
    }

    /// Takes a session out of its entity for one operation; [`Scope::put_session`] gives it back.
    pub fn take_session(&mut self, id: &str) -> Result<ClientSession, Failure> {
        match self.entities.get_mut(id) {
            Some(Entity::Session(s)) => s
                .session
                .take()
                .ok_or_else(|| Failure::invalid(format!("session {id:?} has ended or is in use"))),
            Some(other) => Err(Failure::invalid(format!("entity {id:?} is a {}, not a session", other.kind()))),
            None => Err(Failure::invalid(format!("unknown entity {id:?}"))),
        }
    }

    pub fn put_session(&mut self, id: &str, session: ClientSession) {
        if let Some(Entity::Session(s)) = self.entities.get_mut(id) {
            s.session = Some(session);
        }
    }

    pub async fn create_entity(&mut self, entity: &Document) -> Result<(), Failure> {
        if entity.len() != 1 {
            return Err(Failure::invalid("an entity is a document with one key"));
        }
        let (kind, spec) = entity.iter().next().unwrap();
        let spec = spec.as_document().ok_or_else(|| Failure::invalid(format!("{kind} must be a document")))?;
        let id = spec.get_str("id").map_err(|_| Failure::invalid(format!("{kind} needs an id")))?.to_string();
        let made = match kind.as_str() {
            "client" => self.create_client(&id, spec).await?,
            "database" => {
                check_keys(spec, &["id", "client", "databaseName", "databaseOptions"], "database")?;
                let client_id = spec.get_str("client").map_err(|_| Failure::invalid("database needs a client"))?;
                let client = self.client(client_id)?;
                let name = spec.get_str("databaseName").map_err(|_| Failure::invalid("databaseName"))?;
                let options = match spec.get_document("databaseOptions") {
                    Ok(o) => {
                        let (rc, wc, rp) = concerns(o, "databaseOptions")?;
                        let mut d = DatabaseOptions::default();
                        d.read_concern = rc;
                        d.write_concern = wc;
                        d.selection_criteria = rp;
                        Some(d)
                    }
                    Err(_) => None,
                };
                let db = match options {
                    Some(o) => client.database_with_options(name, o),
                    None => client.database(name),
                };
                Entity::Database { db, client: client_id.to_string() }
            }
            "collection" => {
                check_keys(spec, &["id", "database", "collectionName", "collectionOptions"], "collection")?;
                let db_id = spec.get_str("database").map_err(|_| Failure::invalid("collection needs a database"))?;
                let (db, client) = match self.get(db_id)? {
                    Entity::Database { db, client } => (db.clone(), client.clone()),
                    other => return Err(Failure::invalid(format!("{db_id:?} is a {}", other.kind()))),
                };
                let name = spec.get_str("collectionName").map_err(|_| Failure::invalid("collectionName"))?;
                let coll = match spec.get_document("collectionOptions") {
                    Ok(o) => {
                        let (rc, wc, rp) = concerns(o, "collectionOptions")?;
                        let mut c = CollectionOptions::default();
                        c.read_concern = rc;
                        c.write_concern = wc;
                        c.selection_criteria = rp;
                        db.collection_with_options(name, c)
                    }
                    Err(_) => db.collection(name),
                };
                Entity::Collection { coll, client }
            }
            "session" => {
                check_keys(spec, &["id", "client", "sessionOptions"], "session")?;
                let client_id = spec.get_str("client").map_err(|_| Failure::invalid("session needs a client"))?;
                let client = self.client(client_id)?;
                let mut options = SessionOptions::default();
                if let Ok(o) = spec.get_document("sessionOptions") {
                    for (key, value) in o {
                        match key.as_str() {
                            "causalConsistency" => options.causal_consistency = value.as_bool(),
                            "snapshot" => options.snapshot = value.as_bool(),
                            "defaultTransactionOptions" => {
                                let d = value.as_document().ok_or_else(|| Failure::invalid("defaultTransactionOptions"))?;
                                options.default_transaction_options = Some(transaction_options(d)?);
                            }
                            other => return Err(Failure::not_implemented(format!("sessionOptions.{other}"))),
                        }
                    }
                }
                let session = client.start_session().with_options(options).await?;
                let lsid = session.id().clone();
                Entity::Session(SessionEnt { session: Some(session), lsid })
            }
            other => return Err(Failure::not_implemented(format!("entity type {other:?}"))),
        };
        self.insert(&id, made)
    }

    async fn create_client(&mut self, id: &str, spec: &Document) -> Result<Entity, Failure> {
        let allowed = [
            "id",
            "uriOptions",
            "useMultipleMongoses",
            "observeEvents",
            "ignoreCommandMonitoringEvents",
            "observeSensitiveCommands",
            "serverApi",
        ];
        check_keys(spec, &allowed, "client")?;
        let uri_options = spec.get_document("uriOptions").ok().cloned().unwrap_or_default();
        let uri = merge_uri(&self.uri, &uri_options)?;
        let mut options = ClientOptions::parse(&uri).await?;
        if spec.get_bool("useMultipleMongoses") == Ok(false) {
            options.hosts.truncate(1);
        }
        let sets_heartbeat = uri_options.keys().any(|k| k.eq_ignore_ascii_case("heartbeatFrequencyMS"));
        if let (Some(ms), false) = (self.heartbeat_ms, sets_heartbeat) {
            options.heartbeat_freq = Some(Duration::from_millis(ms));
        }
        if let Ok(api) = spec.get_document("serverApi") {
            let version = match api.get_str("version") {
                Ok("1") => ServerApiVersion::V1,
                _ => return Err(Failure::not_implemented(format!("serverApi {api}"))),
            };
            let mut server_api = ServerApi::builder().version(version).build();
            for (key, value) in api {
                match key.as_str() {
                    "version" => {}
                    "strict" => server_api.strict = value.as_bool(),
                    "deprecationErrors" => server_api.deprecation_errors = value.as_bool(),
                    other => return Err(Failure::not_implemented(format!("serverApi.{other}"))),
                }
            }
            options.server_api = Some(server_api);
        }
        let names = |key: &str| -> HashSet<String> {
            spec.get_array(key)
                .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
                .unwrap_or_default()
        };
        let observe = names("observeEvents");
        let known = crate::vocabulary::event_names();
        if let Some(unknown) = observe.iter().find(|n| !known.contains(n.as_str())) {
            return Err(Failure::not_implemented(format!("observeEvents: {unknown}")));
        }
        let recorder = Recorder::new(
            id,
            observe,
            names("ignoreCommandMonitoringEvents"),
            self.log.clone(),
        );
        recorder.install(&mut options);
        let client = Client::with_options(options)?;
        Ok(Entity::Client(ClientEnt { client, recorder }))
    }

    /// Section 5's `closeScope`: streams first, then sessions, then clients; nothing is reported.
    pub async fn close(mut self) {
        let order: Vec<String> = self.order.drain(..).rev().collect();
        let mut clients = Vec::new();
        for id in order {
            match self.entities.remove(&id) {
                Some(Entity::Stream(s)) => drop(s),
                Some(Entity::Session(s)) => drop(s),
                Some(Entity::Client(c)) => clients.push(c.client),
                _ => {}
            }
        }
        self.entities.clear();
        for client in clients {
            let _ = tokio::time::timeout(Duration::from_secs(2), client.shutdown()).await;
        }
    }
}

fn check_keys(spec: &Document, allowed: &[&str], what: &str) -> Result<(), Failure> {
    match spec.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(Failure::not_implemented(format!("{what} option {k:?}"))),
        None => Ok(()),
    }
}

/// The scope's URI with `uriOptions` merged in (an option given there wins), for the driver's own parser.
fn merge_uri(uri: &str, options: &Document) -> Result<String, Failure> {
    if options.is_empty() {
        return Ok(uri.to_string());
    }
    let (base, query) = match uri.split_once('?') {
        Some((b, q)) => (b.to_string(), q.to_string()),
        None => (uri.to_string(), String::new()),
    };
    let scheme_end = base.find("://").map(|i| i + 3).unwrap_or(0);
    let base = if base[scheme_end..].contains('/') { base } else { format!("{base}/") };
    let mut pairs: Vec<String> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .filter(|p| {
            let key = p.split('=').next().unwrap_or("");
            !options.keys().any(|k| k.eq_ignore_ascii_case(key))
        })
        .map(String::from)
        .collect();
    for (key, value) in options {
        let text = match value {
            Bson::Boolean(b) => b.to_string(),
            Bson::String(s) => s.clone(),
            Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) => match bson_int(value) {
                Some(i) => i.to_string(),
                None => value.as_f64().map(|f| f.to_string()).unwrap_or_default(),
            },
            other => return Err(Failure::not_implemented(format!("uriOptions.{key} = {other}"))),
        };
        pairs.push(format!("{}={}", encode(key), encode(&text)));
    }
    Ok(format!("{base}?{}", pairs.join("&")))
}

fn encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~:,".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub fn read_concern(d: &Document) -> Result<ReadConcern, Failure> {
    let level = d.get_str("level").map_err(|_| Failure::not_implemented(format!("readConcern {d}")))?;
    Ok(match level {
        "local" => ReadConcern::local(),
        "majority" => ReadConcern::majority(),
        "linearizable" => ReadConcern::linearizable(),
        "available" => ReadConcern::available(),
        "snapshot" => ReadConcern::snapshot(),
        other => ReadConcern::custom(other),
    })
}

pub fn write_concern(d: &Document) -> Result<WriteConcern, Failure> {
    let mut wc = WriteConcern::default();
    for (key, value) in d {
        match key.as_str() {
            "w" => {
                wc.w = Some(match value {
                    Bson::String(s) if s == "majority" => Acknowledgment::Majority,
                    Bson::String(s) => Acknowledgment::Custom(s.clone()),
                    v => Acknowledgment::Nodes(bson_int(v).ok_or_else(|| Failure::invalid("writeConcern.w"))? as u32),
                })
            }
            "journal" | "j" => wc.journal = value.as_bool(),
            "wtimeoutMS" | "wtimeout" => {
                wc.w_timeout = bson_int(value).map(|ms| Duration::from_millis(ms as u64));
            }
            other => return Err(Failure::not_implemented(format!("writeConcern.{other}"))),
        }
    }
    Ok(wc)
}

pub fn read_preference(d: &Document) -> Result<SelectionCriteria, Failure> {
    if d.keys().any(|k| k != "mode") {
        return Err(Failure::not_implemented(format!("readPreference {d}")));
    }
    let pref = match d.get_str("mode").unwrap_or("") {
        "primary" => ReadPreference::Primary,
        "primaryPreferred" => ReadPreference::PrimaryPreferred { options: None },
        "secondary" => ReadPreference::Secondary { options: None },
        "secondaryPreferred" => ReadPreference::SecondaryPreferred { options: None },
        "nearest" => ReadPreference::Nearest { options: None },
        other => return Err(Failure::not_implemented(format!("readPreference mode {other:?}"))),
    };
    Ok(SelectionCriteria::ReadPreference(pref))
}

type Concerns = (Option<ReadConcern>, Option<WriteConcern>, Option<SelectionCriteria>);

fn concerns(d: &Document, what: &str) -> Result<Concerns, Failure> {
    let mut out: Concerns = (None, None, None);
    for (key, value) in d {
        let doc = value.as_document().ok_or_else(|| Failure::invalid(format!("{what}.{key} must be a document")));
        match key.as_str() {
            "readConcern" => out.0 = Some(read_concern(doc?)?),
            "writeConcern" => out.1 = Some(write_concern(doc?)?),
            "readPreference" => out.2 = Some(read_preference(doc?)?),
            other => return Err(Failure::not_implemented(format!("{what}.{other}"))),
        }
    }
    Ok(out)
}

pub fn transaction_options(d: &Document) -> Result<TransactionOptions, Failure> {
    let mut options = TransactionOptions::default();
    for (key, value) in d {
        let doc = || value.as_document().ok_or_else(|| Failure::invalid(format!("{key} must be a document")));
        match key.as_str() {
            "readConcern" => options.read_concern = Some(read_concern(doc()?)?),
            "writeConcern" => options.write_concern = Some(write_concern(doc()?)?),
            "readPreference" => options.selection_criteria = Some(read_preference(doc()?)?),
            "maxCommitTimeMS" => {
                options.max_commit_time = bson_int(value).map(|ms| Duration::from_millis(ms as u64));
            }
            other => return Err(Failure::not_implemented(format!("transaction option {other}"))),
        }
    }
    Ok(options)
}
