//! Asking the person behind a client (MCP elicitation, form mode) where a
//! call would otherwise answer CONFIRMATION_REQUIRED or MISSING_PARAMS and
//! leave the model to ask and call again.
//!
//! One mechanism for every tool ([`LfServer::call_asking`]): a call needs
//! the person's confirmation when its tool is Destructive and takes no
//! `confirm` (asked before it runs), or when it answers
//! CONFIRMATION_REQUIRED (asked after: nothing changed yet); a lens run
//! (`run_lens`, `find_and_run_lens`, `prompts/get`) short of required
//! parameters gets them in one form built from the lens's typed
//! parameters. Accepted, the call runs as if the model had given
//! `confirm: true` or the values; declined or dismissed, it answers
//! DECLINED and changes nothing.
//!
//! How the question travels depends on the era ([`Asker`]): a 2025-11-25
//! session sends `elicitation/create` through rmcp's peer and waits; a
//! 2026-07-28 request answers an `input_required` result whose
//! `inputRequests` hold the question, and the client's retry carries the
//! answer in `inputResponses`. An answer is honoured only beside the
//! `requestState` of the same question (a hash of its key and message):
//! accepting is no more than the client could say with `confirm: true`, so
//! nothing in it is trusted beyond that. A client that declared no form
//! elicitation is never asked, and its calls answer as before.

use std::collections::BTreeMap;

use lf_core::{Detail, ErrorCode, LensId, LfError, Principal, VersionId};
use lf_lens::template::{TypeHint, label_key};
use lf_lens::{Param, VersionSelector};
use rmcp::RoleServer;
use rmcp::model::{
    ClientCapabilities, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequiredResult, InputResponses, JsonObject, ProtocolVersion,
};
use rmcp::service::{Peer, RequestContext};
use serde_json::{Value, json};

use crate::LfServer;
use crate::catalog::tool::{Safety, ToolSpec};

/// One question for the person: what it asks and the form of the answer.
#[derive(Debug)]
pub(crate) struct Question {
    kind: Kind,
    message: String,
    schema: ElicitationSchema,
}

/// What a question is about, and its key in `inputRequests`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Go ahead with a call that changes or removes data.
    Confirm,
    /// The values of a lens's parameters.
    Params,
    /// The decision on a team run awaiting the person's approval.
    Decision,
}

impl Kind {
    fn key(self) -> &'static str {
        match self {
            Kind::Confirm => "confirm",
            Kind::Params => "params",
            Kind::Decision => "decision",
        }
    }
}

/// What the person answered.
#[derive(Debug)]
pub(crate) enum Reply {
    Accept(JsonObject),
    Decline,
    Cancel,
}

/// What asking came to: an answer, or (2026-07-28) the question to send
/// back in an `input_required` result.
pub(crate) enum Asked<T> {
    Done(T),
    Pending(Question),
}

/// How the person behind one request's client is asked.
pub(crate) enum Asker {
    /// A 2025-11-25 session: `elicitation/create` through rmcp's peer.
    Peer(Peer<RoleServer>),
    /// 2026-07-28: the answers and the state the request carries.
    Rounds { responses: InputResponses, state: Option<String> },
}

/// Whether `capabilities` declare form elicitation (an empty `elicitation`
/// object means form, as the 2025-11-25 spec reads it).
pub(crate) fn declares_form(capabilities: &ClientCapabilities) -> bool {
    capabilities.elicitation.as_ref().is_some_and(|e| e.form.is_some() || e.url.is_none())
}

impl Asker {
    /// How the request in `context` asks, with the answers and state its
    /// params carry (2026-07-28); none when its client declared no form
    /// elicitation, or cannot be sent a request (no session).
    pub(crate) fn of(
        context: &RequestContext<RoleServer>,
        responses: Option<InputResponses>,
        state: Option<String>,
    ) -> Option<Self> {
        if !context.client_capabilities().is_some_and(|c| declares_form(&c)) {
            return None;
        }
        let inline = context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        if inline {
            return Some(Asker::Rounds { responses: responses.unwrap_or_default(), state });
        }
        context.peer.peer_info().is_some().then(|| Asker::Peer(context.peer.clone()))
    }

    /// Asks `question`.
    pub(crate) async fn ask(&self, question: Question) -> Asked<Reply> {
        match self {
            Asker::Peer(peer) => {
                let params = ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: question.message,
                    requested_schema: question.schema,
                };
                match peer.create_elicitation(params).await {
                    Ok(result) => Asked::Done(reply_of(result)),
                    // A client that cannot answer has not agreed.
                    Err(e) => {
                        tracing::debug!(error = %e, "the client could not be asked");
                        Asked::Done(Reply::Cancel)
                    }
                }
            }
            Asker::Rounds { responses, state } => {
                let answered = responses
                    .get(question.kind.key())
                    .filter(|_| state.as_deref() == Some(question.state().as_str()))
                    .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok());
                match answered {
                    Some(result) => Asked::Done(reply_of(result)),
                    None => Asked::Pending(question),
                }
            }
        }
    }
}

fn reply_of(result: ElicitResult) -> Reply {
    match result.action {
        ElicitationAction::Accept => Reply::Accept(match result.content {
            Some(Value::Object(content)) => content,
            _ => JsonObject::new(),
        }),
        ElicitationAction::Decline => Reply::Decline,
        _ => Reply::Cancel,
    }
}

impl Question {
    /// The `requestState` that goes with it: its key and a hash of its
    /// message (FNV-1a, the same on every server and release).
    fn state(&self) -> String {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in self.message.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        format!("{}:{hash:016x}", self.kind.key())
    }

    /// The `input_required` result that asks it (2026-07-28).
    pub(crate) fn input_required(self) -> InputRequiredResult {
        let state = self.state();
        let key = self.kind.key().to_owned();
        let request = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: self.message,
            requested_schema: self.schema,
        });
        InputRequiredResult::new(
            Some(BTreeMap::from([(key, InputRequest::Elicitation(request))])),
            Some(state),
        )
    }

    /// Whether the person is asked to confirm.
    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }
}

/// Whether `tool` takes a `confirm` argument.
fn takes_confirm(tool: &ToolSpec) -> bool {
    has_property(tool, "confirm")
}

/// Whether `tool` resolves a lens with `param_values`.
fn takes_param_values(tool: &ToolSpec) -> bool {
    has_property(tool, "param_values")
}

fn has_property(tool: &ToolSpec, name: &str) -> bool {
    tool.input_schema.get("properties").and_then(Value::as_object).is_some_and(|p| p.contains_key(name))
}

/// Whether a call of `tool` may ask the person: what keeps it off the
/// direct path of a session whose client declared elicitation.
pub(crate) fn may_ask(tool: &ToolSpec) -> bool {
    tool.safety == Safety::Destructive || takes_confirm(tool) || takes_param_values(tool) || decides(tool)
}

/// Whether `tool` decides a team run awaiting approval: the person it
/// awaits is asked for the decision.
fn decides(tool: &ToolSpec) -> bool {
    tool.name == crate::groups::agent::DECIDE_APPROVAL
}

/// Whether a call of `tool` with `args` is confirmed before it runs: a
/// Destructive tool that takes no `confirm`, which would act unasked.
pub(crate) fn confirms_first(tool: &ToolSpec) -> bool {
    tool.safety == Safety::Destructive && !takes_confirm(tool)
}

/// Whether `args` already say `confirm: true`.
fn confirmed(args: &JsonObject) -> bool {
    args.get("confirm") == Some(&Value::Bool(true))
}

/// The question confirming a call of `tool` with `args`: its title, what
/// it acts on and what it does: the domain's words in a
/// CONFIRMATION_REQUIRED (`action`) when they say more than its name (a
/// closed battle cannot be undone), else the tool's description.
pub(crate) fn confirm_question(tool: &ToolSpec, args: &JsonObject, action: Option<&str>) -> Question {
    let on: Vec<String> = args
        .iter()
        .filter(|(k, _)| *k != "confirm")
        .filter_map(|(k, v)| match v {
            Value::String(s) => Some(format!("{k} {}", lf_core::clip(s, 80))),
            Value::Number(n) => Some(format!("{k} {n}")),
            Value::Bool(b) => Some(format!("{k} {b}")),
            _ => None,
        })
        .collect();
    // What it does: the description's sentences, less the one that tells
    // a model about `confirm`.
    let effect: Vec<&str> = match action.filter(|a| a.contains('(')) {
        Some(action) => vec![action.trim_end_matches(','), "."],
        None => {
            tool.description.split_inclusive(". ").map(str::trim).filter(|s| !s.contains("confirm")).collect()
        }
    };
    let mut message = tool.title.to_owned();
    if !on.is_empty() {
        message.push_str(&format!(" ({})", on.join(", ")));
    }
    message.push_str(": ");
    message.push_str(&effect.join(" ").replace(" .", "."));
    message.push_str(" Go ahead?");
    let schema = serde_json::from_value(json!({"type": "object", "properties": {}}))
        .expect("an empty form is an elicitation schema");
    Question { kind: Kind::Confirm, message, schema }
}

/// The question for the parameters of lens `title`'s version `params`:
/// `missing` required, and every optional one `given` lacks, with its
/// default shown.
pub(crate) fn params_question(
    title: &str,
    params: &[Param],
    missing: &[String],
    given: &[String],
) -> Question {
    let missing_keys: Vec<String> = missing.iter().map(|m| label_key(m)).collect();
    let given_keys: Vec<String> = given.iter().map(|g| label_key(g)).collect();
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for p in params {
        let key = p.key();
        let needed = missing_keys.contains(&key);
        if !(needed || (p.optional && !given_keys.contains(&key))) || properties.contains_key(&p.label) {
            continue;
        }
        properties.insert(p.label.clone(), field(p));
        if needed {
            required.push(p.label.clone());
        }
    }
    let message = format!("Lens \"{title}\" needs {}: fill them in to run it.", missing.join(", "));
    let schema = json!({"type": "object", "properties": properties, "required": required});
    let schema = serde_json::from_value(schema).unwrap_or_else(|e| {
        // A shape rmcp does not take (it should take all of them): every field as text.
        tracing::warn!(error = %e, "a lens's form fell back to text fields");
        let text = params_as_text(params, &required);
        serde_json::from_value(text).expect("a form of text fields is an elicitation schema")
    });
    Question { kind: Kind::Params, message, schema }
}

fn params_as_text(params: &[Param], required: &[String]) -> Value {
    let properties: serde_json::Map<String, Value> = params
        .iter()
        .filter(|p| required.contains(&p.label))
        .map(|p| (p.label.clone(), json!({"type": "string", "title": p.label})))
        .collect();
    json!({"type": "object", "properties": properties, "required": required})
}

/// One parameter as a form field: select options as an enum, numbers as
/// numbers, its default shown.
fn field(p: &Param) -> Value {
    let mut f = serde_json::Map::new();
    f.insert("title".into(), Value::from(p.label.as_str()));
    if let Some(d) = &p.description {
        f.insert("description".into(), Value::from(d.as_str()));
    }
    let default = p.default.as_deref();
    let multi = p.type_hint == Some(TypeHint::Multiselect);
    if !p.options.is_empty() {
        let options: Vec<Value> = p.options.iter().map(|o| Value::from(o.as_str())).collect();
        if multi {
            f.insert("type".into(), "array".into());
            f.insert("items".into(), json!({"type": "string", "enum": options}));
            if let Some(d) = default {
                let picked: Vec<&str> =
                    d.split(',').map(str::trim).filter(|v| p.options.iter().any(|o| o == v)).collect();
                f.insert("default".into(), json!(picked));
            }
        } else {
            f.insert("type".into(), "string".into());
            f.insert("enum".into(), Value::Array(options));
            if let Some(d) = default.filter(|d| p.options.iter().any(|o| o == d)) {
                f.insert("default".into(), d.into());
            }
        }
        return Value::Object(f);
    }
    let (kind, value): (&str, Option<Value>) = match p.type_hint {
        Some(TypeHint::Number | TypeHint::Float | TypeHint::Decimal) => {
            ("number", default.and_then(|d| d.trim().parse::<f64>().ok()).map(Value::from))
        }
        Some(TypeHint::Integer) => {
            ("integer", default.and_then(|d| d.trim().parse::<i64>().ok()).map(Value::from))
        }
        Some(TypeHint::Boolean) => {
            ("boolean", default.and_then(|d| d.trim().parse::<bool>().ok()).map(Value::from))
        }
        _ => ("string", default.map(Value::from)),
    };
    f.insert("type".into(), kind.into());
    let format = match p.type_hint {
        Some(TypeHint::Url) => Some("uri"),
        Some(TypeHint::Date) => Some("date"),
        Some(TypeHint::Datetime) => Some("date-time"),
        _ => None,
    };
    if let Some(format) = format {
        f.insert("format".into(), format.into());
    }
    if let Some(value) = value {
        f.insert("default".into(), value);
    }
    Value::Object(f)
}

/// The values a form answered, as lens parameter values (text): numbers
/// and booleans as written, a multiselect's picks joined by commas.
pub(crate) fn values_of(content: JsonObject) -> Vec<(String, String)> {
    content
        .into_iter()
        .filter_map(|(k, v)| {
            let text = match v {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Array(items) => items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "),
                _ => return None,
            };
            Some((k, text))
        })
        .collect()
}

/// DECLINED: the person said no (`reply`) to `what`; nothing changed.
pub(crate) fn declined(what: &str, reply: &Reply) -> LfError {
    let (how, answer) = match reply {
        Reply::Cancel => ("dismissed the question about", "cancel"),
        _ => ("declined", "decline"),
    };
    LfError::new(
        ErrorCode::Declined,
        format!("The user {how} {what}: nothing was done. Do not call it again unless the user asks for it."),
    )
    .with_detail("answer", Detail::Str(answer.to_owned()))
}

/// The lens and version a MISSING_PARAMS error of lf-lens names, with the
/// labels it misses.
pub(crate) fn missing_of(err: &LfError) -> Option<(LensId, VersionId, Vec<String>)> {
    let get = |key: &str| err.details().iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let text = |key: &str| match get(key) {
        Some(Detail::Str(s)) => Some(s.as_str()),
        _ => None,
    };
    let lens = LensId::parse("lens_id", text("lens_id")?).ok()?;
    let version = VersionId::parse("version_id", text("version_id")?).ok()?;
    let missing = match get("missing") {
        Some(Detail::Strs(m)) => m.clone(),
        _ => return None,
    };
    Some((lens, version, missing))
}

impl LfServer {
    /// The question for the parameters `missing` of `lens`'s version
    /// `version`, where `given` are the labels the call gave.
    pub(crate) async fn lens_params_question(
        &self,
        principal: &Principal,
        lens: LensId,
        version: VersionId,
        missing: &[String],
        given: &[String],
    ) -> Option<Question> {
        let view = self.services().lens.view(principal, lens, VersionSelector::Id(version)).await.ok()?;
        Some(params_question(view.lens.title.as_str(), &view.version.params, missing, given))
    }
}

impl LfServer {
    /// The question deciding the team run a `decide_agent_approval` call
    /// with `args` names, when `principal` is a person who may decide it
    /// and it awaits approval: approve or reject (the call's own decision
    /// shown as the default), and why.
    pub(crate) async fn decision_question(
        &self,
        principal: &Principal,
        tool: &ToolSpec,
        args: &JsonObject,
    ) -> Option<Question> {
        // The person connected: a signed-in lenser, or the one stdio acts as.
        let person = match principal {
            Principal::Agent { .. } => return None,
            _ => principal.lenser()?,
        };
        if !decides(tool) {
            return None;
        }
        let text = |key: &str| args.get(key).and_then(Value::as_str);
        let agent = lf_core::LenserId::parse("ai_lenser_id", text("ai_lenser_id")?).ok()?;
        let run = lf_agent::TeamRunId::parse("team_run_id", text("team_run_id")?).ok()?;
        let agents = &self.services().agents;
        let view = agents.get(principal, agent).await.ok()?;
        let may = view
            .agent
            .role_of(person)
            .is_some_and(|r| lf_agent::roles::permits(r, lf_agent::roles::Permission::DecideApproval));
        let team_run = agents.get_team_run(principal, agent, run).await.ok()?;
        if !may || team_run.status != lf_agent::TeamRunStatus::AwaitingApproval {
            return None;
        }
        let mut decision = json!({"type": "string", "title": "Decision", "enum": ["approve", "reject"]});
        if let Some(proposed) = text("decision").filter(|d| matches!(*d, "approve" | "reject")) {
            decision["default"] = json!(proposed);
        }
        let schema = json!({
            "type": "object",
            "properties": {
                "decision": decision,
                "reason": {"type": "string", "title": "Reason", "maxLength": 500}
            },
            "required": ["decision"]
        });
        let message = format!(
            "@{}'s team run {run} (workflow {}) awaits your approval: approve it, and it runs; reject it, and it never does.",
            view.agent.handle, team_run.workflow_id
        );
        let schema = serde_json::from_value(schema).ok()?;
        Some(Question { kind: Kind::Decision, message, schema })
    }
}

/// `args` with the person's decision and reason (`content`).
pub(crate) fn with_decision(args: &mut JsonObject, content: JsonObject) {
    for key in ["decision", "reason"] {
        match content.get(key) {
            Some(Value::String(v)) if !v.trim().is_empty() => {
                args.insert(key.into(), Value::String(v.clone()));
            }
            _ if key == "reason" => {
                args.remove(key);
            }
            _ => {}
        }
    }
}

/// The labels `args`' `param_values` give.
pub(crate) fn given_labels(args: &JsonObject) -> Vec<String> {
    args.get("param_values")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// `args` with `values` added to its `param_values`.
pub(crate) fn with_values(args: &mut JsonObject, values: Vec<(String, String)>) {
    let slot = args.entry("param_values").or_insert_with(|| Value::Object(JsonObject::new()));
    if !slot.is_object() {
        *slot = Value::Object(JsonObject::new());
    }
    if let Value::Object(m) = slot {
        for (k, v) in values {
            m.insert(k, Value::String(v));
        }
    }
}

/// `args` with `confirm: true`, for a tool that takes it.
pub(crate) fn with_confirm(tool: &ToolSpec, args: &mut JsonObject) {
    if takes_confirm(tool) {
        args.insert("confirm".into(), Value::Bool(true));
    }
}

/// The action a CONFIRMATION_REQUIRED names (lf-core's wording).
pub(crate) fn action_of(err: &LfError) -> Option<&str> {
    err.message().split_once(" needs explicit confirmation").map(|(action, _)| action)
}

/// Whether a call that answered `err` is one to confirm by asking.
pub(crate) fn asks_confirmation(tool: &ToolSpec, args: &JsonObject, err: &LfError) -> bool {
    err.code() == ErrorCode::ConfirmationRequired && takes_confirm(tool) && !confirmed(args)
}

/// Whether a call that answered `err` is one to complete by asking for
/// the lens's parameters.
pub(crate) fn asks_params(tool: &ToolSpec, err: &LfError) -> bool {
    err.code() == ErrorCode::MissingParams && takes_param_values(tool)
}

/// The lens, version and missing labels of a `find_and_run_lens`-shaped
/// result that says `needs_params`.
pub(crate) fn needs_params_of(tool: &ToolSpec, value: &Value) -> Option<(LensId, VersionId, Vec<String>)> {
    if !takes_param_values(tool) || value.get("status")?.as_str()? != "needs_params" {
        return None;
    }
    let lens = LensId::parse("lens_id", value.get("lens_id")?.as_str()?).ok()?;
    let version = VersionId::parse("version_id", value.get("version_id")?.as_str()?).ok()?;
    let missing =
        value.get("missing")?.as_array()?.iter().filter_map(|m| m.as_str().map(str::to_owned)).collect();
    Some((lens, version, missing))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lf_core::ParamId;

    fn param(
        label: &str,
        optional: bool,
        hint: Option<TypeHint>,
        default: Option<&str>,
        options: &[&str],
    ) -> Param {
        Param {
            id: ParamId::new(),
            label: label.into(),
            optional,
            type_hint: hint,
            description: None,
            default: default.map(Into::into),
            options: options.iter().map(|o| (*o).to_owned()).collect(),
        }
    }

    #[test]
    fn a_lens_form_types_its_fields() {
        let params = [
            param("Language", false, Some(TypeHint::Select), None, &["Rust", "Go"]),
            param("Depth", true, Some(TypeHint::Integer), Some("3"), &[]),
            param("Ratio", true, Some(TypeHint::Number), Some("0.5"), &[]),
            param("Strict", true, Some(TypeHint::Boolean), Some("true"), &[]),
            param("Tags", true, Some(TypeHint::Multiselect), Some("a, c"), &["a", "b", "c"]),
            param("Code", false, None, None, &[]),
            param("Given", true, None, Some("x"), &[]),
        ];
        let q = params_question("T", &params, &["Language".into(), "Code".into()], &["given".into()]);
        let schema = serde_json::to_value(&q.schema).unwrap();
        assert_eq!(schema["required"], json!(["Language", "Code"]));
        let p = &schema["properties"];
        assert_eq!(p["Language"]["enum"], json!(["Rust", "Go"]));
        assert_eq!((p["Depth"]["type"].clone(), p["Depth"]["default"].clone()), (json!("integer"), json!(3)));
        assert_eq!(
            (p["Ratio"]["type"].clone(), p["Ratio"]["default"].clone()),
            (json!("number"), json!(0.5))
        );
        assert_eq!(p["Strict"]["default"], json!(true));
        assert_eq!(p["Tags"]["items"]["enum"], json!(["a", "b", "c"]));
        assert_eq!(p["Tags"]["default"], json!(["a", "c"]));
        assert_eq!(p["Code"]["type"], "string");
        assert!(p.get("Given").is_none(), "a value the call gave is not asked again");
        let values = values_of(
            json!({"Depth": 4, "Ratio": 0.25, "Strict": false, "Tags": ["b", "c"], "Code": "x"})
                .as_object()
                .unwrap()
                .clone(),
        );
        assert_eq!(
            values,
            [("Depth", "4"), ("Ratio", "0.25"), ("Strict", "false"), ("Tags", "b, c"), ("Code", "x")]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
    }

    #[test]
    fn an_answer_counts_only_for_its_own_question() {
        let make = |message: &str| Question {
            kind: Kind::Confirm,
            message: message.into(),
            schema: serde_json::from_value(json!({"type": "object", "properties": {}})).unwrap(),
        };
        let q = make("Delete a lens (lens_id a): Go ahead?");
        let state = q.state();
        assert_eq!(state, make("Delete a lens (lens_id a): Go ahead?").state());
        assert_ne!(state, make("Delete a lens (lens_id b): Go ahead?").state());
        let result = q.input_required();
        let v = serde_json::to_value(&result).unwrap();
        assert_eq!(v["resultType"], "input_required");
        assert_eq!(v["requestState"], state.as_str());
        assert_eq!(v["inputRequests"]["confirm"]["method"], "elicitation/create");
        assert_eq!(v["inputRequests"]["confirm"]["params"]["mode"], "form");
    }
}
