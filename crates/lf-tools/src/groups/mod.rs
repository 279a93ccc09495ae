//! The tool groups, one folder each: its `mod.rs` holds the group's id,
//! title, description and tool list; each tool is one file (input type,
//! output type, handler and declaration together); what several tools of
//! a group share sits in its `shapes.rs`.
//!
//! [`ALL`] is the registry the catalog, `--toolsets`, the docs and the
//! snapshot tests read: adding a group is a folder and one line here.

pub mod agent;
pub mod battle;
pub mod connections;
pub mod eval;
pub mod lens;
pub mod model;
pub mod search;
pub mod workflow;

use crate::catalog::group::Group;

/// Every group, in catalog order.
pub static ALL: &[&Group] = &[
    &lens::GROUP,
    &battle::GROUP,
    &search::GROUP,
    &workflow::GROUP,
    &agent::GROUP,
    &model::GROUP,
    &eval::GROUP,
    &connections::GROUP,
];
