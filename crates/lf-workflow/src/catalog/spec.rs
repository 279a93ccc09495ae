//! The shape of one catalog entry, and the builder the entries are
//! declared with.

use serde_json::{Map, Value};

use super::Category;

lf_core::word_enum!(
    /// The kind of value a config field holds; [`super::check_config`]
    /// checks each.
    FieldKind, "kind", [
        /// Any text.
        String = "string",
        /// Text with `[[name]]` placeholders, filled from the node's inputs at run time.
        Template = "template",
        /// A JSON number.
        Number = "number",
        /// A JSON integer.
        Integer = "integer",
        Boolean = "boolean",
        /// One of the field's `options`.
        Select = "select",
        /// An array of strings.
        StringList = "string[]",
        /// One e-mail address, or an array of them.
        EmailList = "email[]",
        /// Any JSON object.
        Object = "object",
        /// Any JSON value.
        Json = "json",
        /// A pick: a top-level field name, `output`, or a `$` JSONPath.
        JsonPath = "jsonpath",
        /// A structured condition (see [`crate::Condition`]).
        Condition = "condition",
        /// A five-field cron expression (minute hour day-of-month month day-of-week).
        Cron = "cron",
        /// An IANA time zone name, such as Europe/Istanbul or UTC.
        TimeZone = "timezone",
        /// An `http://` or `https://` URL.
        Url = "url",
        /// A UUID.
        Uuid = "uuid",
        /// A lens label (`[a-z0-9_-]{1,32}`, such as production; latest is the head).
        Label = "label",
        /// An RFC 3339 instant, such as 2026-06-01T09:00:00Z.
        DateTime = "datetime",
        /// `form_input_trigger`'s declared fields.
        FormFields = "form_fields",
        /// `switch`'s cases: `[{"name": "high", "when": <condition>}]`.
        SwitchCases = "switch_cases",
        /// An object whose values are strings.
        StringMap = "string_map",
        /// An object whose values are picks.
        PathMap = "path_map",
    ]
);

lf_core::word_enum!(
    /// The kinds of value that flow between nodes (the original's list).
    IoType, "io_type", [
        Text = "text",
        Json = "json",
        Number = "number",
        Boolean = "boolean",
        Array = "array",
        Object = "object",
        Image = "image",
        Audio = "audio",
        Video = "video",
        File = "file",
        Embedding = "embedding",
        Documents = "document[]",
        BattleResult = "battle_result",
        LensResult = "lens_result",
        AgentResult = "agent_result",
        WorkflowResult = "workflow_result",
        Error = "error",
        Any = "any",
        Void = "void",
    ]
);

lf_core::word_enum!(
    /// What running a node does outside the run itself.
    SideEffect, "side_effect_policy", [
        /// Nothing: a pure function of its inputs (or a model call).
        None = "none",
        /// Writes this server's state (kv store, cache, battles).
        InternalWrite = "internal_write",
        /// Reads an outside service.
        ExternalRead = "external_read",
        /// Changes an outside service: sent with an `Idempotency-Key` of
        /// (run, node, attempt) where the target is HTTP.
        ExternalWrite = "external_write",
    ]
);

/// One config field of a node type.
#[derive(Clone, Debug)]
pub struct ConfigField {
    pub key: &'static str,
    pub label: &'static str,
    pub kind: FieldKind,
    pub required: bool,
    /// Applied by [`super::normalize_config`] when the field is absent.
    pub default: Option<Value>,
    /// The allowed values of a `select`.
    pub options: &'static [&'static str],
    pub description: &'static str,
    /// Other names accepted for the field (the original's camelCase names):
    /// [`super::normalize_config`] renames them to `key`.
    pub aliases: &'static [&'static str],
    /// Bounds of a number or integer, inclusive.
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// A named input or output of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Port {
    pub name: &'static str,
    pub io: IoType,
    pub description: &'static str,
}

/// Whether a node type uses a saved connection, and of which providers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectorUse {
    None,
    Optional(&'static [&'static str]),
    Required(&'static [&'static str]),
}

impl ConnectorUse {
    pub fn providers(&self) -> &'static [&'static str] {
        match self {
            ConnectorUse::None => &[],
            ConnectorUse::Optional(p) | ConnectorUse::Required(p) => p,
        }
    }
}

/// Which top-level fields a node's output has, for checking a
/// connection's `output_key`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFields {
    /// Whatever its configuration or input makes: not checked.
    Open,
    /// Exactly these (the names of the entry's `outputs`).
    Ports,
    /// The names of its `cases` plus its `default_branch` (`switch`).
    SwitchCases,
}

/// How a failed attempt is retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryBehavior {
    /// Attempts in all, the first included (1: never retried).
    pub max_attempts: u32,
    /// Backoff before the second attempt; doubled each time, with jitter.
    pub backoff_ms: u64,
    /// The failures that are retried.
    pub retry_on: &'static [&'static str],
}

/// What a failure does to the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorBehavior {
    /// `propagate`: the run fails unless an `error_catch` or `try_catch`
    /// path handles the error.
    pub default_policy: &'static str,
    pub supports_fallback: bool,
}

/// A worked example of a node type: a config that passes its check, what
/// goes in, what comes out and where it may go next.
#[derive(Clone, Debug)]
pub struct Example {
    pub scenario: &'static str,
    pub config: Value,
    pub expected_input: Value,
    pub expected_output: Value,
    /// A node type it typically feeds, and the connection (`output_key →
    /// input_parameter`).
    pub downstream: Option<(&'static str, &'static str)>,
}

/// A check across the fields of a config (aliases renamed, no defaults),
/// given whether the node names a saved connection: the field it is about
/// and what is wrong.
pub type Rule = fn(&Map<String, Value>, bool) -> Option<(&'static str, String)>;

/// One catalog entry.
#[derive(Clone, Debug)]
pub struct NodeTypeSpec {
    pub node_type: &'static str,
    pub category: Category,
    pub display_name: &'static str,
    pub description: &'static str,
    pub aliases: &'static [&'static str],
    pub capabilities: &'static [&'static str],
    pub inputs: Vec<Port>,
    pub outputs: Vec<Port>,
    pub output_fields: OutputFields,
    pub fields: Vec<ConfigField>,
    pub connector: ConnectorUse,
    pub accepts_input_types: &'static [IoType],
    pub produces_output_type: IoType,
    pub retry_behavior: RetryBehavior,
    pub error_behavior: ErrorBehavior,
    pub side_effect_policy: SideEffect,
    pub example: Example,
    pub example_use_case: &'static str,
    /// A check across fields (`path` is needed unless `operation` is
    /// `count`), run when every field passed its own check, on the config
    /// with aliases renamed (no defaults applied); the flag says whether the
    /// node names a saved connection.
    pub rule: Option<Rule>,
}

impl NodeTypeSpec {
    pub fn required_config(&self) -> impl Iterator<Item = &ConfigField> {
        self.fields.iter().filter(|f| f.required)
    }
    pub fn optional_config(&self) -> impl Iterator<Item = &ConfigField> {
        self.fields.iter().filter(|f| !f.required)
    }
    /// The defaults of the optional fields, as a config object.
    pub fn default_config(&self) -> Map<String, Value> {
        self.fields.iter().filter_map(|f| Some((f.key.to_owned(), f.default.clone()?))).collect()
    }
    /// The field named `key` or one of its aliases.
    pub fn field(&self, key: &str) -> Option<&ConfigField> {
        self.fields.iter().find(|f| f.key == key || f.aliases.contains(&key))
    }
    /// Where the rendered docs describe this type.
    pub fn docs_link(&self) -> String {
        format!("{}/blob/main/docs/workflow-nodes.md#{}", env!("CARGO_PKG_REPOSITORY"), self.node_type)
    }
    /// The top-level output fields a connection may pick, when they are
    /// known from the type and its config.
    pub fn output_names(&self, config: &Map<String, Value>) -> Option<Vec<String>> {
        match self.output_fields {
            OutputFields::Open => None,
            OutputFields::Ports => Some(self.outputs.iter().map(|p| p.name.to_owned()).collect()),
            OutputFields::SwitchCases => {
                let mut names: Vec<String> = config
                    .get("cases")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c.get("name")?.as_str().map(str::to_owned))
                    .collect();
                let default = config.get("default_branch").and_then(Value::as_str).unwrap_or("default");
                names.push(default.to_owned());
                Some(names)
            }
        }
    }
}

// ----- The builder the entries are declared with. -----

/// A field of `kind`, optional, with no default.
pub(super) fn field(
    key: &'static str,
    label: &'static str,
    kind: FieldKind,
    description: &'static str,
) -> ConfigField {
    ConfigField {
        key,
        label,
        kind,
        required: false,
        default: None,
        options: &[],
        description,
        aliases: &[],
        min: None,
        max: None,
    }
}

impl ConfigField {
    pub(super) fn required(mut self) -> Self {
        self.required = true;
        self
    }
    pub(super) fn default(mut self, v: Value) -> Self {
        self.default = Some(v);
        self
    }
    pub(super) fn options(mut self, options: &'static [&'static str]) -> Self {
        self.options = options;
        self
    }
    pub(super) fn aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }
    pub(super) fn range(mut self, min: f64, max: f64) -> Self {
        self.min = Some(min);
        self.max = Some(max);
        self
    }
}

pub(super) fn port(name: &'static str, io: IoType, description: &'static str) -> Port {
    Port { name, io, description }
}

/// Pure steps: a retry cannot change a deterministic result.
pub(super) const NO_RETRY: RetryBehavior = RetryBehavior { max_attempts: 1, backoff_ms: 0, retry_on: &[] };
/// Model calls.
pub(super) const MODEL_RETRY: RetryBehavior = RetryBehavior {
    max_attempts: 3,
    backoff_ms: 1_000,
    retry_on: &["timeout", "provider_error", "rate_limit"],
};
/// Outside services over HTTP (writes carry an idempotency key, so a retry
/// is applied once).
pub(super) const HTTP_RETRY: RetryBehavior = RetryBehavior {
    max_attempts: 3,
    backoff_ms: 2_000,
    retry_on: &["timeout", "connect_error", "status_5xx", "rate_limit"],
};
/// This server's own stores.
pub(super) const STORE_RETRY: RetryBehavior =
    RetryBehavior { max_attempts: 2, backoff_ms: 500, retry_on: &["timeout", "conflict"] };

pub(super) const PROPAGATE: ErrorBehavior =
    ErrorBehavior { default_policy: "propagate", supports_fallback: true };

/// An entry with defaults by category: no config, no connector, `any → json`.
pub(super) fn entry(
    node_type: &'static str,
    category: Category,
    display_name: &'static str,
    description: &'static str,
) -> NodeTypeSpec {
    let (retry_behavior, side_effect_policy) = match category {
        Category::Lens | Category::AiPrimitive => (MODEL_RETRY, SideEffect::None),
        Category::Communication => (HTTP_RETRY, SideEffect::ExternalWrite),
        Category::Integration | Category::Storage => (HTTP_RETRY, SideEffect::ExternalRead),
        Category::Battle => (STORE_RETRY, SideEffect::InternalWrite),
        _ => (NO_RETRY, SideEffect::None),
    };
    NodeTypeSpec {
        node_type,
        category,
        display_name,
        description,
        aliases: &[],
        capabilities: &[],
        inputs: vec![port("input", IoType::Any, "The node's main input.")],
        outputs: vec![],
        output_fields: OutputFields::Open,
        fields: vec![],
        connector: ConnectorUse::None,
        accepts_input_types: &[IoType::Any],
        produces_output_type: IoType::Json,
        retry_behavior,
        error_behavior: PROPAGATE,
        side_effect_policy,
        example: Example {
            scenario: "",
            config: Value::Object(Map::new()),
            expected_input: Value::Null,
            expected_output: Value::Null,
            downstream: None,
        },
        example_use_case: "",
        rule: None,
    }
}

impl NodeTypeSpec {
    pub(super) fn aliases(mut self, a: &'static [&'static str]) -> Self {
        self.aliases = a;
        self
    }
    pub(super) fn caps(mut self, c: &'static [&'static str]) -> Self {
        self.capabilities = c;
        self
    }
    pub(super) fn inputs(mut self, p: Vec<Port>) -> Self {
        self.inputs = p;
        self
    }
    /// Declares the output's fields; a connection may pick only these.
    pub(super) fn outputs(mut self, p: Vec<Port>) -> Self {
        self.outputs = p;
        self.output_fields = OutputFields::Ports;
        self
    }
    /// Describes the output without closing its set of fields.
    pub(super) fn open_outputs(mut self, p: Vec<Port>) -> Self {
        self.outputs = p;
        self.output_fields = OutputFields::Open;
        self
    }
    pub(super) fn fields(mut self, f: Vec<ConfigField>) -> Self {
        self.fields = f;
        self
    }
    pub(super) fn connector(mut self, c: ConnectorUse) -> Self {
        self.connector = c;
        self
    }
    pub(super) fn io(mut self, accepts: &'static [IoType], produces: IoType) -> Self {
        self.accepts_input_types = accepts;
        self.produces_output_type = produces;
        self
    }
    pub(super) fn retry(mut self, r: RetryBehavior) -> Self {
        self.retry_behavior = r;
        self
    }
    pub(super) fn side_effect(mut self, s: SideEffect) -> Self {
        self.side_effect_policy = s;
        self
    }
    pub(super) fn rule(mut self, r: Rule) -> Self {
        self.rule = Some(r);
        self
    }
    pub(super) fn example(
        mut self,
        scenario: &'static str,
        config: Value,
        expected_input: Value,
        expected_output: Value,
        downstream: Option<(&'static str, &'static str)>,
    ) -> Self {
        self.example = Example { scenario, config, expected_input, expected_output, downstream };
        self
    }
    pub(super) fn use_case(mut self, u: &'static str) -> Self {
        self.example_use_case = u;
        self
    }
    pub(super) fn switch_outputs(mut self, p: Vec<Port>) -> Self {
        self.outputs = p;
        self.output_fields = OutputFields::SwitchCases;
        self
    }
}
