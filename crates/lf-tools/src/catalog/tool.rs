//! What a tool is: the [`Tool`] trait a tool implements in one place (its
//! name, class, description, input type, output type and handler), and
//! [`ToolSpec`], the declaration the catalog, the transports, the docs and
//! the snapshots read.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use lf_agent::policy::Gate;
use lf_core::{LfError, LfResult, Scope, clip};
use lf_eval::experiment::ExperimentId;
use lf_workflow::run::RunId;
use rmcp::model::{JsonObject, Tool as McpTool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::catalog::group::Group;
use crate::catalog::output::ToolOutput;
use crate::catalog::services::Ctx;

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

/// What a call may reach beyond this server and its database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reaches {
    /// Nothing: the server and its database answer it.
    ServerOnly,
    /// The configured model provider (an outside API unless the offline
    /// provider is in use), for example by starting the AI judge.
    Model,
    /// Whatever a workflow's steps reach: the model provider, and outside
    /// services over HTTP (through the guarded client).
    Outside,
}

/// One tool, written in one place: `impl Tool for MyTool` holds its
/// declaration, its input and output types and its handler.
pub trait Tool {
    /// `verb_noun`, as clients call it.
    const NAME: &'static str;
    /// A short title for people.
    const TITLE: &'static str;
    const SAFETY: Safety;
    /// What a call may reach beyond the server: it decides `openWorldHint`.
    const REACHES: Reaches = Reaches::ServerOnly;
    /// When to use it, in a sentence or two: a model reads it to choose.
    const DESCRIPTION: &'static str;
    /// Where its result deliberately differs from the hosted original's
    /// reference documents, for docs/tools.md; empty when it does not.
    const DIFFERS_FROM_SPEC: &'static str = "";
    /// The arguments; its JSON Schema is the tool's input schema.
    type Input: DeserializeOwned + JsonSchema + Send + 'static;
    /// The result; its JSON Schema is the tool's output schema.
    type Output: Serialize + JsonSchema + 'static;
    /// What an AI Lenser's policy asks of a call of it beyond its grant: the
    /// flag it needs and the day's count it adds to (lf-agent's `Gate`,
    /// handed over with each call as an agent). Most tools need no flag.
    const AGENT_GATE: Gate = Gate::NONE;
    /// The original's action words that name it, which an agent's action
    /// (`run_agent_action`) takes besides its name: `join_battle` for
    /// add_battle_contender. A word names one tool in the whole catalog.
    const ACTION_WORDS: &'static [&'static str] = &[];
    /// For a tool whose call starts a workflow run or an experiment: the
    /// one its result names. A client that declared MCP's tasks extension
    /// then gets it as a task instead of the result (lf-tools' `tasks`
    /// module).
    const STARTS_TASK: Option<fn(&Self::Output) -> Started> = None;

    /// The arguments read from the call's JSON, every failure an
    /// INVALID_ARGUMENT naming the field. An input that holds another
    /// tool's arguments moves them instead of reading them through serde
    /// (`run_agent_action`).
    fn parse(args: JsonObject) -> LfResult<Self::Input> {
        parse_args(args)
    }

    /// The result as the call answers it: its JSON, cleaned of what third
    /// parties could put in it ([`ToolOutput::cleaned`]). A result that
    /// holds another tool's result takes that tool's answer in as it is,
    /// cleaned and written once (`run_agent_action`).
    fn output(out: Self::Output) -> LfResult<ToolOutput> {
        let value = serde_json::to_value(out).map_err(LfError::internal)?;
        Ok(ToolOutput::cleaned(Self::NAME, value, false))
    }

    /// Runs the tool for `ctx`'s caller.
    fn call(ctx: Ctx, input: Self::Input) -> impl Future<Output = LfResult<Self::Output>> + Send;
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type Handler = Box<dyn Fn(Ctx, JsonObject) -> BoxFuture<LfResult<Called>> + Send + Sync>;

/// What a handler answers: the result ([`Tool::output`]), and what the
/// call started when the tool says which ([`Tool::STARTS_TASK`]).
pub struct Called {
    pub output: ToolOutput,
    pub task: Option<Started>,
}

/// What a call started that a client of MCP's tasks extension follows as
/// a task (its task id is the run's or the experiment's id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Started {
    Run(RunId),
    Experiment(ExperimentId),
}

/// One tool: everything clients, docs and tests see of it, and its handler.
pub struct ToolSpec {
    pub name: &'static str,
    pub group: &'static Group,
    pub safety: Safety,
    /// What calling it may reach beyond this server.
    pub reaches: Reaches,
    pub title: &'static str,
    pub description: &'static str,
    /// See [`Tool::DIFFERS_FROM_SPEC`].
    pub differs_from_spec: &'static str,
    pub input_schema: Arc<JsonObject>,
    pub output_schema: Arc<JsonObject>,
    /// Whether a call starts a workflow run or an experiment that a client
    /// of the tasks extension gets as a task (see [`Tool::STARTS_TASK`]).
    pub starts_task: bool,
    /// See [`Tool::AGENT_GATE`].
    pub agent_gate: Gate,
    /// See [`Tool::ACTION_WORDS`].
    pub action_words: &'static [&'static str],
    /// [`ToolSpec::id`], worked out once.
    id: uuid::Uuid,
    /// The tool as a grant names it ([`crate::agent_calls::tool_ref`]),
    /// made at its first agent call.
    pub(crate) agent_ref: std::sync::OnceLock<lf_agent::ToolRef>,
    handler: Handler,
}

/// The namespace of tool ids ([`ToolSpec::id`]). Never change it: agents'
/// grants name tools by these ids.
pub const TOOL_ID_NAMESPACE: uuid::Uuid = uuid::Uuid::from_u128(0x6c66_746f_6f6c_7300_8000_0000_0000_0001);

impl ToolSpec {
    /// The tool's stable id: a UUID v5 of its name, the same on every
    /// server and in every version (agents' grants name tools by it).
    pub fn id(&self) -> uuid::Uuid {
        self.id
    }
}

/// The stable id of the tool named `name` (see [`ToolSpec::id`]).
pub fn tool_id(name: &str) -> uuid::Uuid {
    uuid::Uuid::new_v5(&TOOL_ID_NAMESPACE, name.as_bytes())
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

/// The declaration of tool `T` of `group`.
pub(crate) fn declare<T: Tool>(group: &'static Group) -> ToolSpec {
    let handler: Handler = Box::new(|ctx, args| {
        Box::pin(async move {
            let input = T::parse(args)?;
            let out = T::call(ctx, input).await?;
            let task = T::STARTS_TASK.map(|started| started(&out));
            Ok(Called { output: T::output(out)?, task })
        })
    });
    ToolSpec {
        name: T::NAME,
        group,
        safety: T::SAFETY,
        reaches: T::REACHES,
        title: T::TITLE,
        description: T::DESCRIPTION,
        differs_from_spec: T::DIFFERS_FROM_SPEC,
        input_schema: crate::catalog::schema::input::<T::Input>(),
        output_schema: crate::catalog::schema::output::<T::Output>(),
        starts_task: T::STARTS_TASK.is_some(),
        agent_gate: T::AGENT_GATE,
        action_words: T::ACTION_WORDS,
        id: tool_id(T::NAME),
        agent_ref: std::sync::OnceLock::new(),
        handler,
    }
}

impl ToolSpec {
    /// Whether calling it may reach outside this server (`openWorldHint`).
    pub fn open_world(&self) -> bool {
        self.reaches != Reaches::ServerOnly
    }

    /// MCP annotations, derived from the safety class and what the tool
    /// reaches alone. A hint at MCP's default is left out (`readOnlyHint`
    /// false, `destructiveHint` true), and a read-only tool says nothing of
    /// destruction, which MCP reads only when `readOnlyHint` is false.
    /// `openWorldHint` is always said: its default is true.
    pub fn annotations(&self) -> ToolAnnotations {
        let a = ToolAnnotations::with_title(self.title).open_world(self.open_world());
        match self.safety {
            Safety::Read => a.read_only(true),
            Safety::Write | Safety::Execute => a.destructive(false),
            Safety::Destructive => a,
        }
    }

    /// The tool as `tools/list` shows it. Its title is in its annotations
    /// only: clients of every protocol version read it there (later ones
    /// after a top-level `title`, which would say it twice).
    pub fn to_mcp(&self) -> McpTool {
        McpTool::new(self.name, self.description, self.input_schema.clone())
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
    pub async fn call(&self, ctx: Ctx, args: JsonObject) -> LfResult<Called> {
        (self.handler)(ctx, args).await
    }
}
