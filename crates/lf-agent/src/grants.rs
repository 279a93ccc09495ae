//! The rules of grants: which catalog tools an agent may be given, and the
//! refusal of a tool it was not given.

use lf_core::{Detail, LfError, LfResult};

use crate::model::{Agent, Safety, ToolKey, ToolRef};

/// Most tools one agent may hold.
pub const MAX_GRANTS: u32 = 200;

/// Whether `tool` may be granted: never a tool of the Agent group (an agent
/// does not manage agents, itself included), and a Destructive tool only
/// with `confirm`.
pub fn check_grantable(tool: &ToolRef, confirm: bool) -> LfResult<()> {
    if tool.group.is_agent() {
        return Err(LfError::invalid_argument(format!(
            "{} is one of the Agent tools, which manage agents; no agent may be granted them. Grant a tool of another group.",
            tool.name
        ))
        .with_field("tool_id"));
    }
    if tool.safety == Safety::Destructive && !confirm {
        return Err(LfError::confirmation_required(&format!(
            "Granting {}, a destructive tool (it removes or hides data),",
            tool.name
        ))
        .with_detail("tool", Detail::Str(tool.name.as_str().into())));
    }
    Ok(())
}

/// PERMISSION_DENIED for a call of `tool`, which `agent` was not granted,
/// saying how to grant it.
pub fn not_granted(agent: &Agent, tool: &ToolKey) -> LfError {
    LfError::permission_denied(format!(
        "@{} was not granted {tool}. An owner or co-owner can grant it with assign_agent_tool (ai_lenser_id {}, tool_id {tool}); list_agent_tools shows what it holds.",
        agent.handle, agent.id
    ))
    .with_detail("tool", Detail::Str(tool.to_string()))
}
