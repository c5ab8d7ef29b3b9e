//! Replies' `error` objects (section 7): the protocol's own kinds and the driver's errors as `driverError`.
use mongodb::bson::{doc, Bson, Document};
use mongodb::error::{Error, ErrorKind, WriteFailure};

/// An `ok: false` reply's error (a BSON document: canonical Extended JSON on the wire).
#[derive(Debug)]
pub struct Failure(pub Document);

impl Failure {
    pub fn new(kind: &str, message: impl Into<String>) -> Self {
        Failure(doc! {"kind": kind, "message": message.into()})
    }
    pub fn not_implemented(message: impl Into<String>) -> Self {
        Self::new("notImplemented", message)
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new("invalidRequest", message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new("internal", message)
    }
    pub fn no_change(message: impl Into<String>) -> Self {
        Self::new("noChange", message)
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure(driver_error(&e))
    }
}

/// The name a Rust application matches on: the `mongodb::error::Error` struct and its `ErrorKind` variant.
pub fn error_type_name(e: &Error) -> String {
    let debug = format!("{:?}", e.kind);
    let variant: String = debug.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    format!("mongodb::error::Error(ErrorKind::{variant})")
}

fn server_response(e: &Error) -> Option<Document> {
    e.server_response().and_then(|raw| Document::try_from(raw.as_ref()).ok())
}

pub fn driver_error(e: &Error) -> Document {
    let mut code: Option<i32> = None;
    let mut code_name: Option<String> = None;
    let mut server = false;
    let mut response = server_response(e);
    match e.kind.as_ref() {
        ErrorKind::Command(c) => {
            code = Some(c.code);
            code_name = Some(c.code_name.clone()).filter(|n| !n.is_empty());
            server = true;
        }
        ErrorKind::Write(WriteFailure::WriteError(w)) => {
            code = Some(w.code);
            code_name = w.code_name.clone();
            server = true;
        }
        ErrorKind::Write(WriteFailure::WriteConcernError(w)) => {
            code = Some(w.code);
            code_name = Some(w.code_name.clone()).filter(|n| !n.is_empty());
            server = true;
        }
        ErrorKind::InsertMany(im) => {
            server = true;
            let mut reply = response.take().unwrap_or_default();
            if let Some(errors) = &im.write_errors {
                if let Some(first) = errors.first() {
                    code = Some(first.code);
                    code_name = first.code_name.clone();
                }
                let list: Vec<Bson> = errors
                    .iter()
                    .map(|w| {
                        let mut d = doc! {"index": w.index as i64, "code": w.code, "errmsg": w.message.clone()};
                        if let Some(n) = &w.code_name {
                            d.insert("codeName", n.clone());
                        }
                        if let Some(info) = &w.details {
                            d.insert("errInfo", info.clone());
                        }
                        Bson::Document(d)
                    })
                    .collect();
                reply.insert("writeErrors", list);
            }
            if let Some(w) = &im.write_concern_error {
                if code.is_none() {
                    code = Some(w.code);
                    code_name = Some(w.code_name.clone()).filter(|n| !n.is_empty());
                }
                let mut d = doc! {"code": w.code, "errmsg": w.message.clone()};
                if !w.code_name.is_empty() {
                    d.insert("codeName", w.code_name.clone());
                }
                if let Some(info) = &w.details {
                    d.insert("errInfo", info.clone());
                }
                reply.insert("writeConcernError", d);
            }
            response = Some(reply);
        }
        _ => {}
    }
    let network = matches!(e.kind.as_ref(), ErrorKind::Io(_) | ErrorKind::ConnectionPoolCleared { .. });
    let timeout = matches!(e.kind.as_ref(), ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::TimedOut)
        || matches!(e.kind.as_ref(), ErrorKind::ServerSelection { .. })
        || code == Some(50);
    let mut labels: Vec<String> = e.labels().iter().cloned().collect();
    labels.sort();
    let mut d = doc! {
        "kind": "driverError",
        "message": e.kind.to_string(),
        "type": error_type_name(e),
        "code": code.map(Bson::Int32).unwrap_or(Bson::Null),
        "codeName": code_name.map(Bson::String).unwrap_or(Bson::Null),
        "errorLabels": labels,
        "isClientError": !server,
        "isNetworkError": network,
        "isTimeoutError": timeout,
    };
    if let Some(r) = response {
        d.insert("errorResponse", r);
    }
    d
}
