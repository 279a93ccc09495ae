//! The shared vocabulary of every LenserFight crate: id newtypes, the
//! [`Principal`] every domain call takes, the one error type [`LfError`] with
//! its stable [`ErrorCode`]s, a [`Clock`] abstraction, paging, the
//! [`ModelProvider`] trait through which every model call goes, the
//! [`Spawner`] through which background work starts, the [`meter`] port
//! through which the process's metrics are told, the words of a
//! search ([`SearchQuery`]), and [`call`], one call as a scope its reads
//! can share work in.
//!
//! lf-core knows nothing about SQL, MCP, HTTP or JSON. Its invariants:
//! - an id value is always a valid UUID (ids are parsed, never stringly typed);
//! - a [`PageRequest`] always has `1 <= limit <= 100`;
//! - an [`ErrorCode`]'s string form never changes once released: clients match on it.

mod background;
pub mod call;
mod clock;
mod error;
mod events;
mod id;
mod join;
mod label;
pub mod meter;
pub mod model;
mod page;
mod principal;
mod search;
mod text;
mod words;

pub use background::{Spawner, Task};
pub use clock::{Clock, FixedClock, SystemClock, Timestamp};
pub use error::{Detail, DetailValue, ErrorCode, ErrorDetails, LfError, LfResult, clip};
pub use events::{DomainEvent, EventKind, EventSink, NoEvents};
pub use id::{
    BattleId, ContenderId, ContenderRefId, LensId, LenserId, ModelProfileId, ParamId, RunId, SubmissionId,
    VersionId, VoteId, WorkflowId, parse_uuid,
};
pub use join::join_all;
pub use label::LabelName;
pub use model::{
    AnswerCost, CallStats, ChatRequest, ChatResponse, ModelProvider, ModelResolver, OFFLINE_MODEL_NAME,
    ResolvedModel, ToolCall, ToolChatRequest, ToolChatResponse, ToolSpec, Turn, agent_model,
};
pub use page::{Page, PageRequest};
pub use principal::{Principal, Reach, Scope, Scopes};
pub use search::SearchQuery;
pub use text::{Changelog, Description, Title, check_length, check_text, no_nul};
pub use words::not_one_of;

/// What the exported macros need; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use uuid::Uuid;
}
