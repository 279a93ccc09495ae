//! What both transports read of a JSON-RPC message before rmcp does, for
//! the messages rmcp does not answer: a message it cannot read, one nested
//! too deeply to parse, and batches (JSON-RPC 2.0 arrays of messages, which
//! MCP allows in protocol 2025-03-26 only and rmcp does not read at all).
//!
//! A message nested deeper than serde_json's limit ([`MAX_DEPTH`]) cannot be
//! parsed, but its top level can be read without descending into it: so it
//! is answered with its own id, and the client that sent it does not wait
//! for an answer that never comes. Batches are split the same way, and each
//! member is then read and answered as if it had come alone.

use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};

/// How deep serde_json (and so rmcp) reads arrays and objects, counting the
/// message itself: its default recursion limit.
pub const MAX_DEPTH: usize = 128;

/// The most messages a batch may hold.
pub const MAX_BATCH: usize = 20;

/// A JSON-RPC error message, as the transports write their own.
pub fn error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

/// Whether a session of `version` may send batches: 2025-03-26 is the one
/// version that has them (2025-06-18 removed them).
pub fn allows_batches(version: &ProtocolVersion) -> bool {
    *version == ProtocolVersion::V_2025_03_26
}

/// Whether serde_json refused a text for its depth alone (so far).
pub fn is_too_deep(err: &serde_json::Error) -> bool {
    err.is_syntax() && err.to_string().starts_with("recursion limit exceeded")
}

/// The error detail of a message nested too deeply.
fn too_deep_detail() -> String {
    format!(
        "the message nests arrays and objects more than {MAX_DEPTH} levels deep (the message itself \
         counts as one), and {MAX_DEPTH} is the most this server reads"
    )
}

/// What a message looks like at its top level.
enum Shape {
    Array,
    Object {
        /// Its id, when that is a string or a number.
        id: Option<Value>,
        has_id: bool,
        has_method: bool,
    },
    Other,
}

impl Shape {
    fn of_value(value: &Value) -> Self {
        match value {
            Value::Array(_) => Shape::Array,
            Value::Object(m) => Shape::Object {
                id: m.get("id").filter(|id| id.is_string() || id.is_number()).cloned(),
                has_id: m.contains_key("id"),
                has_method: m.contains_key("method"),
            },
            _ => Shape::Other,
        }
    }

    /// The shape of a well-formed JSON text, read without descending into
    /// its values; `None` when the text is not JSON.
    fn scan(text: &[u8]) -> Option<Self> {
        Some(match top_level(text)? {
            TopLevel::Array(_) => Shape::Array,
            TopLevel::Object(members) => {
                let field = |name: &str| members.iter().rev().find(|(key, _)| key_is(key, name));
                let id = field("id")
                    .and_then(|(_, raw)| serde_json::from_slice::<Value>(raw).ok())
                    .filter(|id| id.is_string() || id.is_number());
                Shape::Object { id, has_id: field("id").is_some(), has_method: field("method").is_some() }
            }
            TopLevel::Other => Shape::Other,
        })
    }

    /// The answer to a message of this shape that cannot be read for
    /// `detail`; none for a notification (nobody waits for it).
    fn answer(self, detail: &str) -> Option<Value> {
        match self {
            Shape::Array => Some(error(Value::Null, -32600, "Invalid Request: batches are not supported")),
            Shape::Object { id, has_id, has_method } => match (id, has_method) {
                (Some(id), true) => Some(error(id, -32602, format!("Invalid params: {detail}"))),
                (Some(id), false) => Some(error(id, -32600, format!("Invalid Request: {detail}"))),
                (None, true) if !has_id => None,
                (None, _) => Some(error(Value::Null, -32600, format!("Invalid Request: {detail}"))),
            },
            Shape::Other => Some(error(Value::Null, -32600, "Invalid Request: a message is a JSON object")),
        }
    }
}

/// The answer to a line that is not a message rmcp reads (`err` is why),
/// if any: a broken notification gets none. A message nested too deeply
/// to parse is answered with its own id, naming the limit.
pub fn reject(line: &[u8], err: &serde_json::Error) -> Option<Value> {
    reject_read(line, serde_json::from_slice::<Value>(line), err)
}

/// [`reject`], with `read` the line read as JSON.
pub(crate) fn reject_read(
    line: &[u8],
    read: Result<Value, serde_json::Error>,
    err: &serde_json::Error,
) -> Option<Value> {
    let not_json = || Some(error(Value::Null, -32700, "Parse error: the line is not JSON"));
    match read {
        Ok(value) => Shape::of_value(&value).answer(&lf_core::clip(&err.to_string(), 300)),
        Err(e) if is_too_deep(&e) => match Shape::scan(line) {
            Some(shape) => shape.answer(&too_deep_detail()),
            None => not_json(),
        },
        Err(_) => not_json(),
    }
}

/// The answer to `text` when it is well-formed JSON nested too deeply to
/// parse: with its id when it has one (a notification too, which a caller
/// that must answer something answers with this).
pub fn too_deep(text: &[u8]) -> Option<Value> {
    let shape = Shape::scan(text)?;
    let detail = too_deep_detail();
    Some(match shape {
        Shape::Object { id: None, has_id: false, has_method: true } => {
            error(Value::Null, -32600, format!("Invalid Request: {detail}"))
        }
        shape => shape.answer(&detail)?,
    })
}

/// Why a batch is not answered message by message.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The session's protocol version has no batches.
    NotSupported,
    Empty,
    /// More than [`MAX_BATCH`] messages: how many.
    TooMany(usize),
}

impl Refusal {
    /// The error to answer with, with `not_supported` as the message of
    /// [`Refusal::NotSupported`] (each transport words it its own way).
    pub fn answer(&self, not_supported: &str) -> Value {
        let message = match self {
            Refusal::NotSupported => not_supported.to_owned(),
            Refusal::Empty => "Invalid Request: an empty batch; send at least one message".to_owned(),
            Refusal::TooMany(n) => {
                format!("Invalid Request: a batch may hold at most {MAX_BATCH} messages; this one holds {n}")
            }
        };
        error(Value::Null, -32600, message)
    }
}

/// `text` as a batch, when it is a well-formed JSON array: its members'
/// texts when `allowed` (see [`allows_batches`]) and there are 1 to
/// [`MAX_BATCH`] of them. `None` when it is anything else, a malformed
/// array included (the transports answer that as any text that is not JSON).
pub fn batch(text: &[u8], allowed: bool) -> Option<Result<Vec<&[u8]>, Refusal>> {
    if first_byte(text) != Some(b'[') {
        return None;
    }
    let TopLevel::Array(members) = top_level(text)? else { return None };
    Some(match members.len() {
        _ if !allowed => Err(Refusal::NotSupported),
        0 => Err(Refusal::Empty),
        n if n > MAX_BATCH => Err(Refusal::TooMany(n)),
        _ => Ok(members),
    })
}

/// The first byte of `text` that is not JSON whitespace.
pub fn first_byte(text: &[u8]) -> Option<u8> {
    text.iter().copied().find(|b| !is_space(*b))
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The top level of a JSON text: object members (raw key, raw value),
/// array members, or some other value.
enum TopLevel<'a> {
    Object(Vec<(&'a [u8], &'a [u8])>),
    Array(Vec<&'a [u8]>),
    Other,
}

/// Whether the raw JSON string `key` (quotes included) is `name`.
fn key_is(key: &[u8], name: &str) -> bool {
    if key.contains(&b'\\') {
        serde_json::from_slice::<String>(key).is_ok_and(|k| k == name)
    } else {
        &key[1..key.len() - 1] == name.as_bytes()
    }
}

/// Reads `text`'s top level, checking that the whole text is JSON without
/// recursing into it; `None` when it is not JSON.
fn top_level(text: &[u8]) -> Option<TopLevel<'_>> {
    // Strings must be UTF-8, as serde_json reads them; outside strings any
    // other byte is refused by the scan.
    std::str::from_utf8(text).ok()?;
    let mut scan = Scan { text, at: 0 };
    scan.space();
    let top = match scan.peek()? {
        b'{' => TopLevel::Object(scan.members(b'}', |scan| {
            let key = scan.raw(Scan::string)?;
            scan.space();
            scan.expect(b':')?;
            scan.space();
            Some((key, scan.raw(Scan::value)?))
        })?),
        b'[' => TopLevel::Array(scan.members(b']', |scan| scan.raw(Scan::value))?),
        _ => {
            scan.value()?;
            TopLevel::Other
        }
    };
    scan.space();
    (scan.at == text.len()).then_some(top)
}

/// A position in a JSON text being checked.
struct Scan<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        (self.next()? == b).then_some(())
    }

    fn space(&mut self) {
        while self.peek().is_some_and(is_space) {
            self.at += 1;
        }
    }

    /// The members of the array or object that opens here, each read by
    /// `member`, up to `close`.
    fn members<T>(&mut self, close: u8, member: impl Fn(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        self.at += 1;
        let mut members = Vec::new();
        self.space();
        if self.peek()? == close {
            self.at += 1;
            return Some(members);
        }
        loop {
            self.space();
            members.push(member(self)?);
            self.space();
            match self.next()? {
                b',' => {}
                b if b == close => return Some(members),
                _ => return None,
            }
        }
    }

    /// The text `read` consumes.
    fn raw(&mut self, read: fn(&mut Self) -> Option<()>) -> Option<&'a [u8]> {
        let from = self.at;
        read(self)?;
        Some(&self.text[from..self.at])
    }

    fn string(&mut self) -> Option<()> {
        self.expect(b'"')?;
        loop {
            match self.next()? {
                b'"' => return Some(()),
                b'\\' => match self.next()? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                    b'u' => {
                        for _ in 0..4 {
                            self.next().filter(u8::is_ascii_hexdigit)?;
                        }
                    }
                    _ => return None,
                },
                0..=0x1f => return None,
                _ => {}
            }
        }
    }

    fn digits(&mut self) -> Option<()> {
        self.next().filter(u8::is_ascii_digit)?;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        Some(())
    }

    fn number(&mut self) -> Option<()> {
        if self.peek()? == b'-' {
            self.at += 1;
        }
        if self.peek()? == b'0' {
            self.at += 1;
        } else {
            self.digits()?;
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.digits()?;
        }
        Some(())
    }

    fn word(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        (self.text.get(self.at..end)? == word).then(|| self.at = end)
    }

    /// One value, however deeply nested, without recursion: the open
    /// arrays and objects are a stack.
    fn value(&mut self) -> Option<()> {
        let mut open: Vec<u8> = Vec::new();
        loop {
            // A value starts here.
            self.space();
            match self.peek()? {
                b'{' | b'[' => {
                    let close = if self.next()? == b'{' { b'}' } else { b']' };
                    self.space();
                    if self.peek()? == close {
                        self.at += 1;
                    } else {
                        if close == b'}' {
                            self.member_key()?;
                        }
                        open.push(close);
                        continue;
                    }
                }
                b'"' => self.string()?,
                b't' => self.word(b"true")?,
                b'f' => self.word(b"false")?,
                b'n' => self.word(b"null")?,
                b'-' | b'0'..=b'9' => self.number()?,
                _ => return None,
            }
            // A value ended: close what it ends, or go on to the next one.
            loop {
                let Some(&close) = open.last() else { return Some(()) };
                self.space();
                match self.next()? {
                    b',' => {
                        if close == b'}' {
                            self.space();
                            self.member_key()?;
                        }
                        break;
                    }
                    b if b == close => {
                        open.pop();
                    }
                    _ => return None,
                }
            }
        }
    }

    /// `"key":` of an object member.
    fn member_key(&mut self) -> Option<()> {
        self.string()?;
        self.space();
        self.expect(b':')
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    /// The limit named in answers is serde_json's: a message `MAX_DEPTH`
    /// deep is read, one level more is refused for its depth.
    #[test]
    fn the_limit_is_serde_jsons() {
        let message = |depth: usize| {
            // The message and `params` are two levels.
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{}}}"#, nested(depth - 2)).into_bytes()
        };
        assert!(serde_json::from_slice::<Value>(&message(MAX_DEPTH)).is_ok());
        let err = serde_json::from_slice::<Value>(&message(MAX_DEPTH + 1)).unwrap_err();
        assert!(is_too_deep(&err), "{err}");
        assert!(!is_too_deep(&serde_json::from_slice::<Value>(b"[1,").unwrap_err()));
    }

    #[test]
    fn too_deep_messages_are_answered_with_their_id() {
        let deep = nested(2_000);
        let answer = |line: String| {
            let err = serde_json::from_str::<Value>(&line).unwrap_err();
            reject(line.as_bytes(), &err)
        };
        let a = answer(format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"get_lens","arguments":{{"x":{deep}}}}}}}"#
        ))
        .unwrap();
        assert_eq!(a["id"], 7);
        assert_eq!(a["error"]["code"], -32602);
        assert!(a["error"]["message"].as_str().unwrap().contains("more than 128 levels deep"), "{a}");
        // The id is found wherever it is, escaped or not.
        let a = answer(format!(r#"{{"params":{deep}, "\u0069d" : "abc","method":"m","jsonrpc":"2.0"}}"#))
            .unwrap();
        assert_eq!(a["id"], "abc");
        // Without a method: an Invalid Request, with its id.
        let a = answer(format!(r#"{{"jsonrpc":"2.0","id":8,"result":{deep}}}"#)).unwrap();
        assert_eq!((a["id"].as_i64(), a["error"]["code"].as_i64()), (Some(8), Some(-32600)));
        // A notification gets no answer; an id that is not a string or a number is null.
        assert_eq!(answer(format!(r#"{{"jsonrpc":"2.0","method":"m","params":{deep}}}"#)), None);
        let a = answer(format!(r#"{{"jsonrpc":"2.0","id":[[1]],"method":"m","params":{deep}}}"#)).unwrap();
        assert_eq!(a["id"], Value::Null);
        // Not JSON after all: the usual parse error.
        let a = answer(format!(r#"{{"jsonrpc":"2.0","id":9,"method":"m","params":{deep}"#)).unwrap();
        assert_eq!((a["id"].clone(), a["error"]["code"].as_i64()), (Value::Null, Some(-32700)));
        let a = answer(format!(r#"{{"id":9,"params":{}}}"#, "[".repeat(2_000))).unwrap();
        assert_eq!(a["error"]["code"], -32700);
        // Over HTTP, where every request has an answer, a notification gets one too.
        let note =
            too_deep(format!(r#"{{"jsonrpc":"2.0","method":"m","params":{deep}}}"#).as_bytes()).unwrap();
        assert_eq!((note["id"].clone(), note["error"]["code"].as_i64()), (Value::Null, Some(-32600)));
    }

    #[test]
    fn rejections() {
        let answer = |line: &str| {
            let err = serde_json::from_str::<rmcp::model::ClientJsonRpcMessage>(line).unwrap_err();
            reject(line.as_bytes(), &err)
        };
        assert_eq!(answer("{not json}").unwrap()["error"]["code"], -32700);
        assert_eq!(answer("[1,2]").unwrap()["error"]["code"], -32600);
        let a = answer(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"x"}"#).unwrap();
        assert_eq!((a["id"].as_i64(), a["error"]["code"].as_i64()), (Some(7), Some(-32602)));
        assert_eq!(answer("42").unwrap()["error"]["code"], -32600);
        assert!(answer(r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}"#).is_none());
    }

    #[test]
    fn batches() {
        let text = br#" [ {"a":1} , 2,"x" ,[[]] ] "#;
        assert_eq!(batch(text, true).unwrap().unwrap(), [&br#"{"a":1}"#[..], b"2", br#""x""#, b"[[]]"]);
        assert_eq!(batch(b"[]", true), Some(Err(Refusal::Empty)));
        assert_eq!(batch(b"[1]", false), Some(Err(Refusal::NotSupported)));
        assert_eq!(batch(b"[]", false), Some(Err(Refusal::NotSupported)));
        let many = format!("[{}1]", "1,".repeat(MAX_BATCH));
        assert_eq!(batch(many.as_bytes(), true), Some(Err(Refusal::TooMany(MAX_BATCH + 1))));
        let most = format!("[{}1]", "1,".repeat(MAX_BATCH - 1));
        assert_eq!(batch(most.as_bytes(), true).unwrap().unwrap().len(), MAX_BATCH);
        for not_a_batch in ["{}", "[1,", "[1]]", "", "[1 2]", "x[1]"] {
            assert_eq!(batch(not_a_batch.as_bytes(), true), None, "{not_a_batch}");
        }
        let deep = format!("[{},1]", nested(5_000));
        assert_eq!(batch(deep.as_bytes(), true).unwrap().unwrap().len(), 2);
        let too_many = Refusal::TooMany(21).answer("no");
        assert!(too_many["error"]["message"].as_str().unwrap().contains("at most 20"), "{too_many}");
        assert_eq!(Refusal::NotSupported.answer("no")["error"]["message"], "no");
    }

    /// A JSON text read by serde_json (whose reading of a float may differ
    /// from the float it was written from in the last place).
    fn reread(text: &[u8]) -> Value {
        serde_json::from_slice(text).unwrap()
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
            any::<String>().prop_map(Value::String),
        ];
        leaf.prop_recursive(6, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::vec((any::<String>(), inner), 0..8)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Whatever serde_json writes, the scan reads, finding the same
        /// top-level members.
        #[test]
        fn the_scan_reads_what_serde_json_writes(value in json_value(), pretty in any::<bool>()) {
            let text = if pretty { serde_json::to_vec_pretty(&value) } else { serde_json::to_vec(&value) }.unwrap();
            let top = top_level(&text);
            prop_assert!(top.is_some());
            match (top.unwrap(), &value) {
                (TopLevel::Array(members), Value::Array(values)) => {
                    prop_assert_eq!(members.len(), values.len());
                    for (raw, v) in members.iter().zip(values) {
                        prop_assert_eq!(reread(raw), reread(&serde_json::to_vec(v).unwrap()));
                    }
                }
                (TopLevel::Object(members), Value::Object(values)) => {
                    prop_assert_eq!(members.len(), values.len());
                    for ((key, raw), (k, v)) in members.iter().zip(values) {
                        prop_assert_eq!(&serde_json::from_slice::<String>(key).unwrap(), k);
                        prop_assert!(key_is(key, k));
                        prop_assert_eq!(reread(raw), reread(&serde_json::to_vec(v).unwrap()));
                    }
                }
                (TopLevel::Other, v) => prop_assert!(!v.is_array() && !v.is_object()),
                _ => prop_assert!(false, "another kind of value"),
            }
        }

        /// On any text the scan never panics, and what it reads serde_json
        /// reads too (the scan is no more lenient).
        #[test]
        fn the_scan_reads_only_json(text in "[\\[\\]{}:, \"\\\\a-z0-9.eE+-]{0,40}") {
            if top_level(text.as_bytes()).is_some() {
                let parsed = serde_json::from_str::<Value>(&text);
                // Numbers too large for an f64 are the one thing the scan
                // does not check.
                let out_of_range = parsed.as_ref().is_err_and(|e| e.to_string().starts_with("number out of range"));
                prop_assert!(parsed.is_ok() || out_of_range, "{text:?}: {parsed:?}");
            }
        }

        #[test]
        fn the_scan_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = top_level(&bytes);
            let _ = batch(&bytes, true);
        }
    }
}
