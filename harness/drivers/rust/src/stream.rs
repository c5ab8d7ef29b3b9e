//! Change streams (section 6.4): iteration in the declared modes, the budget, `iterateOnce`, `close`.
//!
//! - `next`: the `Stream` impl's `next()` (futures' `StreamExt::next`), raced against the budget. The driver keeps
//!   a running step inside the stream (`PollState::Running`), so a step still running when the budget ends is
//!   not lost: the next call polls the same step again.
//! - `tryNext`: `ChangeStream::next_if_any()` in a loop, the budget checked between calls (each is at most one
//!   `getMore`, or a resume).
//!
//! A stream opened with a session is a `SessionChangeStream`, which has no `Stream` impl; its `next(&mut session)`
//! future borrows the session and cannot be kept across calls, so in both modes it is iterated with
//! `next_if_any(&mut session)` under the budget (the `next` row of section 6.4.1's table).
use std::collections::HashSet;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use mongodb::bson::{Bson, Document};
use mongodb::change_stream::session::SessionChangeStream;
use mongodb::change_stream::ChangeStream;
use mongodb::error::Error;
use mongodb::ClientSession;

use crate::entities::{Entity, Scope};
use crate::errors::Failure;

pub enum Inner {
    Plain(ChangeStream<Document>),
    Session(SessionChangeStream<Document>, String),
}

pub struct StreamEnt {
    pub inner: Option<Inner>,
    /// The client entity whose commands this stream sends (for reading the command log).
    pub client: String,
    /// `next` mode: a `Stream::next` step is still running inside the driver's stream.
    pub pending: bool,
    /// The outcome of a step completed on behalf of `getResumeToken`, handed out by the next iteration.
    pub carried: Option<Result<Option<Document>, Error>>,
    /// `next` mode: the `getMore`/`aggregate` request ids this stream's steps sent that have no reply yet.
    pub in_flight: HashSet<i32>,
}

type Step = Result<Option<Document>, Error>;

fn no_change(budget_ms: u64) -> Failure {
    Failure::no_change(format!("no document arrived within {budget_ms}ms"))
}

fn closed() -> Failure {
    Failure::no_change("the change stream is closed (the server closed its cursor)")
}

/// Takes the stream (and its session, when it has one) out of the scope for one operation.
fn take(scope: &mut Scope, id: &str) -> Result<(StreamEnt, Option<ClientSession>), Failure> {
    match scope.entities.get(id) {
        Some(Entity::Stream(_)) => {}
        Some(_) => return Err(Failure::not_implemented(format!("entity {id:?} is not a change stream or cursor"))),
        None => return Err(Failure::invalid(format!("unknown entity {id:?}"))),
    }
    let Some(Entity::Stream(stream)) = scope.entities.remove(id) else { unreachable!() };
    let session = match &stream.inner {
        Some(Inner::Session(_, sid)) => match scope.take_session(sid) {
            Ok(s) => Some(s),
            Err(e) => {
                scope.entities.insert(id.to_string(), Entity::Stream(stream));
                return Err(e);
            }
        },
        _ => None,
    };
    Ok((stream, session))
}

fn give_back(scope: &mut Scope, id: &str, stream: StreamEnt, session: Option<ClientSession>) {
    if let (Some(Inner::Session(_, sid)), Some(s)) = (&stream.inner, session) {
        let sid = sid.clone();
        scope.put_session(&sid, s);
    }
    scope.entities.insert(id.to_string(), Entity::Stream(stream));
}

fn answer(step: Step, budget_ms: u64, closed_now: bool) -> Result<Bson, Failure> {
    match step {
        Ok(Some(d)) => Ok(Bson::Document(d)),
        Ok(None) if closed_now => Err(closed()),
        Ok(None) => Err(no_change(budget_ms)),
        Err(e) => Err(e.into()),
    }
}

pub async fn iterate_until(scope: &mut Scope, id: &str, budget_ms: u64) -> Result<Bson, Failure> {
    let mode = scope.mode;
    let log = scope.log.clone();
    let (mut stream, mut session) = take(scope, id)?;
    let from = log.lock().unwrap().len();
    let result = until(&mut stream, session.as_mut(), mode, budget_ms, &log).await;
    settle_kill_cursors(&log, &stream.client, from).await;
    give_back(scope, id, stream, session);
    result
}

/// A resume drops the old cursor, whose `Drop` sends `killCursors` from a task of the driver's: as `close` does
/// (note 42), the step's answer waits (up to 2 s) until every `killCursors` the stream's client started during the
/// step has been answered or has failed, so the command's outcome is observed before the reply.
async fn settle_kill_cursors(log: &crate::events::CommandLog, client: &str, from: usize) {
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        let open = {
            let log = log.lock().unwrap();
            let mut open: HashSet<i32> = HashSet::new();
            for e in log.iter().skip(from) {
                if e.get_str("client") != Ok(client) || e.get_str("commandName") != Ok("killCursors") {
                    continue;
                }
                let Ok(id) = e.get_i32("requestId") else { continue };
                if e.get_str("kind") == Ok("commandStartedEvent") {
                    open.insert(id);
                } else {
                    open.remove(&id);
                }
            }
            !open.is_empty()
        };
        if !open || Instant::now() >= until {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn until(
    stream: &mut StreamEnt,
    session: Option<&mut ClientSession>,
    mode: &str,
    budget_ms: u64,
    log: &crate::events::CommandLog,
) -> Result<Bson, Failure> {
    if let Some(step) = stream.carried.take() {
        let closed_now = !alive(stream);
        return answer(step, budget_ms, closed_now);
    }
    let deadline = Instant::now() + Duration::from_millis(budget_ms);
    match (stream.inner.as_mut(), session) {
        (None, _) => Err(closed()),
        (Some(Inner::Plain(cs)), _) if mode == "next" => {
            // The driver's `next()` loops over getMores inside one future, which it keeps in the stream when the
            // caller stops polling. The budget is checked between getMores: once it is spent, the step is polled
            // on only until the getMore under way has its reply (seen in the command log), then left for the
            // next call.
            let mut scanned = log.lock().unwrap().len();
            // The getMores under way when the budget ran out: the answer waits for their replies, not for
            // those the driver sends after them.
            let mut awaited: Option<HashSet<i32>> = None;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                let tick = if left.is_zero() { Duration::from_millis(5) } else { left.min(Duration::from_millis(50)) };
                let polled = tokio::time::timeout(tick, cs.next()).await;
                scanned = track_in_flight(&mut stream.in_flight, log, &stream.client, scanned);
                match polled {
                    Err(_) => {
                        stream.pending = true;
                        if Instant::now() >= deadline {
                            let waiting = awaited.get_or_insert_with(|| stream.in_flight.clone());
                            waiting.retain(|id| stream.in_flight.contains(id));
                            if waiting.is_empty() {
                                return Err(no_change(budget_ms));
                            }
                        }
                    }
                    Ok(item) => {
                        stream.pending = false;
                        return match item {
                            Some(Ok(d)) => Ok(Bson::Document(d)),
                            Some(Err(e)) => Err(e.into()),
                            None => Err(closed()), // the Stream ended: the server closed the cursor
                        };
                    }
                }
            }
        }
        (Some(Inner::Plain(cs)), _) => loop {
            match cs.next_if_any().await {
                Ok(Some(d)) => return Ok(Bson::Document(d)),
                Err(e) => return Err(e.into()),
                Ok(None) if !cs.is_alive() => return Err(closed()),
                Ok(None) if Instant::now() >= deadline => return Err(no_change(budget_ms)),
                Ok(None) => {}
            }
        },
        (Some(Inner::Session(cs, _)), Some(session)) => loop {
            match cs.next_if_any(session).await {
                Ok(Some(d)) => return Ok(Bson::Document(d)),
                Err(e) => return Err(e.into()),
                Ok(None) if !cs.is_alive() => return Err(closed()),
                Ok(None) if Instant::now() >= deadline => return Err(no_change(budget_ms)),
                Ok(None) => {}
            }
        },
        (Some(Inner::Session(..)), None) => Err(Failure::internal("the stream's session is missing")),
    }
}

fn alive(stream: &StreamEnt) -> bool {
    if stream.pending {
        return true;
    }
    match &stream.inner {
        Some(Inner::Plain(cs)) => cs.is_alive(),
        Some(Inner::Session(cs, _)) => cs.is_alive(),
        None => false,
    }
}

/// Follows the log from `from`: the stream's `getMore`/`aggregate` started and not yet answered. Only the stream
/// being polled sends these (requests are handled one at a time), so the client's are this stream's.
fn track_in_flight(set: &mut HashSet<i32>, log: &crate::events::CommandLog, client: &str, from: usize) -> usize {
    let log = log.lock().unwrap();
    for e in log.iter().skip(from) {
        if e.get_str("client") != Ok(client) || !matches!(e.get_str("commandName"), Ok("getMore" | "aggregate")) {
            continue;
        }
        let Ok(id) = e.get_i32("requestId") else { continue };
        if e.get_str("kind") == Ok("commandStartedEvent") {
            set.insert(id);
        } else {
            set.remove(&id);
        }
    }
    log.len()
}

/// Started `getMore`/`aggregate` commands the stream's client sent since log index `from`.
fn round_trips_since(scope_log: &crate::events::CommandLog, client: &str, from: usize) -> usize {
    let log = scope_log.lock().unwrap();
    log.iter()
        .skip(from)
        .filter(|e| {
            e.get_str("client") == Ok(client)
                && e.get_str("kind") == Ok("commandStartedEvent")
                && matches!(e.get_str("commandName"), Ok("getMore" | "aggregate"))
        })
        .count()
}

pub async fn iterate_once(scope: &mut Scope, id: &str) -> Result<Bson, Failure> {
    let budget_ms = scope.budget_ms;
    let log = scope.log.clone();
    let (mut stream, mut session) = take(scope, id)?;
    let from = log.lock().unwrap().len();
    let result = once(&mut stream, session.as_mut(), &log, budget_ms).await;
    settle_kill_cursors(&log, &stream.client, from).await;
    give_back(scope, id, stream, session);
    result
}

async fn once(
    stream: &mut StreamEnt,
    mut session: Option<&mut ClientSession>,
    log: &crate::events::CommandLog,
    budget_ms: u64,
) -> Result<Bson, Failure> {
    if let Some(step) = stream.carried.take() {
        return step_or_null(step);
    }
    if stream.pending {
        // A `next` step is still running: wait for it up to the budget (section 6.4.2), else null.
        return match finish_pending(stream, budget_ms, log).await {
            Some(step) => step_or_null(step),
            None => Ok(Bson::Null),
        };
    }
    let client = stream.client.clone();
    for attempt in 0..2 {
        let from = log.lock().unwrap().len();
        let step = match (stream.inner.as_mut(), session.as_deref_mut()) {
            (None, _) => return Ok(Bson::Null),
            (Some(Inner::Plain(cs)), _) => cs.next_if_any().await,
            (Some(Inner::Session(cs, _)), Some(s)) => cs.next_if_any(s).await,
            (Some(Inner::Session(..)), None) => return Err(Failure::internal("the stream's session is missing")),
        };
        // Section 6.4: an empty first batch handed out without a round trip is not an answer.
        let again = attempt == 0
            && matches!(step, Ok(None))
            && alive(stream)
            && round_trips_since(log, &client, from) == 0;
        if !again {
            return step_or_null(step);
        }
    }
    Ok(Bson::Null)
}

fn step_or_null(step: Step) -> Result<Bson, Failure> {
    match step {
        Ok(Some(d)) => Ok(Bson::Document(d)),
        Ok(None) => Ok(Bson::Null),
        Err(e) => Err(e.into()),
    }
}

/// Polls a running `next` step for up to `budget_ms`; its outcome once it completed.
async fn finish_pending(stream: &mut StreamEnt, budget_ms: u64, log: &crate::events::CommandLog) -> Option<Step> {
    let Some(Inner::Plain(cs)) = stream.inner.as_mut() else { return None };
    let from = log.lock().unwrap().len();
    let polled = tokio::time::timeout(Duration::from_millis(budget_ms), cs.next()).await;
    track_in_flight(&mut stream.in_flight, log, &stream.client, from);
    match polled {
        Err(_) => None,
        Ok(item) => {
            stream.pending = false;
            Some(match item {
                Some(Ok(d)) => Ok(Some(d)),
                Some(Err(e)) => Err(e),
                None => Ok(None),
            })
        }
    }
}

pub async fn resume_token(scope: &mut Scope, id: &str) -> Result<Bson, Failure> {
    let budget_ms = scope.budget_ms;
    let log = scope.log.clone();
    let (mut stream, session) = take(scope, id)?;
    let mut result = Ok(Bson::Null);
    if stream.pending {
        // The driver's state is inside the running step: let it finish, keep its outcome for the next call.
        match finish_pending(&mut stream, budget_ms, &log).await {
            Some(step) => stream.carried = Some(step),
            None => result = Err(Failure::internal("a change stream step is still running; no token to read")),
        }
    }
    if result.is_ok() {
        let token = match &stream.inner {
            Some(Inner::Plain(cs)) => cs.resume_token(),
            Some(Inner::Session(cs, _)) => cs.resume_token(),
            None => None,
        };
        result = match token {
            Some(t) => mongodb::bson::to_bson(&t).map_err(|e| Failure::internal(format!("resume token: {e}"))),
            None => Ok(Bson::Null),
        };
    }
    give_back(scope, id, stream, session);
    result
}

/// `close`: drops the driver's stream, whose `Drop` sends `killCursors` in the background; waits (briefly) for
/// that command's outcome so it is observed before the reply. Errors are the driver's to swallow: it never
/// reports them.
pub async fn close(scope: &mut Scope, id: &str) -> Result<Bson, Failure> {
    let log = scope.log.clone();
    let (mut stream, session) = take(scope, id)?;
    let was_alive = alive(&stream);
    let client = stream.client.clone();
    let from = log.lock().unwrap().len();
    stream.inner = None;
    stream.in_flight.clear();
    stream.pending = false;
    stream.carried = None;
    give_back_closed(scope, id, stream, session);
    if was_alive {
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until {
            let done = log.lock().unwrap().iter().skip(from).any(|e| {
                e.get_str("client") == Ok(client.as_str())
                    && e.get_str("commandName") == Ok("killCursors")
                    && e.get_str("kind") != Ok("commandStartedEvent")
            });
            if done {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    Ok(Bson::Null)
}

fn give_back_closed(scope: &mut Scope, id: &str, stream: StreamEnt, session: Option<ClientSession>) {
    // The session went out with a session stream; find its id before the stream forgot it.
    if let Some(s) = session {
        let sid = scope
            .entities
            .iter()
            .find_map(|(k, e)| match e {
                Entity::Session(se) if se.session.is_none() && &se.lsid == s.id() => Some(k.clone()),
                _ => None,
            });
        if let Some(sid) = sid {
            scope.put_session(&sid, s);
        }
    }
    scope.entities.insert(id.to_string(), Entity::Stream(stream));
}
