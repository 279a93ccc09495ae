//! Tool declarations and the catalog that holds them.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use lf_battle::BattleService;
use lf_core::{BattleId, LfError, LfResult, ModelProvider, Principal, Scope, clip};
use lf_lens::LensService;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A group of tools, selectable with `--toolsets`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    Lens,
    Battle,
}

impl Group {
    pub const ALL: [Group; 2] = [Group::Lens, Group::Battle];

    pub const fn as_str(self) -> &'static str {
        match self {
            Group::Lens => "lens",
            Group::Battle => "battle",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        Self::ALL.into_iter().find(|g| g.as_str().eq_ignore_ascii_case(s)).ok_or_else(|| {
            let known: Vec<_> = Self::ALL.iter().map(|g| g.as_str()).collect();
            format!("unknown toolset {s:?}; known toolsets: {}", known.join(", "))
        })
    }
}

/// What calling a tool may do, for a host deciding what to approve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Safety {
    /// No state change.
    Read,
    /// Creates or changes state.
    Write,
    /// Has side effects (resolves or starts something).
    Execute,
    /// Removes or hides existing data.
    Destructive,
}

impl Safety {
    pub const fn as_str(self) -> &'static str {
        match self {
            Safety::Read => "Read",
            Safety::Write => "Write",
            Safety::Execute => "Execute",
            Safety::Destructive => "Destructive",
        }
    }
}

/// The domain services the tools call, and the model provider behind them.
///
/// Build it with [`Services::new`]: it gives the battle service the catalog's
/// JSON Schema validator (for `auto_score` `json_schema` checks), and
/// [`Services::with_model_provider`] puts one provider behind every model
/// call (the battle service's, the offline provider, by default).
pub struct Services {
    pub lens: LensService,
    pub battle: BattleService,
    model: Arc<dyn ModelProvider>,
    /// Battles being judged in the background (see `groups::battle`), so a
    /// battle is never judged twice at once.
    pub(crate) scoring: Mutex<HashSet<BattleId>>,
}

impl Services {
    /// The services over `lens` and `battle`. The model provider is the
    /// battle service's (the offline provider unless it was given another).
    pub fn new(lens: LensService, battle: BattleService) -> Self {
        let battle = battle.with_json_schema_validator(Arc::new(crate::json_schema::JsonSchemaCheck));
        let model = battle.provider().clone();
        Self { lens, battle, model, scoring: Mutex::default() }
    }

    /// Makes every model call (the AI judge's included) go through `model`.
    pub fn with_model_provider(self, model: Arc<dyn ModelProvider>) -> Self {
        Self { battle: self.battle.with_provider(model.clone()), model, ..self }
    }

    /// The model provider.
    pub fn model(&self) -> &Arc<dyn ModelProvider> {
        &self.model
    }
}

/// What a handler gets: the caller and the services.
#[derive(Clone)]
pub struct Ctx {
    pub principal: Principal,
    pub services: Arc<Services>,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type Handler = Box<dyn Fn(Ctx, JsonObject) -> BoxFuture<LfResult<Value>> + Send + Sync>;

/// One tool: everything clients, docs and tests see of it, and its handler.
pub struct ToolSpec {
    pub name: &'static str,
    pub group: Group,
    pub safety: Safety,
    /// Whether calling it reaches outside this server (a model, the web).
    pub open_world: bool,
    pub title: &'static str,
    pub description: &'static str,
    pub input_schema: Arc<JsonObject>,
    pub output_schema: Arc<JsonObject>,
    handler: Handler,
}

fn schema_object<T: JsonSchema>(settings: SchemaSettings) -> Arc<JsonObject> {
    let mut settings = settings;
    settings.inline_subschemas = true;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let Value::Object(mut object) = serde_json::to_value(schema).unwrap_or_default() else {
        unreachable!("a derived schema is an object")
    };
    // The wrapper type's name and doc are noise to a model.
    object.remove("title");
    object.remove("description");
    object.remove("$schema");
    Arc::new(object)
}

/// The name between the first pair of backticks of a serde message, as in
/// "missing field `lens_id`" or "unknown field `extra`, expected ...".
fn backticked<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    message.strip_prefix(prefix)?.strip_prefix('`')?.split('`').next()
}

/// Turns a serde error at a path into an INVALID_ARGUMENT naming the field.
fn argument_error(err: serde_path_to_error::Error<serde_json::Error>) -> LfError {
    let path = err.path().to_string();
    let path = if path == "." { String::new() } else { clip(&path, 100).into_owned() };
    let inner = err.into_inner().to_string();
    let named = backticked(&inner, "missing field ").or_else(|| backticked(&inner, "unknown field "));
    // serde_path_to_error puts an unknown field's own name at the end of the
    // path already; a missing one is not there yet.
    let named = named
        .map(|name| clip(name, 100))
        .filter(|name| !(path == **name || path.ends_with(&format!(".{name}"))));
    let field = match (named, path.is_empty()) {
        (Some(name), true) => name.into_owned(),
        (Some(name), false) => format!("{path}.{name}"),
        (None, true) => "arguments".to_owned(),
        (None, false) => path.clone(),
    };
    let inner = clip(&inner, 300);
    let message = if path.is_empty() { inner.into_owned() } else { format!("{path}: {inner}") };
    LfError::invalid_argument(format!(
        "{message}. Check the tool's input schema for the expected names and types."
    ))
    .with_field(&field)
}

/// Parses tool arguments into `I`, every failure an INVALID_ARGUMENT.
pub(crate) fn parse_args<I: DeserializeOwned>(args: JsonObject) -> LfResult<I> {
    serde_path_to_error::deserialize(Value::Object(args)).map_err(argument_error)
}

/// The description, title and safety of a tool being declared.
pub(crate) struct Meta {
    pub name: &'static str,
    pub group: Group,
    pub safety: Safety,
    pub open_world: bool,
    pub title: &'static str,
    pub description: &'static str,
}

/// Declares a tool: its schemas come from `I` and `O`, its handler is `f`.
pub(crate) fn declare<I, O, F, Fut>(meta: Meta, f: F) -> ToolSpec
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + JsonSchema + 'static,
    F: Fn(Ctx, I) -> Fut + Send + Sync + Copy + 'static,
    Fut: Future<Output = LfResult<O>> + Send + 'static,
{
    let handler: Handler = Box::new(move |ctx, args| {
        Box::pin(async move {
            let input: I = parse_args(args)?;
            let out = f(ctx, input).await?;
            serde_json::to_value(out).map_err(LfError::internal)
        })
    });
    ToolSpec {
        name: meta.name,
        group: meta.group,
        safety: meta.safety,
        open_world: meta.open_world,
        title: meta.title,
        description: meta.description,
        input_schema: schema_object::<I>(SchemaSettings::draft2020_12()),
        output_schema: schema_object::<O>(SchemaSettings::draft2020_12().for_serialize()),
        handler,
    }
}

impl ToolSpec {
    /// MCP annotations, derived from the safety class alone.
    pub fn annotations(&self) -> ToolAnnotations {
        let a = ToolAnnotations::with_title(self.title);
        match self.safety {
            Safety::Read => a.read_only(true).destructive(false).open_world(self.open_world),
            Safety::Write | Safety::Execute => {
                a.read_only(false).destructive(false).open_world(self.open_world)
            }
            Safety::Destructive => a.read_only(false).destructive(true).open_world(self.open_world),
        }
    }

    /// The tool as `tools/list` shows it.
    pub fn to_mcp(&self) -> Tool {
        Tool::new(self.name, self.description, self.input_schema.clone())
            .with_title(self.title)
            .with_raw_output_schema(self.output_schema.clone())
            .with_annotations(self.annotations())
    }

    /// The token scope a Lenser needs to call it: `read` for Read tools,
    /// `write` for everything that changes or starts something.
    pub fn required_scope(&self) -> Scope {
        match self.safety {
            Safety::Read => Scope::Read,
            Safety::Write | Safety::Execute | Safety::Destructive => Scope::Write,
        }
    }

    /// Calls the handler with raw arguments.
    pub async fn call(&self, ctx: Ctx, args: JsonObject) -> LfResult<Value> {
        (self.handler)(ctx, args).await
    }
}

/// Which tools a server exposes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CatalogOptions {
    /// Only these groups (all when `None`).
    pub toolsets: Option<Vec<Group>>,
    /// Only Read tools are listed and callable.
    pub read_only: bool,
}

impl CatalogOptions {
    pub fn enables(&self, tool: &ToolSpec) -> bool {
        (!self.read_only || tool.safety == Safety::Read)
            && self.toolsets.as_ref().is_none_or(|sets| sets.contains(&tool.group))
    }
}

/// Every tool, in declaration order.
pub struct Catalog {
    tools: Vec<ToolSpec>,
}

impl Catalog {
    /// The full catalog.
    pub fn new() -> Self {
        let mut tools = Vec::new();
        tools.extend(crate::groups::lens::tools());
        tools.extend(crate::groups::battle::tools());
        Self { tools }
    }

    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| t.name == name)
    }
}

impl Default for Catalog {
    fn default() -> Self {
        Self::new()
    }
}
