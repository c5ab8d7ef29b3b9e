//! A tiny reply-rewriting TCP proxy on 127.0.0.1, in front of one server, for the cases that need a reply the
//! server does not give. Each listener is a "member": its `hello` replies name every listener as one replica set
//! (listener 0 the primary, the others secondaries; a listener marked down answers as a recovering member). It logs
//! the commands each member receives, and can strip fields from replies or fail one `getMore` on one member.
//!
//! Only OP_MSG (2013) with a single body section is rewritten; anything else is forwarded untouched (the driver
//! asks for no compression here).
use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use mongodb::bson::{doc, Bson, Document};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const OP_MSG: i32 = 2013;
const CHECKSUM_PRESENT: u32 = 1;

#[derive(Default, Clone, Copy)]
pub struct Shape {
    /// Remove `cursor.postBatchResumeToken` from every reply (a server before 4.0.7).
    pub strip_post_batch_token: bool,
    /// Remove `_id` from every change event in `firstBatch` / `nextBatch`.
    pub strip_event_ids: bool,
}

pub struct Proxy {
    upstream: String,
    pub hosts: Vec<String>,
    shape: Shape,
    log: Mutex<Vec<String>>,
    down: Vec<AtomicBool>,
    /// The member whose next getMore is answered with InterruptedDueToReplStateChange (and which then goes down).
    fail_get_more_on: Mutex<Option<usize>>,
    request_id: AtomicI32,
}

impl Proxy {
    /// Starts `members` listeners on free loopback ports in front of `upstream` (host:port).
    pub async fn start(upstream: &str, members: usize, shape: Shape) -> Arc<Proxy> {
        let mut listeners = Vec::new();
        let mut hosts = Vec::new();
        for _ in 0..members {
            let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            hosts.push(l.local_addr().unwrap().to_string());
            listeners.push(l);
        }
        let proxy = Arc::new(Proxy {
            upstream: upstream.to_string(),
            hosts,
            shape,
            log: Mutex::new(Vec::new()),
            down: (0..members).map(|_| AtomicBool::new(false)).collect(),
            fail_get_more_on: Mutex::new(None),
            request_id: AtomicI32::new(1 << 30),
        });
        for (member, l) in listeners.into_iter().enumerate() {
            let p = proxy.clone();
            tokio::spawn(async move {
                while let Ok((client, _)) = l.accept().await {
                    let p = p.clone();
                    tokio::spawn(async move {
                        let _ = p.serve(member, client).await;
                    });
                }
            });
        }
        proxy
    }

    /// A URI naming every member, as an application would name a replica set.
    pub fn uri(&self, set_name: &str) -> String {
        format!("mongodb://{}/?replicaSet={}&heartbeatFrequencyMS=500", self.hosts.join(","), set_name)
    }

    pub fn log_len(&self) -> usize {
        self.log.lock().unwrap().len()
    }

    pub fn log_since(&self, from: usize) -> Vec<String> {
        self.log.lock().unwrap()[from..].to_vec()
    }

    pub fn fail_next_get_more_on(&self, member: usize) {
        *self.fail_get_more_on.lock().unwrap() = Some(member);
    }

    async fn serve(self: Arc<Self>, member: usize, client: TcpStream) -> io::Result<()> {
        let server = TcpStream::connect(&self.upstream).await?;
        let (mut client_r, client_w) = client.into_split();
        let (mut server_r, mut server_w) = server.into_split();
        let client_w = Arc::new(tokio::sync::Mutex::new(client_w));
        let back = {
            let (p, client_w) = (self.clone(), client_w.clone());
            tokio::spawn(async move {
                loop {
                    let Ok((header, body)) = read_message(&mut server_r).await else { break };
                    let out = p.rewrite_reply(member, header, body);
                    if client_w.lock().await.write_all(&out).await.is_err() {
                        break;
                    }
                }
            })
        };
        loop {
            let Ok((header, body)) = read_message(&mut client_r).await else { break };
            if header[3] == OP_MSG {
                if let Some((_, command)) = body_document(&body) {
                    let name = command.keys().next().cloned().unwrap_or_default();
                    if !matches!(name.as_str(), "hello" | "isMaster" | "ismaster") {
                        let mut line = format!("{name}@member{member}");
                        match name.as_str() {
                            "getMore" => line += &format!(" cursor={}", command.get("getMore").map(show).unwrap_or_default()),
                            "killCursors" => line += &format!(" cursors={}", command.get("cursors").map(show).unwrap_or_default()),
                            _ => {}
                        }
                        self.log.lock().unwrap().push(line);
                    }
                    if name == "getMore" {
                        let fail = {
                            let mut f = self.fail_get_more_on.lock().unwrap();
                            if *f == Some(member) { f.take().is_some() } else { false }
                        };
                        if fail {
                            // The member is now recovering: its hello says neither primary nor secondary.
                            self.down[member].store(true, Ordering::SeqCst);
                            let error = doc! {
                                "ok": 0.0,
                                "errmsg": "interrupted due to state change (injected by the repro proxy)",
                                "code": 11602,
                                "codeName": "InterruptedDueToReplStateChange",
                                "errorLabels": ["ResumableChangeStreamError"],
                            };
                            let out = self.encode(header[1], 0, &error);
                            self.log.lock().unwrap().push(format!("  (getMore@member{member} answered with error 11602; member{member} now recovering)"));
                            client_w.lock().await.write_all(&out).await?;
                            continue;
                        }
                    }
                }
            }
            let mut raw = Vec::with_capacity(16 + body.len());
            for h in header {
                raw.extend_from_slice(&h.to_le_bytes());
            }
            raw.extend_from_slice(&body);
            server_w.write_all(&raw).await?;
        }
        back.abort();
        let _ = client_w.lock().await.shutdown().await;
        Ok(())
    }

    fn rewrite_reply(&self, member: usize, header: [i32; 4], body: Vec<u8>) -> Vec<u8> {
        if header[3] == OP_MSG {
            if let Some((flags, mut reply)) = body_document(&body) {
                self.reshape(member, &mut reply);
                return self.encode_with(header[1], header[2], flags & !CHECKSUM_PRESENT, &reply);
            }
        }
        let mut raw = Vec::with_capacity(16 + body.len());
        for h in header {
            raw.extend_from_slice(&h.to_le_bytes());
        }
        raw.extend_from_slice(&body);
        raw
    }

    fn reshape(&self, member: usize, reply: &mut Document) {
        if reply.contains_key("maxWireVersion") && reply.contains_key("setName") {
            let down = self.down[member].load(Ordering::SeqCst);
            let primary = member == 0 && !down;
            let secondary = member != 0 && !down;
            reply.insert("hosts", self.hosts.iter().map(|h| Bson::String(h.clone())).collect::<Vec<_>>());
            reply.insert("primary", self.hosts[0].clone());
            reply.insert("me", self.hosts[member].clone());
            for key in ["isWritablePrimary", "ismaster"] {
                if reply.contains_key(key) {
                    reply.insert(key, primary);
                }
            }
            reply.insert("secondary", secondary);
            // No streaming hello: the driver polls, so a member's new state is seen at its next check.
            reply.remove("topologyVersion");
            if !primary {
                reply.remove("electionId");
            }
        }
        if let Ok(cursor) = reply.get_document_mut("cursor") {
            if self.shape.strip_post_batch_token {
                cursor.remove("postBatchResumeToken");
            }
            if self.shape.strip_event_ids {
                for key in ["firstBatch", "nextBatch"] {
                    if let Ok(batch) = cursor.get_array_mut(key) {
                        for item in batch.iter_mut() {
                            if let Bson::Document(d) = item {
                                if d.contains_key("operationType") {
                                    d.remove("_id");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    fn encode(&self, response_to: i32, flags: u32, body: &Document) -> Vec<u8> {
        let id = self.request_id.fetch_add(1, Ordering::SeqCst);
        let mut out = self.encode_with(id, response_to, flags, body);
        out[4..8].copy_from_slice(&id.to_le_bytes());
        out
    }

    fn encode_with(&self, request_id: i32, response_to: i32, flags: u32, body: &Document) -> Vec<u8> {
        let mut doc_bytes = Vec::new();
        body.to_writer(&mut doc_bytes).expect("encode");
        let len = (16 + 4 + 1 + doc_bytes.len()) as i32;
        let mut out = Vec::with_capacity(len as usize);
        for h in [len, request_id, response_to, OP_MSG] {
            out.extend_from_slice(&h.to_le_bytes());
        }
        out.extend_from_slice(&flags.to_le_bytes());
        out.push(0);
        out.extend_from_slice(&doc_bytes);
        out
    }
}

fn show(b: &Bson) -> String {
    match b {
        Bson::Int64(n) => n.to_string(),
        Bson::Int32(n) => n.to_string(),
        Bson::Array(a) => format!("[{}]", a.iter().map(show).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

async fn read_message<R: AsyncReadExt + Unpin>(r: &mut R) -> io::Result<([i32; 4], Vec<u8>)> {
    let mut h = [0u8; 16];
    r.read_exact(&mut h).await?;
    let header: [i32; 4] = std::array::from_fn(|i| i32::from_le_bytes(h[i * 4..i * 4 + 4].try_into().unwrap()));
    let mut body = vec![0u8; (header[0] as usize).saturating_sub(16)];
    r.read_exact(&mut body).await?;
    Ok((header, body))
}

/// An OP_MSG body (after the header) holding one kind-0 section and nothing else (besides a checksum).
fn body_document(body: &[u8]) -> Option<(u32, Document)> {
    if body.len() < 5 + 5 || body[4] != 0 {
        return None;
    }
    let flags = u32::from_le_bytes(body[0..4].try_into().unwrap());
    let doc_len = i32::from_le_bytes(body[5..9].try_into().unwrap()) as usize;
    let end = body.len() - if flags & CHECKSUM_PRESENT != 0 { 4 } else { 0 };
    if 5 + doc_len != end {
        return None; // a document sequence follows: left alone
    }
    let doc = Document::from_reader(&body[5..5 + doc_len]).ok()?;
    Some((flags, doc))
}
