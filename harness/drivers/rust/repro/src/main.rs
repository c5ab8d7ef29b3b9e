//! Reproductions of the Rust driver's change-stream deviations, with the driver alone (no harness):
//!
//!   cargo run --release -- URI CASE      (URI of a replica set, e.g. SecantusDB: mongodb://127.0.0.1:PORT/)
//!
//! Cases: comment-in-stage, full-document-other, missing-resume-token, socket-timeout.
use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use mongodb::bson::{doc, Document};
use mongodb::event::command::CommandEvent;
use mongodb::event::EventHandler;
use mongodb::options::{ClientOptions, FullDocumentType};
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
            CommandEvent::Succeeded(s) => format!("succeeded {}", s.command_name),
            CommandEvent::Failed(f) => format!("failed {}", f.command_name),
            _ => return,
        };
        log.lock().unwrap().push(line);
    }));
    (Client::with_options(options).expect("client"), seen)
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
        other => eprintln!("unknown case {other}"),
    }
}
