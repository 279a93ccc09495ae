//! The shared vocabulary of every LenserFight crate: id newtypes, the
//! [`Principal`] every domain call takes, the one error type [`LfError`] with
//! its stable [`ErrorCode`]s, a [`Clock`] abstraction and paging.
//!
//! lf-core knows nothing about SQL, MCP, HTTP or JSON. Its invariants:
//! - an id value is always a valid UUID (ids are parsed, never stringly typed);
//! - a [`PageRequest`] always has `1 <= limit <= 100`;
//! - an [`ErrorCode`]'s string form never changes once released: clients match on it.

mod clock;
mod error;
mod id;
mod page;
mod principal;

pub use clock::{Clock, FixedClock, SystemClock, Timestamp};
pub use error::{Detail, DetailValue, ErrorCode, ErrorDetails, LfError, LfResult, clip};
pub use id::{LensId, LenserId, ParamId, RunId, VersionId, WorkflowId, parse_uuid};
pub use page::{Page, PageRequest};
pub use principal::{Principal, Reach, Scope, Scopes};
