//! Paging, once for the whole catalog: the `limit` and `offset` every list
//! takes ([`paged_input!`]) and the page every list answers ([`PageOut`]).

use lf_core::{LfResult, PageRequest};
use schemars::JsonSchema;
use serde::Serialize;

/// An input with the catalog's paging fields.
pub(crate) trait Paged {
    /// The page asked for (INVALID_ARGUMENT outside the ranges).
    fn page(&self) -> LfResult<PageRequest>;
}

/// Declares a tool's input struct with the catalog's paging fields,
/// `limit` (1–100, default 20) and `offset` (default 0), after its own, and
/// implements [`Paged`] for it. (serde's `flatten` cannot be used: it does
/// not work with `deny_unknown_fields`.)
macro_rules! paged_input {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$fmeta:meta])* pub $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
            /// Results per page.
            #[schemars(range(min = 1, max = 100), extend("default" = 20))]
            pub limit: Option<i64>,
            /// Results to skip.
            #[schemars(range(min = 0, max = 1000000), extend("default" = 0))]
            pub offset: Option<i64>,
        }

        impl $crate::catalog::paging::Paged for $name {
            fn page(&self) -> lf_core::LfResult<lf_core::PageRequest> {
                lf_core::PageRequest::new(self.limit, self.offset)
            }
        }
    };
}
pub(crate) use paged_input;

/// One page of a listing.
#[derive(Serialize, JsonSchema)]
pub struct PageOut<T> {
    pub items: Vec<T>,
    /// How many items the whole listing has.
    pub total: u64,
    pub limit: u32,
    pub offset: u64,
    /// Whether a later page has more items.
    pub has_more: bool,
}

impl<T> PageOut<T> {
    pub fn from_page<U>(page: lf_core::Page<U>, f: impl FnMut(U) -> T) -> Self {
        let has_more = page.has_more();
        let page = page.map(f);
        Self { items: page.items, total: page.total, limit: page.limit, offset: page.offset, has_more }
    }
}
