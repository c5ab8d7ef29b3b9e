//! Reproductions of the Rust driver's change-stream deviations, with the driver alone (no harness):
//!
//!   cargo run --release -- URI CASE      (URI of a replica set, e.g. SecantusDB: mongodb://127.0.0.1:PORT/)
//!
//! Cases: comment-in-stage, full-document-other, missing-resume-token, socket-timeout, and, through a small
//! reply-rewriting proxy of this program's own (src/proxy.rs) in front of the server at URI:
//! no-post-batch-token, missing-resume-token-reply, kill-cursors-other-member.
mod proxy;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::event::command::CommandEvent;
use mongodb::event::EventHandler;
use mongodb::options::{ClientOptions, FullDocumentType, ReadPreference, SelectionCriteria};
use mongodb::Client;

type Seen = Arc<Mutex<Vec<String>>>;

async fn client(uri: &str) -> (Client, Seen) {
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let mut options = ClientOptions::parse(uri).await.expect("uri");
    let log = seen.clone();
    options.command_event_handler = Some(EventHandler::callback(move |e: CommandEvent| {
        let line = match e {
            CommandEvent::Started(s) if s.command_name == "aggregate" || s.command_name == "getMore" => {
                format!("started {} {}", s.command_name, s.command.get("pipeline").map(|p| p.to_string()).unwrap_or_default())
            }
            CommandEvent::Started(s) => format!("started {}", s.command_name),
            CommandEvent::Succeeded(s) => {
                let token = s.reply.get_document("cursor").map(|c| c.contains_key("postBatchResumeToken")).unwrap_or(false);
                format!("succeeded {}{}", s.command_name, if token { " with postBatchResumeToken" } else { "" })
            }
            CommandEvent::Failed(f) => format!("failed {}", f.command_name),
            _ => return,
        };
        log.lock().unwrap().push(line);
    }));
    (Client::with_options(options).expect("client"), seen)
}

/// A resume token, shortened: `Some(_data …<its last 12 hex digits>)` or `None`.
fn tok(t: Option<mongodb::change_stream::event::ResumeToken>) -> String {
    match t.map(|t| mongodb::bson::to_bson(&t).unwrap()) {
        Some(Bson::Document(d)) => {
            let data = d.get_str("_data").unwrap_or_default();
            format!("Some(_data …{})", &data[data.len().saturating_sub(12)..])
        }
        Some(other) => format!("Some({other})"),
        None => "None".into(),
    }
}

/// host:port of the URI's first host.
fn upstream(uri: &str) -> String {
    let rest = uri.trim_start_matches("mongodb://");
    let hosts = rest.split(['/', '?']).next().unwrap_or(rest);
    hosts.split(',').next().unwrap().to_string()
}

/// The set name the server reports (the proxy keeps it in its hello replies).
async fn set_name(uri: &str) -> String {
    let c = Client::with_uri_str(format!("mongodb://{}/?directConnection=true", upstream(uri))).await.expect("client");
    let hello = c.database("admin").run_command(doc! {"hello": 1}).await.expect("hello");
    hello.get_str("setName").expect("the server is a replica set member").to_string()
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (uri, case) = (args[1].as_str(), args[2].as_str());
    match case {
        "comment-in-stage" => {
            // ChangeStreamOptions.comment is serialized into the $changeStream stage (not skip_serializing).
            let (c, seen) = client(uri).await;
            let coll = c.database("repro").collection::<Document>("comment");
            let r = coll.watch().comment(mongodb::bson::Bson::String("x".into())).await;
            println!("watch: {:?}", r.err().map(|e| e.kind.to_string()));
            println!("{:#?}", seen.lock().unwrap());
        }
        "full-document-other" => {
            // FullDocumentType::Other(s) is serialized by the derived Serialize as {"other": s}.
            let (c, seen) = client(uri).await;
            let coll = c.database("repro").collection::<Document>("fulldoc");
            let r = coll.watch().full_document(FullDocumentType::Other("default".into())).await;
            println!("watch: {:?}", r.err().map(|e| e.kind.to_string()));
            println!("{:#?}", seen.lock().unwrap());
        }
        "missing-resume-token" => {
            // A change without _id raises MissingResumeToken, but the stream stays open: the next call sends a getMore.
            let (c, seen) = client(uri).await;
            let coll = c.database("repro").collection::<Document>("token");
            let _ = coll.drop().await;
            let mut cs = coll.watch().pipeline([doc! {"$project": {"_id": 0}}]).await.expect("watch");
            coll.insert_one(doc! {"_id": 1}).await.unwrap();
            let first = cs.next().await;
            println!("first next: {:?}", first.map(|r| r.map_err(|e| e.kind.to_string())));
            println!("is_alive after the error: {}", cs.is_alive());
            let before = seen.lock().unwrap().len();
            let second = cs.next_if_any().await;
            println!("second next_if_any: {:?}", second.map_err(|e| e.kind.to_string()));
            println!("commands after the error: {:?}", &seen.lock().unwrap()[before..]);
        }
        "socket-timeout" => {
            let r = ClientOptions::parse(format!("{}?socketTimeoutMS=1000", uri.trim_end_matches('/').to_owned() + "/")).await;
            println!("parse with socketTimeoutMS: {:?}", r.err().map(|e| e.kind.to_string()));
        }
        "no-post-batch-token" => {
            // Replies without postBatchResumeToken (a server before 4.0.7): after an empty batch the cached token is
            // recomputed from that batch's first document or its postBatchResumeToken, neither present, so it is None.
            let p = proxy::Proxy::start(&upstream(uri), 1, proxy::Shape { strip_post_batch_token: true, ..Default::default() }).await;
            let (c, seen) = client(&p.uri(&set_name(uri).await)).await;
            let coll = c.database("repro").collection::<Document>("no_pbrt");
            let _ = coll.drop().await;
            let mut cs = coll.watch().max_await_time(Duration::from_millis(50)).await.expect("watch");
            coll.insert_many([doc! {"n": 1}, doc! {"n": 2}, doc! {"n": 3}]).await.unwrap();
            let mut last = None;
            for _ in 0..3 {
                last = Some(cs.next().await.expect("change").expect("change").id);
            }
            println!("last change _id:                                 {}", tok(last.clone()));
            println!("resume_token after the 3 changes:                {}", tok(cs.resume_token()));
            let r = cs.next_if_any().await;
            println!("next_if_any (empty getMore batch, no token):     {:?}", r.map_err(|e| e.kind.to_string()));
            println!("resume_token after that empty batch:             {}", tok(cs.resume_token()));
            let token = last.unwrap();
            let mut cs2 = coll.watch().resume_after(token).max_await_time(Duration::from_millis(50)).await.expect("watch");
            println!("watch().resume_after(that _id): resume_token:    {}", tok(cs2.resume_token()));
            let r = cs2.next_if_any().await;
            println!("next_if_any (empty getMore batch, no token):     {:?}", r.map_err(|e| e.kind.to_string()));
            println!("resume_token after that empty batch:             {}", tok(cs2.resume_token()));
            let replies: Vec<_> = seen.lock().unwrap().iter().filter(|l| l.contains("postBatchResumeToken")).cloned().collect();
            println!("replies the driver saw with a postBatchResumeToken: {}", replies.len());
        }
        "missing-resume-token-reply" => {
            // A change arriving without _id raises MissingResumeToken, yet the stream is not closed: the next call
            // sends another getMore on the same cursor. (The server refuses `$project: {_id: 0}`, so the proxy
            // strips _id from the change events of its replies.)
            let p = proxy::Proxy::start(&upstream(uri), 1, proxy::Shape { strip_event_ids: true, ..Default::default() }).await;
            let (c, seen) = client(&p.uri(&set_name(uri).await)).await;
            let coll = c.database("repro").collection::<Document>("token_reply");
            let _ = coll.drop().await;
            let mut cs = coll.watch().max_await_time(Duration::from_millis(200)).await.expect("watch");
            coll.insert_one(doc! {"n": 1}).await.unwrap();
            let first = cs.next().await;
            println!("next: {:?}", first.map(|r| r.map(|e| e.operation_type).map_err(|e| e.kind.to_string())));
            println!("is_alive after the error: {}", cs.is_alive());
            let before = seen.lock().unwrap().len();
            coll.insert_one(doc! {"n": 2}).await.unwrap();
            let second = cs.next_if_any().await;
            println!("next_if_any after the error: {:?}", second.map(|o| o.map(|e| e.operation_type)).map_err(|e| e.kind.to_string()));
            let after: Vec<_> = seen.lock().unwrap()[before..].iter().filter(|l| !l.contains("insert")).cloned().collect();
            println!("commands after the error: {:?}", after);
        }
        "kill-cursors-other-member" => {
            // Two proxy listeners = two members of one set (member0 primary, member1 secondary). The stream reads
            // from member1 (secondaryPreferred); its getMore fails with a state change and member1 turns recovering,
            // so the resume selects member0. The old cursor lives on member1, yet its killCursors goes to member0.
            let p = proxy::Proxy::start(&upstream(uri), 2, proxy::Shape::default()).await;
            let (c, _) = client(&p.uri(&set_name(uri).await)).await;
            let db = c.database("repro");
            let secondary = SelectionCriteria::ReadPreference(ReadPreference::Secondary { options: None });
            db.run_command(doc! {"ping": 1}).selection_criteria(secondary).await.expect("a secondary is known");
            let coll = db.collection::<Document>("kill_member");
            let _ = coll.drop().await;
            let preferred = SelectionCriteria::ReadPreference(ReadPreference::SecondaryPreferred { options: None });
            let mut cs = coll.watch().selection_criteria(preferred).max_await_time(Duration::from_millis(200)).await.expect("watch");
            coll.insert_one(doc! {"n": 1}).await.unwrap();
            cs.next().await.expect("change").expect("change");
            let mark = p.log_len();
            p.fail_next_get_more_on(1);
            coll.insert_one(doc! {"n": 2}).await.unwrap();
            let second = cs.next().await;
            println!("next across the resume: {:?}", second.map(|r| r.map(|e| e.operation_type).map_err(|e| e.kind.to_string())));
            tokio::time::sleep(Duration::from_millis(500)).await; // the old cursor's killCursors is sent by a task
            println!("members: member0 = {} (primary), member1 = {} (secondary)", p.hosts[0], p.hosts[1]);
            for line in p.log_since(mark).iter().filter(|l| !l.starts_with("insert")) {
                println!("  {line}");
            }
        }
        other => eprintln!("unknown case {other}"),
    }
}
