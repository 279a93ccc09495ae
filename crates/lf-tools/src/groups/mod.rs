//! One file per tool group: its input types, output types and declarations.

pub mod battle;
pub mod lens;
