//! `run` (section 6.2): one unified-format operation on one entity, through the driver's API.
use std::time::Duration;

use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document, Timestamp};
use mongodb::change_stream::event::ResumeToken;
use mongodb::options::{
    ChangeStreamPreAndPostImages, Collation, FullDocumentBeforeChangeType, FullDocumentType, IndexOptions,
    UpdateModifications,
};
use mongodb::{ClientSession, IndexModel};
use serde_json::Value;

use crate::ejson::{bson_int, plain_int};
use crate::entities::{Entity, Scope};
use crate::errors::Failure;
use crate::stream::{self, Inner, StreamEnt};
use crate::Outcome;

/// An operation's arguments, taken one by one; what is left at the end was not understood.
struct Args {
    op: String,
    map: Document,
}

impl Args {
    fn take(&mut self, key: &str) -> Option<Bson> {
        self.map.remove(key)
    }
    fn doc(&mut self, key: &str) -> Result<Option<Document>, Failure> {
        match self.take(key) {
            None => Ok(None),
            Some(Bson::Document(d)) => Ok(Some(d)),
            Some(other) => Err(Failure::invalid(format!("{}: {key} must be a document, got {other}", self.op))),
        }
    }
    fn need_doc(&mut self, key: &str) -> Result<Document, Failure> {
        self.doc(key)?.ok_or_else(|| Failure::invalid(format!("{} needs {key}", self.op)))
    }
    fn docs(&mut self, key: &str) -> Result<Option<Vec<Document>>, Failure> {
        match self.take(key) {
            None => Ok(None),
            Some(Bson::Array(a)) => a
                .into_iter()
                .map(|v| match v {
                    Bson::Document(d) => Ok(d),
                    other => Err(Failure::invalid(format!("{}: {key} holds {other}", self.op))),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(Failure::invalid(format!("{}: {key} must be an array, got {other}", self.op))),
        }
    }
    fn int(&mut self, key: &str) -> Result<Option<i64>, Failure> {
        match self.take(key) {
            None => Ok(None),
            Some(v) => bson_int(&v)
                .map(Some)
                .ok_or_else(|| Failure::invalid(format!("{}: {key} must be a number, got {v}", self.op))),
        }
    }
    fn boolean(&mut self, key: &str) -> Result<Option<bool>, Failure> {
        match self.take(key) {
            None => Ok(None),
            Some(Bson::Boolean(b)) => Ok(Some(b)),
            Some(other) => Err(Failure::invalid(format!("{}: {key} must be a boolean, got {other}", self.op))),
        }
    }
    fn string(&mut self, key: &str) -> Result<Option<String>, Failure> {
        match self.take(key) {
            None => Ok(None),
            Some(Bson::String(s)) => Ok(Some(s)),
            Some(other) => Err(Failure::invalid(format!("{}: {key} must be a string, got {other}", self.op))),
        }
    }
    fn need_string(&mut self, key: &str) -> Result<String, Failure> {
        self.string(key)?.ok_or_else(|| Failure::invalid(format!("{} needs {key}", self.op)))
    }
    /// Section 6.2: an argument this executor cannot hand to its driver is refused before anything is sent.
    fn done(&self) -> Result<(), Failure> {
        match self.map.keys().next() {
            Some(k) => Err(Failure::not_implemented(format!("operation {:?}: argument {k:?} is not supported", self.op))),
            None => Ok(()),
        }
    }
}

macro_rules! with_session {
    ($action:expr, $session:expr) => {
        match $session.as_mut() {
            Some(s) => $action.session(&mut *s).await,
            None => $action.await,
        }
    };
}

pub async fn run(scope: &mut Scope, operation: &Document, budget: Option<&Value>) -> Result<Outcome, Failure> {
    let name = operation.get_str("name").map_err(|_| Failure::invalid("operation.name must be a string"))?.to_string();
    let object = operation.get_str("object").map_err(|_| Failure::invalid("operation.object must be a string"))?;
    let object = object.to_string();
    let save_as = operation.get_str("saveResultAsEntity").ok().map(String::from);
    let arguments = match operation.get("arguments") {
        None | Some(Bson::Null) => Document::new(),
        Some(Bson::Document(d)) => d.clone(),
        Some(other) => return Err(Failure::invalid(format!("arguments must be a document, got {other}"))),
    };
    if !crate::OPERATIONS.contains(&name.as_str()) {
        return Err(Failure::not_implemented(format!("operation {name:?} is not implemented")));
    }
    let mut args = Args { op: name.clone(), map: arguments };
    let is_stream = matches!(scope.entities.get(&object), Some(Entity::Stream(_)));
    if is_stream {
        args.done()?;
        let value = match name.as_str() {
            "iterateUntilDocumentOrError" => {
                let budget_ms = match budget {
                    None => scope.budget_ms,
                    Some(v) => match plain_int(v) {
                        Some(n) if n > 0 => n as u64,
                        _ => return Err(Failure::invalid(format!("budgetMS must be a positive integer, got {v}"))),
                    },
                };
                stream::iterate_until(scope, &object, budget_ms).await?
            }
            "iterateOnce" => stream::iterate_once(scope, &object).await?,
            "close" => stream::close(scope, &object).await?,
            "getResumeToken" => stream::resume_token(scope, &object).await?,
            other => return Err(Failure::not_implemented(format!("operation {other:?} on a change stream"))),
        };
        return Ok(Outcome::value(value));
    }
    let entity_kind = match scope.get(&object)? {
        Entity::Client(_) => "client",
        Entity::Database { .. } => "database",
        Entity::Collection { .. } => "collection",
        Entity::Session(_) => "session",
        Entity::Stream(_) => unreachable!(),
    };
    if entity_kind == "session" {
        return session_op(scope, &object, &name, args).await;
    }
    // The session argument: taken out of its entity for the operation, given back after.
    let session_id = args.string("session")?;
    let mut session: Option<ClientSession> = match &session_id {
        Some(id) => Some(scope.take_session(id)?),
        None => None,
    };
    let outcome = entity_op(scope, &object, entity_kind, &name, &mut args, &mut session, session_id.clone()).await;
    if let (Some(id), Some(s)) = (&session_id, session) {
        scope.put_session(id, s);
    }
    let outcome = outcome?;
    if let Some(id) = save_as {
        match outcome {
            Produced::Stream(s) => {
                scope.insert(&id, Entity::Stream(s))?;
                return Ok(Outcome { result: Bson::Null, kind: Some("entity"), entity: Some(id) });
            }
            Produced::Data(o) => return Ok(o), // data: the harness keeps its own copy
        }
    }
    match outcome {
        Produced::Stream(s) => {
            let id = scope.fresh_name();
            scope.insert(&id, Entity::Stream(s))?;
            Ok(Outcome { result: Bson::Null, kind: Some("entity"), entity: Some(id) })
        }
        Produced::Data(o) => Ok(o),
    }
}

enum Produced {
    Data(Outcome),
    Stream(StreamEnt),
}

fn data(value: Bson) -> Result<Produced, Failure> {
    Ok(Produced::Data(Outcome::value(value)))
}

fn documents(list: Vec<Document>) -> Result<Produced, Failure> {
    Ok(Produced::Data(Outcome {
        result: Bson::Array(list.into_iter().map(Bson::Document).collect()),
        kind: Some("documents"),
        entity: None,
    }))
}

/// `aggregate`'s arguments on a collection or a database: the pipeline and the batch size (a session is refused).
fn aggregate_args(args: &mut Args, with_session: bool) -> Result<(Vec<Document>, Option<i64>), Failure> {
    let pipeline = args.docs("pipeline")?.unwrap_or_default();
    let batch_size = args.int("batchSize")?;
    args.done()?;
    if with_session {
        return Err(Failure::not_implemented("aggregate with a session"));
    }
    Ok((pipeline, batch_size))
}

#[allow(clippy::too_many_arguments)]
async fn entity_op(
    scope: &mut Scope,
    object: &str,
    kind: &str,
    name: &str,
    args: &mut Args,
    session: &mut Option<ClientSession>,
    session_id: Option<String>,
) -> Result<Produced, Failure> {
    if name == "createChangeStream" {
        return create_change_stream(scope, object, args, session, session_id).await;
    }
    match (kind, scope.get(object)?) {
        ("collection", Entity::Collection { coll, .. }) => {
            let coll = coll.clone();
            collection_op(&coll, name, args, session).await
        }
        ("database", Entity::Database { db, .. }) => {
            let db = db.clone();
            database_op(&db, name, args, session).await
        }
        _ => Err(Failure::not_implemented(format!("operation {name:?} on a {kind}"))),
    }
}

fn update_modifications(value: Option<Bson>, op: &str) -> Result<UpdateModifications, Failure> {
    match value {
        Some(Bson::Document(d)) => Ok(UpdateModifications::Document(d)),
        Some(Bson::Array(a)) => Ok(UpdateModifications::Pipeline(
            a.into_iter()
                .map(|v| v.as_document().cloned().ok_or_else(|| Failure::invalid("update pipeline stage")))
                .collect::<Result<Vec<_>, _>>()?,
        )),
        _ => Err(Failure::invalid(format!("{op} needs update"))),
    }
}

async fn collection_op(
    coll: &mongodb::Collection<Document>,
    name: &str,
    args: &mut Args,
    session: &mut Option<ClientSession>,
) -> Result<Produced, Failure> {
    match name {
        "insertOne" => {
            let document = args.need_doc("document")?;
            args.done()?;
            let r = with_session!(coll.insert_one(document), session)?;
            data(Bson::Document(doc! {"insertedId": r.inserted_id}))
        }
        "insertMany" => {
            let documents = args.docs("documents")?.ok_or_else(|| Failure::invalid("insertMany needs documents"))?;
            let ordered = args.boolean("ordered")?;
            args.done()?;
            let action = coll.insert_many(documents);
            let action = match ordered {
                Some(o) => action.ordered(o),
                None => action,
            };
            let r = with_session!(action, session)?;
            let mut ids: Vec<(usize, Bson)> = r.inserted_ids.into_iter().collect();
            ids.sort_by_key(|(i, _)| *i);
            let mut inserted = Document::new();
            for (i, id) in ids {
                inserted.insert(i.to_string(), id);
            }
            data(Bson::Document(doc! {"insertedIds": inserted}))
        }
        "updateOne" | "updateMany" | "replaceOne" => {
            let filter = args.need_doc("filter")?;
            let upsert = args.boolean("upsert")?;
            let r = if name == "replaceOne" {
                let replacement = args.need_doc("replacement")?;
                args.done()?;
                let action = coll.replace_one(filter, replacement);
                let action = match upsert {
                    Some(u) => action.upsert(u),
                    None => action,
                };
                with_session!(action, session)?
            } else {
                let update = update_modifications(args.take("update"), name)?;
                args.done()?;
                let action =
                    if name == "updateOne" { coll.update_one(filter, update) } else { coll.update_many(filter, update) };
                let action = match upsert {
                    Some(u) => action.upsert(u),
                    None => action,
                };
                with_session!(action, session)?
            };
            let mut out = doc! {
                "matchedCount": r.matched_count as i64,
                "modifiedCount": r.modified_count as i64,
                "upsertedCount": if r.upserted_id.is_some() { 1i64 } else { 0i64 },
            };
            if let Some(id) = r.upserted_id {
                out.insert("upsertedId", id);
            }
            data(Bson::Document(out))
        }
        "deleteOne" | "deleteMany" => {
            let filter = args.need_doc("filter")?;
            args.done()?;
            let r = if name == "deleteOne" {
                with_session!(coll.delete_one(filter), session)?
            } else {
                with_session!(coll.delete_many(filter), session)?
            };
            data(Bson::Document(doc! {"deletedCount": r.deleted_count as i64}))
        }
        "countDocuments" => {
            let filter = args.need_doc("filter")?;
            args.done()?;
            let n = with_session!(coll.count_documents(filter), session)?;
            data(Bson::Int64(n as i64))
        }
        "estimatedDocumentCount" => {
            args.done()?;
            if session.is_some() {
                return Err(Failure::not_implemented("estimatedDocumentCount with a session"));
            }
            data(Bson::Int64(coll.estimated_document_count().await? as i64))
        }
        "find" => {
            let filter = args.doc("filter")?.unwrap_or_default();
            let batch_size = args.int("batchSize")?;
            let limit = args.int("limit")?;
            let skip = args.int("skip")?;
            let sort = args.doc("sort")?;
            let projection = args.doc("projection")?;
            let comment = args.take("comment");
            args.done()?;
            if session.is_some() {
                return Err(Failure::not_implemented("find with a session"));
            }
            let mut action = coll.find(filter);
            if let Some(n) = batch_size {
                action = action.batch_size(n as u32);
            }
            if let Some(n) = limit {
                action = action.limit(n);
            }
            if let Some(n) = skip {
                action = action.skip(n as u64);
            }
            if let Some(s) = sort {
                action = action.sort(s);
            }
            if let Some(p) = projection {
                action = action.projection(p);
            }
            if let Some(c) = comment {
                action = action.comment(c);
            }
            let cursor = action.await?;
            documents(cursor.try_collect().await?)
        }
        "aggregate" => {
            let (pipeline, batch_size) = aggregate_args(args, session.is_some())?;
            let mut action = coll.aggregate(pipeline);
            if let Some(n) = batch_size {
                action = action.batch_size(n as u32);
            }
            documents(action.await?.try_collect().await?)
        }
        "createIndex" => {
            let keys = args.need_doc("keys")?;
            let index_name = args.string("name")?;
            let unique = args.boolean("unique")?;
            args.done()?;
            let mut options = IndexOptions::default();
            options.name = index_name;
            options.unique = unique;
            let model = IndexModel::builder().keys(keys).options(options).build();
            let r = with_session!(coll.create_index(model), session)?;
            data(Bson::String(r.index_name))
        }
        "dropIndex" => {
            let index_name = args.need_string("name")?;
            args.done()?;
            with_session!(coll.drop_index(index_name), session)?;
            data(Bson::Null)
        }
        "drop" => {
            args.done()?;
            with_session!(coll.drop(), session)?;
            data(Bson::Null)
        }
        "rename" => {
            // The driver has no rename API: its own unified runner sends renameCollection to admin.
            let to = args.need_string("to")?;
            let drop_target = args.boolean("dropTarget")?;
            args.done()?;
            let ns = coll.namespace();
            let mut command = doc! {"renameCollection": ns.to_string(), "to": format!("{}.{}", ns.db, to)};
            if let Some(d) = drop_target {
                command.insert("dropTarget", d);
            }
            let admin = coll.client().database("admin");
            with_session!(admin.run_command(command), session)?;
            data(Bson::Null)
        }
        other => Err(Failure::not_implemented(format!("operation {other:?} on a collection"))),
    }
}

async fn database_op(
    db: &mongodb::Database,
    name: &str,
    args: &mut Args,
    session: &mut Option<ClientSession>,
) -> Result<Produced, Failure> {
    match name {
        "runCommand" => {
            let command = args.need_doc("command")?;
            let _ = args.string("commandName")?;
            let read_preference = args.doc("readPreference")?;
            args.done()?;
            let mut action = db.run_command(command);
            if let Some(rp) = read_preference {
                action = action.selection_criteria(crate::entities::read_preference(&rp)?);
            }
            data(Bson::Document(with_session!(action, session)?))
        }
        "createCollection" => {
            let collection = args.need_string("collection")?;
            let pre_post = args.doc("changeStreamPreAndPostImages")?;
            let view_on = args.string("viewOn")?;
            let pipeline = args.docs("pipeline")?;
            args.done()?;
            let mut action = db.create_collection(collection);
            if let Some(p) = pre_post {
                let enabled = p.get_bool("enabled").map_err(|_| Failure::invalid("changeStreamPreAndPostImages"))?;
                action = action.change_stream_pre_and_post_images(ChangeStreamPreAndPostImages::builder().enabled(enabled).build());
            }
            if let Some(v) = view_on {
                action = action.view_on(v);
            }
            if let Some(p) = pipeline {
                action = action.pipeline(p);
            }
            with_session!(action, session)?;
            data(Bson::Null)
        }
        "dropCollection" => {
            let collection = args.need_string("collection")?;
            args.done()?;
            let coll = db.collection::<Document>(&collection);
            with_session!(coll.drop(), session)?;
            data(Bson::Null)
        }
        "aggregate" => {
            let (pipeline, batch_size) = aggregate_args(args, session.is_some())?;
            let mut action = db.aggregate(pipeline);
            if let Some(n) = batch_size {
                action = action.batch_size(n as u32);
            }
            documents(action.await?.try_collect().await?)
        }
        other => Err(Failure::not_implemented(format!("operation {other:?} on a database"))),
    }
}

async fn session_op(scope: &mut Scope, id: &str, name: &str, args: Args) -> Result<Outcome, Failure> {
    let mut args = args;
    let options = match name {
        "startTransaction" => {
            let mut d = Document::new();
            for key in ["readConcern", "writeConcern", "readPreference", "maxCommitTimeMS"] {
                if let Some(v) = args.take(key) {
                    d.insert(key, v);
                }
            }
            Some(crate::entities::transaction_options(&d)?)
        }
        _ => None,
    };
    args.done()?;
    if name == "endSession" {
        if let Some(Entity::Session(s)) = scope.entities.get_mut(id) {
            s.session = None; // dropping the driver's session ends it
        }
        return Ok(Outcome::null());
    }
    let mut session = scope.take_session(id)?;
    let result = match name {
        "startTransaction" => {
            let action = session.start_transaction();
            match options {
                Some(o) => action.with_options(o).await,
                None => action.await,
            }
        }
        "commitTransaction" => session.commit_transaction().await,
        "abortTransaction" => session.abort_transaction().await,
        other => {
            scope.put_session(id, session);
            return Err(Failure::not_implemented(format!("operation {other:?} on a session")));
        }
    };
    scope.put_session(id, session);
    result?;
    Ok(Outcome::null())
}

fn resume_token(value: Bson, key: &str) -> Result<ResumeToken, Failure> {
    mongodb::bson::from_bson(value).map_err(|e| Failure::invalid(format!("{key}: not a resume token: {e}")))
}

async fn create_change_stream(
    scope: &mut Scope,
    object: &str,
    args: &mut Args,
    session: &mut Option<ClientSession>,
    session_id: Option<String>,
) -> Result<Produced, Failure> {
    let pipeline = args.docs("pipeline")?.unwrap_or_default();
    let (client_id, target) = match scope.get(object)? {
        Entity::Client(c) => (c.recorder.client_id.clone(), 0),
        Entity::Database { client, .. } => (client.clone(), 1),
        Entity::Collection { client, .. } => (client.clone(), 2),
        _ => return Err(Failure::not_implemented(format!("createChangeStream on {object:?}"))),
    };
    let client = match scope.get(object)? {
        Entity::Client(c) => Some(c.client.clone()),
        _ => None,
    };
    let db = match scope.get(object)? {
        Entity::Database { db, .. } => Some(db.clone()),
        _ => None,
    };
    let coll = match scope.get(object)? {
        Entity::Collection { coll, .. } => Some(coll.clone()),
        _ => None,
    };
    let mut action = match target {
        0 => client.as_ref().unwrap().watch(),
        1 => db.as_ref().unwrap().watch(),
        _ => coll.as_ref().unwrap().watch(),
    }
    .pipeline(pipeline);
    if let Some(v) = args.string("fullDocument")? {
        // The driver's typed option: its named variants, and `Other` for any other string it passes through.
        action = action.full_document(match v.as_str() {
            "updateLookup" => FullDocumentType::UpdateLookup,
            "whenAvailable" => FullDocumentType::WhenAvailable,
            "required" => FullDocumentType::Required,
            _ => FullDocumentType::Other(v),
        });
    }
    if let Some(v) = args.string("fullDocumentBeforeChange")? {
        action = action.full_document_before_change(match v.as_str() {
            "whenAvailable" => FullDocumentBeforeChangeType::WhenAvailable,
            "required" => FullDocumentBeforeChangeType::Required,
            "off" => FullDocumentBeforeChangeType::Off,
            _ => FullDocumentBeforeChangeType::Other(v),
        });
    }
    if let Some(v) = args.take("resumeAfter") {
        action = action.resume_after(resume_token(v, "resumeAfter")?);
    }
    if let Some(v) = args.take("startAfter") {
        action = action.start_after(resume_token(v, "startAfter")?);
    }
    match args.take("startAtOperationTime") {
        None => {}
        Some(Bson::Timestamp(ts)) => action = action.start_at_operation_time(ts),
        Some(other) => {
            let _: Option<Timestamp> = None;
            return Err(Failure::invalid(format!("startAtOperationTime must be a Timestamp, got {other}")));
        }
    }
    if let Some(n) = args.int("batchSize")? {
        action = action.batch_size(n as u32);
    }
    if let Some(n) = args.int("maxAwaitTimeMS")? {
        action = action.max_await_time(Duration::from_millis(n as u64));
    }
    if let Some(b) = args.boolean("showExpandedEvents")? {
        action = action.show_expanded_events(b);
    }
    if let Some(c) = args.take("comment") {
        action = action.comment(c);
    }
    if let Some(c) = args.doc("collation")? {
        let collation: Collation =
            mongodb::bson::from_document(c).map_err(|e| Failure::invalid(format!("collation: {e}")))?;
        action = action.collation(collation);
    }
    if args.map.contains_key("timeoutMS") {
        return Err(Failure::not_implemented(
            "createChangeStream: argument \"timeoutMS\": the Rust driver has no client-side operation timeout",
        ));
    }
    args.done()?;
    let inner = match (session.as_mut(), session_id) {
        (Some(s), Some(sid)) => Inner::Session(action.session(&mut *s).await?.with_type::<Document>(), sid),
        _ => Inner::Plain(action.await?.with_type::<Document>()),
    };
    Ok(Produced::Stream(StreamEnt { inner: Some(inner), client: client_id, pending: false, carried: None, in_flight: Default::default() }))
}
