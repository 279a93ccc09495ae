//! A `tools/call` read straight from its text, exactly as rmcp reads one
//! ([`ToolCall`]): the one reading of a call, which the direct path answers
//! and which reaches rmcp as its own message.

use std::fmt;

use rmcp::model::{
    CallToolRequest, CallToolRequestMethod, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest,
    InputResponses, JsonObject, JsonRpcVersion2_0, RequestId, RequestMetaObject,
};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A `tools/call` request read straight from its text, exactly as rmcp
/// reads one: the same fields with the same types, every other member read
/// whole and checked as rmcp's buffered reading checks it ([`Checked`]),
/// and refused where rmcp does not read a call (a duplicate member, a
/// `result` or an `error` beside the method, an array for an object). A
/// message this reads rmcp reads as the same call; one it does not read is
/// left to rmcp's own reading.
#[derive(Debug)]
pub(crate) struct ToolCall {
    pub(super) id: RequestId,
    /// The request's `_meta`, which rmcp keeps in the request's extensions.
    meta: Option<RequestMetaObject>,
    /// Without its `_meta`, as rmcp reads it.
    pub(super) params: CallToolRequestParams,
}

impl ToolCall {
    pub(super) fn parse(text: &[u8]) -> Option<Self> {
        serde_json::from_slice(text).ok()
    }

    /// Whether its `_meta` names a protocol version. rmcp checks such a call
    /// against the versions it supports and the inline era's required
    /// metadata: it is not one to answer directly.
    pub(super) fn names_protocol_version(&self) -> bool {
        self.meta.as_ref().is_some_and(|meta| meta.protocol_version().is_some())
    }

    /// The W3C `traceparent` its `_meta` carries, kept only when spans
    /// are exported.
    pub(super) fn traceparent(&self) -> Option<String> {
        let meta = self.meta.as_ref()?;
        crate::mcp::trace::continues().then(|| meta.get_traceparent().map(str::to_owned)).flatten()
    }

    /// The message rmcp reads from the same text.
    pub(super) fn into_message(self) -> ClientJsonRpcMessage {
        let mut request = CallToolRequest::new(self.params);
        if let Some(meta) = self.meta {
            request.extensions.insert(meta);
        }
        ClientJsonRpcMessage::request(ClientRequest::CallToolRequest(request), self.id)
    }
}

/// A member already read, on a second reading.
fn set<T, E: de::Error>(slot: &mut Option<T>, value: T, field: &'static str) -> Result<(), E> {
    match slot {
        Some(_) => Err(E::duplicate_field(field)),
        None => {
            *slot = Some(value);
            Ok(())
        }
    }
}

/// An enum of the member names a reader tells apart, read from a member's
/// name (any other name is `Other`).
macro_rules! member_names {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $($key:literal)|+,)* }) => {
        $(#[$meta])*
        enum $name {
            $($(#[$vmeta])* $variant,)*
            Other,
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct KeyVisitor;
                impl Visitor<'_> for KeyVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str("a member name")
                    }
                    fn visit_str<E: de::Error>(self, key: &str) -> Result<$name, E> {
                        Ok(match key {
                            $($($key)|+ => $name::$variant,)*
                            _ => $name::Other,
                        })
                    }
                }
                deserializer.deserialize_identifier(KeyVisitor)
            }
        }
    };
}

member_names!(
    /// The members of a message [`ToolCall`] tells apart.
    CallKey {
        Jsonrpc = "jsonrpc",
        Id = "id",
        Method = "method",
        Params = "params",
        /// A message with a result or an error is not a request.
        Answer = "result" | "error",
    }
);

impl<'de> Deserialize<'de> for ToolCall {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CallVisitor;
        impl<'de> Visitor<'de> for CallVisitor {
            type Value = ToolCall;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a tools/call request")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ToolCall, A::Error> {
                let (mut jsonrpc, mut id, mut method, mut params) = (None, None, None, None);
                while let Some(key) = map.next_key()? {
                    match key {
                        CallKey::Jsonrpc => {
                            set(&mut jsonrpc, map.next_value::<JsonRpcVersion2_0>()?, "jsonrpc")?
                        }
                        CallKey::Id => set(&mut id, map.next_value::<RequestId>()?, "id")?,
                        CallKey::Method => {
                            set(&mut method, map.next_value::<CallToolRequestMethod>()?, "method")?
                        }
                        CallKey::Params => set(&mut params, map.next_value::<Params>()?, "params")?,
                        CallKey::Answer => return Err(de::Error::custom("a response, not a request")),
                        CallKey::Other => {
                            map.next_value::<Checked>()?;
                        }
                    }
                }
                jsonrpc.ok_or_else(|| de::Error::missing_field("jsonrpc"))?;
                method.ok_or_else(|| de::Error::missing_field("method"))?;
                let id = id.ok_or_else(|| de::Error::missing_field("id"))?;
                let Params { meta, params } = params.ok_or_else(|| de::Error::missing_field("params"))?;
                Ok(ToolCall { id, meta, params })
            }
        }
        deserializer.deserialize_map(CallVisitor)
    }
}

/// A call's `params`, read as rmcp reads them.
struct Params {
    meta: Option<RequestMetaObject>,
    params: CallToolRequestParams,
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ParamsVisitor;
        impl<'de> Visitor<'de> for ParamsVisitor {
            type Value = Params;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a tool call's params")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params, A::Error> {
                let (mut meta, mut name, mut arguments) = (None, None, None);
                let (mut input_responses, mut request_state) = (None, None);
                while let Some(key) = map.next_key::<ParamsKey>()? {
                    match key {
                        ParamsKey::Meta => set(&mut meta, map.next_value::<Option<JsonObject>>()?, "_meta")?,
                        ParamsKey::Name => set(&mut name, map.next_value::<String>()?, "name")?,
                        ParamsKey::Arguments => {
                            set(&mut arguments, map.next_value::<Option<JsonObject>>()?, "arguments")?
                        }
                        ParamsKey::InputResponses => set(
                            &mut input_responses,
                            map.next_value::<Option<InputResponses>>()?,
                            "inputResponses",
                        )?,
                        ParamsKey::RequestState => {
                            set(&mut request_state, map.next_value::<Option<String>>()?, "requestState")?
                        }
                        ParamsKey::Other => {
                            map.next_value::<Checked>()?;
                        }
                    }
                }
                let mut params =
                    CallToolRequestParams::new(name.ok_or_else(|| de::Error::missing_field("name"))?);
                params.arguments = arguments.flatten();
                params.input_responses = input_responses.flatten();
                params.request_state = request_state.flatten();
                Ok(Params { meta: meta.flatten().map(RequestMetaObject::from), params })
            }
        }
        deserializer.deserialize_map(ParamsVisitor)
    }
}

member_names!(
    /// The members of a call's `params` [`Params`] tells apart.
    ParamsKey {
        Meta = "_meta",
        Name = "name",
        Arguments = "arguments",
        InputResponses = "inputResponses",
        RequestState = "requestState",
    }
);

/// A value read whole and dropped, checked as serde_json checks a value it
/// keeps (numbers in range, strings of UTF-8, the depth limit), as rmcp's
/// buffered reading of a message checks the members it does not use.
/// (serde's `IgnoredAny`, which derived readers use for unknown members,
/// checks less.)
struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Checked)
    }
}

impl<'de> Visitor<'de> for Checked {
    type Value = Checked;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_unit<E>(self) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_none<E>(self) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Checked, D::Error> {
        Checked::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        while map.next_entry::<Checked, Checked>()?.is_some() {}
        Ok(Checked)
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{GetExtensions, JsonRpcMessage, JsonRpcRequest};

    use super::*;

    /// A tool call read here is the call rmcp reads, with the same id, name,
    /// arguments and `_meta`; a line rmcp does not read as a tool call is
    /// not read here either.
    #[test]
    fn parity_tool_calls_read_as_rmcp_reads_them() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_lens","arguments":{"lens_id":"x","n":1.5}}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"n","_meta":{"progressToken":1}},"extra":true}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"n","_meta":null,"arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"n","requestState":"s","inputResponses":{"k":{}}}}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"n","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            // Not tool calls, or broken ones.
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"n","_meta":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"n","requestState":3}}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"n","inputResponses":[]}}"#,
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"n","arguments":[1]}}"#,
            r#"{"jsonrpc":"1.0","id":11,"method":"tools/call","params":{"name":"n"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"n"}}"#,
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/list","params":{"name":"n"}}"#,
            r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"n"}}"#,
            r#"[{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"n"}}]"#,
        ];
        let mut read = 0;
        for line in lines {
            let ours = ToolCall::parse(line.as_bytes());
            let rmcps = match serde_json::from_str::<ClientJsonRpcMessage>(line) {
                Ok(ClientJsonRpcMessage::Request(JsonRpcRequest {
                    id,
                    request: ClientRequest::CallToolRequest(call),
                    ..
                })) => Some((id, call)),
                _ => None,
            };
            match (ours, rmcps) {
                (None, None) => {}
                (Some(ours), Some((id, call))) => {
                    read += 1;
                    assert_eq!(ours.id, id, "{line}");
                    assert_eq!(ours.params.name, call.params.name, "{line}");
                    assert_eq!(ours.params.arguments, call.params.arguments, "{line}");
                    let meta = call.extensions().get::<RequestMetaObject>().cloned().unwrap_or_default();
                    assert_eq!(ours.meta.unwrap_or_default(), meta, "{line}");
                }
                (ours, rmcps) => {
                    panic!("{line}: read here {}, by rmcp {}", ours.is_some(), rmcps.is_some())
                }
            }
        }
        assert_eq!(read, 5);
        let inline = ToolCall::parse(lines[4].as_bytes()).unwrap();
        assert!(inline.names_protocol_version());
        assert!(!ToolCall::parse(lines[1].as_bytes()).unwrap().names_protocol_version());
    }

    /// The call rmcp reads from `text`, if it reads one.
    fn rmcps_call(text: &[u8]) -> Option<(RequestId, CallToolRequest)> {
        match serde_json::from_slice::<ClientJsonRpcMessage>(text) {
            Ok(ClientJsonRpcMessage::Request(JsonRpcRequest {
                id,
                request: ClientRequest::CallToolRequest(call),
                ..
            })) => Some((id, call)),
            _ => None,
        }
    }

    /// However odd the text, a call is read here exactly when rmcp reads
    /// one, and the message made of the reading is rmcp's: the same JSON,
    /// the same `_meta` in its extensions.
    #[test]
    fn parity_calls_read_here_are_rmcps_messages() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let call = |rest: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"n"}}{rest}}}"#)
        };
        let mut lines: Vec<Vec<u8>> = [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_lens","arguments":{"lens_id":"x","n":1.5}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"n","_meta":{"progressToken":1}},"extra":true}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"n","requestState":"s","inputResponses":{"k":{}}}}"#.to_owned(),
            r#"{"params":{"arguments":{"a":[1,{"b":null}]},"name":"n"},"id":"s","method":"tools/call","jsonrpc":"2.0"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","\u0069d":1,"method":"tools\/call","params":{"n\u0061me":"n\u00e9"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":7.0,"method":"tools/call","params":{"name":"n"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","task":{"ttl":1},"_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":5}}}"#.to_owned(),
            // A response, not a request.
            call(r#","result":{}"#),
            call(r#","error":null"#),
            // Members rmcp reads whole though it does not use them.
            call(r#","x":1e999"#),
            call(&format!(r#","x":{deep}"#)),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","x":-1e999}}"#.to_owned(),
            // Duplicates, arrays for objects.
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"n"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}"#.to_owned(),
            r#"["2.0",1,"tools/call",{"name":"n"}]"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[null,"n"]}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n"}"#.to_owned(),
        ]
        .into_iter()
        .map(String::into_bytes)
        .collect();
        // A string that is not UTF-8, where nothing reads it.
        lines.push(
            [
                &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n"},"x":""#[..],
                b"\xff\"}",
            ]
            .concat(),
        );
        let mut read = 0;
        for line in &lines {
            let shown = String::from_utf8_lossy(line);
            match (ToolCall::parse(line), rmcps_call(line)) {
                (None, None) => {}
                (Some(ours), Some((id, call))) => {
                    read += 1;
                    let ours = ours.into_message();
                    let rmcps =
                        ClientJsonRpcMessage::request(ClientRequest::CallToolRequest(call.clone()), id);
                    assert_eq!(
                        serde_json::to_value(&ours).unwrap(),
                        serde_json::to_value(&rmcps).unwrap(),
                        "{shown}"
                    );
                    let JsonRpcMessage::Request(JsonRpcRequest {
                        request: ClientRequest::CallToolRequest(ours),
                        ..
                    }) = ours
                    else {
                        panic!("{shown}: not a call")
                    };
                    assert_eq!(ours.params.meta, call.params.meta, "{shown}");
                    assert_eq!(
                        ours.extensions().get::<RequestMetaObject>(),
                        call.extensions().get::<RequestMetaObject>(),
                        "{shown}"
                    );
                }
                (ours, rmcps) => panic!("{shown}: read here {}, by rmcp {}", ours.is_some(), rmcps.is_some()),
            }
        }
        assert_eq!(read, 7);
    }
}
