//! Canonical Extended JSON in and out (protocol section 2), through the `bson` crate's own conversions.
use mongodb::bson::{Bson, Document};
use serde_json::Value;

/// A JSON value read as Extended JSON (canonical or relaxed) into BSON, keeping key order.
pub fn to_bson(value: &Value) -> Result<Bson, String> {
    Bson::try_from(value.clone()).map_err(|e| format!("not Extended JSON: {e}"))
}

pub fn to_doc(value: &Value) -> Result<Document, String> {
    match to_bson(value)? {
        Bson::Document(d) => Ok(d),
        other => Err(format!("expected a document, got {other}")),
    }
}

/// A BSON value as canonical Extended JSON.
pub fn to_json(value: Bson) -> Value {
    value.into_canonical_extjson()
}

/// A plain JSON integer, or `{"$numberInt"|"$numberLong": "..."}` (section 2's lenient reading).
pub fn plain_int(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some(i)
            } else if let Some(f) = n.as_f64() {
                if f.fract() == 0.0 && f.abs() < 9.0e15 {
                    Some(f as i64)
                } else {
                    None
                }
            } else {
                None
            }
        }
        Value::Object(map) if map.len() == 1 => {
            let inner = map.get("$numberInt").or_else(|| map.get("$numberLong"))?;
            inner.as_str()?.parse().ok()
        }
        _ => None,
    }
}

/// An option's number (Int32, Int64 or an integral Double) as a plain integer (section 2.1).
pub fn bson_int(value: &Bson) -> Option<i64> {
    match value {
        Bson::Int32(i) => Some(*i as i64),
        Bson::Int64(i) => Some(*i),
        Bson::Double(f) if f.fract() == 0.0 => Some(*f as i64),
        _ => None,
    }
}
