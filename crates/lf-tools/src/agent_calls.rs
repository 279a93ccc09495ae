//! Calling a catalog tool as an agent: the one way an agent acts, used by
//! `run_agent_action` (and by the `agent_execute` step's tool box).
//!
//! The tool is found in the catalog by name, stable id or an action word
//! it declares ([`crate::Tool::ACTION_WORDS`]);
//! [`lf_agent::AgentService::check_call`] checks the caller may act for the
//! agent, the agent is active, the tool is granted, the policy allows it and
//! the day's caps and credit limit have room (counted at once, as the gate
//! the tool declares says: [`crate::Tool::AGENT_GATE`]); the tool then
//! runs as `Principal::Agent { agent, owner }` (its owner's reach, never
//! more), and what came of it is written to the agent's action log.

use std::sync::LazyLock;

use lf_agent::{ActionName, ArgsSummary, Call, Profile, ToolGroup, ToolId, ToolName, ToolRef};
use lf_battle::ContenderType;
use lf_core::meter::{meter, outcome_of};
use lf_core::{AnswerCost, BattleId, ContenderId, ErrorCode, ResolvedModel};
use lf_core::{LenserId, LfError, LfResult};
use lf_workflow::connection::{ConnectionTool, ToolMode};
use rmcp::model::JsonObject;
use serde_json::Value;
use tracing::Instrument;
use tracing::field::Empty;

use crate::catalog::Catalog;
use crate::catalog::output::ToolOutput;
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Reaches, Safety, ToolSpec};

/// The action word of an agent answering a battle it is a contender of:
/// submit_battle_run's, with a flow of its own (the agent's model answers
/// the battle's task prompt, submitted as its contender's answer).
pub const ANSWER_BATTLE: &str = "answer_battle";

/// The whole catalog, built once: what grants name (the `agent_execute`
/// step's tools are found in it too).
pub fn catalog() -> &'static Catalog {
    static CATALOG: LazyLock<Catalog> = LazyLock::new(Catalog::new);
    &CATALOG
}

/// The identity of a catalog tool, as lf-agent keeps it in a grant (made
/// once per tool; a clone shares its words).
pub fn tool_ref(spec: &ToolSpec) -> ToolRef {
    spec.agent_ref
        .get_or_init(|| ToolRef {
            id: ToolId::from_uuid(spec.id()),
            name: ToolName::parse("tool", spec.name).expect("catalog tool names are words"),
            group: ToolGroup::parse("group", spec.group.id).expect("group ids are words"),
            safety: match spec.safety {
                Safety::Read => lf_agent::Safety::Read,
                Safety::Write => lf_agent::Safety::Write,
                Safety::Execute => lf_agent::Safety::Execute,
                Safety::Destructive => lf_agent::Safety::Destructive,
            },
        })
        .clone()
}

/// The catalog tool `key` names (a stable id or a name); NOT_FOUND naming
/// `field` otherwise.
pub(crate) fn find_tool(field: &str, key: &str) -> LfResult<&'static ToolSpec> {
    catalog().find(key).ok_or_else(|| {
        LfError::new(
            lf_core::ErrorCode::NotFound,
            format!(
                "No catalog tool {}: give a tool's name (as tools/list shows it) or its tool_id (list_agent_tools shows the ids of granted ones).",
                LfError::excerpt(key)
            ),
        )
        .with_field(field)
    })
}

/// The credits a call of `spec` counts against the agent's daily credit
/// limit: one for a tool that reaches a model or an outside service, none
/// for one the server answers alone.
pub fn credits_of(spec: &ToolSpec) -> u64 {
    match spec.reaches {
        Reaches::ServerOnly => 0,
        Reaches::Model | Reaches::Outside => 1,
    }
}

/// What a call as an agent answered.
pub struct AgentCalled {
    /// The tool's name: a catalog tool's, or an outside tool's grant name
    /// ([`mcp_tool_ref`]).
    pub tool: String,
    /// The tool's answer, cleaned as a direct call's is.
    pub output: ToolOutput,
    /// The action log's entry of the call.
    pub action_log_id: String,
}

/// Calls the tool `action` names (a tool's name or id, or an action word)
/// with `args` as agent `agent`, for `ctx`'s caller. The log keeps the
/// arguments in short, secret-named fields redacted. A refused call answers
/// its refusal (PERMISSION_DENIED, THROTTLED, BUDGET_EXCEEDED), logged; a
/// passed one runs, and its outcome is logged, its error answered as it is.
pub async fn call_as_agent(
    ctx: &Ctx,
    agent: LenserId,
    action: &str,
    args: JsonObject,
    note: Option<String>,
) -> LfResult<AgentCalled> {
    let span = tracing::info_span!(
        "agent_action",
        otel.name = "agent action",
        gen_ai.operation.name = "execute_tool",
        gen_ai.agent.id = %agent,
        gen_ai.tool.name = Empty,
        "error.type" = Empty,
        otel.status_code = Empty,
    );
    let result = called_as_agent(ctx, agent, action, args, note).instrument(span.clone()).await;
    if let Err(e) = &result {
        span.record("error.type", e.code().as_str());
        span.record("otel.status_code", "ERROR");
    }
    result
}

async fn called_as_agent(
    ctx: &Ctx,
    agent: LenserId,
    action: &str,
    args: JsonObject,
    note: Option<String>,
) -> LfResult<AgentCalled> {
    let action = action.trim();
    if action.starts_with(MCP_KEY) {
        return call_outside(ctx, agent, action, args, note).await;
    }
    let asked = match uuid::Uuid::try_parse(action) {
        Ok(_) => ActionName::parse("action_type", find_tool("action_type", action)?.name)?,
        Err(_) => ActionName::parse("action_type", action)?,
    };
    let tool = match catalog().for_action_word(asked.as_str()) {
        Some(tool) => tool,
        None => find_tool("action_type", asked.as_str())?,
    };
    tracing::Span::current().record("gen_ai.tool.name", tool.name);
    let summary = summary(&args, note);
    let answering = asked.as_str() == ANSWER_BATTLE;
    // Answering a battle asks the model once.
    let credits = if answering { 1 } else { credits_of(tool) };
    let call =
        Call::new(tool_ref(tool), credits).gated(tool.agent_gate).asked_as(asked, ArgsSummary::new(&summary));
    let agents = &ctx.services.agents;
    let pass = agents.check_call(&ctx.principal, agent, &call).await;
    meter().agent_call(tool.name, outcome_of(&pass));
    let pass = pass?;
    let inner = Ctx { principal: pass.principal.clone(), services: ctx.services.clone() };
    let result = async {
        if answering {
            // The answer is submitted with what it cost, in one write.
            let (args, cost) = answer(&inner, agent, &pass.profile, args).await?;
            return crate::groups::battle::submit_answered(inner, args, &cost).await;
        }
        tool.call(inner, args).await
    }
    .await;
    let entry = agents.record_call(&pass, result.as_ref().map(|_| ())).await?;
    let called = result?;
    Ok(AgentCalled { tool: tool.name.to_owned(), output: called.output, action_log_id: entry.id.to_string() })
}

/// The start of an outside tool's key: `mcp:<connection_ref>/<tool>`.
pub const MCP_KEY: &str = "mcp:";
/// The group of an outside tool's grant.
pub const MCP_GROUP: &str = "mcp";

/// The grant identity of the outside tool `key` (`mcp:<connection_ref>/<tool>`,
/// trimmed): its id a UUID v5 of the key; its name a word of the key's
/// letters and digits and the id's first 8 hex digits (what the agent's
/// model calls it, and the action log names); group `mcp`; Destructive
/// when the server annotated it so, else Execute.
pub fn mcp_tool_ref(key: &str, destructive: bool) -> ToolRef {
    let id = crate::catalog::tool::tool_id(key);
    let mut word = String::from("mcp_");
    for c in key[MCP_KEY.len()..].chars() {
        let c = if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' };
        if c != '_' || !word.ends_with('_') {
            word.push(c);
        }
        if word.len() >= 54 {
            break;
        }
    }
    let word = format!("{}_{}", word.trim_end_matches('_'), &id.simple().to_string()[..8]);
    ToolRef {
        id: ToolId::from_uuid(id),
        name: ToolName::parse("tool_id", &word).expect("made of [a-z0-9_], at most 63 bytes"),
        group: ToolGroup::parse("group", MCP_GROUP).expect("a word"),
        safety: if destructive { lf_agent::Safety::Destructive } else { lf_agent::Safety::Execute },
    }
}

/// The outside tool `key` names among `owner`'s saved connections: the
/// connection's ref and the tool as saved. INVALID_ARGUMENT naming `field`
/// for a key that is not `mcp:<connection_ref>/<tool>`; NOT_FOUND when
/// no connection of `owner`'s has that tool (a ref holding `/` is tried
/// at each of them).
pub async fn find_outside_tool(
    services: &crate::Services,
    owner: LenserId,
    field: &str,
    key: &str,
) -> LfResult<(String, ConnectionTool)> {
    let rest = key.trim().strip_prefix(MCP_KEY).unwrap_or_default();
    let splits: Vec<(&str, &str)> = rest
        .char_indices()
        .filter(|(_, c)| *c == '/')
        .map(|(i, _)| (&rest[..i], &rest[i + 1..]))
        .filter(|(r, t)| !r.is_empty() && !t.is_empty())
        .collect();
    if splits.is_empty() {
        return Err(LfError::invalid_argument(format!(
            "{field} names an outside tool as mcp:<connection_ref>/<tool> (mcp:outside/echo); got {}.",
            LfError::excerpt(key)
        ))
        .with_field(field));
    }
    for (r, tool) in splits.into_iter().rev() {
        match services.connections.tools_of(owner, r).await {
            Ok(tools) => {
                if let Some(found) = tools.into_iter().find(|t| t.tool.name == tool) {
                    return Ok((r.to_owned(), found));
                }
            }
            Err(e) if matches!(e.code(), ErrorCode::NotFound | ErrorCode::InvalidArgument) => {}
            Err(e) => return Err(e),
        }
    }
    Err(LfError::new(
        ErrorCode::NotFound,
        format!(
            "No outside tool {}: the agent's owner has no saved mcp connection with that tool (list_connections, list_connection_tools; refresh_connection_tools lists a server's tools again).",
            LfError::excerpt(key)
        ),
    )
    .with_field(field))
}

/// A call of the outside tool `key` as agent `agent`: checked and counted
/// as a catalog tool's call (its grant, the policy, the day's caps, one
/// credit), then the tool found among the agent's owner's connections and
/// called through [`lf_workflow::ConnectionService::call_tool`]; an `off`
/// tool is refused, and an `ask` one runs only for the owner (whose call
/// is the approval: an `agent_execute` step holds it for the owner's
/// `decide_agent_approval`). Logged as every call is.
async fn call_outside(
    ctx: &Ctx,
    agent: LenserId,
    key: &str,
    args: JsonObject,
    note: Option<String>,
) -> LfResult<AgentCalled> {
    let tool = mcp_tool_ref(key, false);
    tracing::Span::current().record("gen_ai.tool.name", tool.name.as_str());
    let note = Some(match note {
        Some(n) => format!("{n} {}", lf_core::clip(key, 300)),
        None => lf_core::clip(key, 300).into_owned(),
    });
    let summary = summary(&args, note);
    let call = Call::new(tool.clone(), 1).asked_as(ActionName::from(&tool.name), ArgsSummary::new(&summary));
    let agents = &ctx.services.agents;
    let pass = agents.check_call(&ctx.principal, agent, &call).await;
    meter().agent_call(MCP_GROUP, outcome_of(&pass));
    let pass = pass?;
    let owner = match pass.principal {
        lf_core::Principal::Agent { owner, .. } => owner,
        _ => return Err(LfError::internal("a call's pass runs as the agent")),
    };
    let result = async {
        let (r, saved) = find_outside_tool(&ctx.services, owner, "action_type", key).await?;
        let by_owner = matches!(ctx.principal, lf_core::Principal::Lenser { id, .. } if id == owner);
        if saved.mode == ToolMode::Ask && !by_owner {
            return Err(LfError::permission_denied(format!(
                "{} is an ask tool: each call of it waits for the approval of the agent's owner, who calls it (run_agent_action) or approves it in a team run (decide_agent_approval). It was not run.",
                lf_core::clip(key, 200)
            ))
            .with_field("action_type"));
        }
        let args = Value::Object(args);
        ctx.services.connections.call_tool(owner, &r, &saved.tool.name, args).await
    }
    .await;
    let entry = agents.record_call(&pass, result.as_ref().map(|_| ())).await?;
    let (_, output) = result?;
    let output = ToolOutput::cleaned(tool.name.as_str(), output, false);
    Ok(AgentCalled { tool: tool.name.as_str().to_owned(), output, action_log_id: entry.id.to_string() })
}

/// What the log keeps of a call's arguments: their JSON, each secret-named
/// field redacted, after `note` when there is one.
fn summary(args: &JsonObject, note: Option<String>) -> String {
    // serde_json's writer, not `Display`, which writes through `fmt`; a
    // copy to redact only when a field is named like a secret.
    let json = match lf_workflow::secrets::find_secret_field([args]) {
        None => serde_json::to_string(args),
        Some(_) => {
            let mut shown = args.clone();
            lf_workflow::secrets::redact(&mut shown);
            serde_json::to_string(&shown)
        }
    }
    .unwrap_or_default();
    match note {
        Some(note) => format!("{note} {json}"),
        None => json,
    }
}

/// `submit_battle_run`'s arguments for agent `agent` answering the battle
/// `args.battle_id` names (as `inner`, the agent): its contender there
/// (`args.contender_id`, which must be the ai_agent contender standing for
/// it, or that contender when none is given), and the answer its persona
/// and model (`profile`, as the check read it: a profile's name or id, an
/// endpoint, or a bare model name on `default`, resolved as for every
/// model named) give the task prompt; with what the answer cost.
async fn answer(
    inner: &Ctx,
    agent: LenserId,
    profile: &Profile,
    args: JsonObject,
) -> LfResult<(JsonObject, AnswerCost)> {
    let text = |key: &str| args.get(key).and_then(Value::as_str);
    let battle = BattleId::parse("battle_id", text("battle_id").unwrap_or_default())?;
    let sheet = inner.services.battle.get(&inner.principal, battle).await?;
    let its_own = |c: &&lf_battle::Contender| {
        c.contender_type == ContenderType::AiAgent && c.reference.as_uuid() == agent.as_uuid()
    };
    let contender = match text("contender_id") {
        Some(c) => {
            let id = ContenderId::parse("contender_id", c)?;
            match sheet.contenders.iter().find(|c| c.id == id) {
                // The agent submits with its owner's reach, which would let
                // it answer for any contender its owner may submit for (the
                // owner's own human contender, another of the owner's
                // agents, every contender of a battle the owner created).
                // PERMISSION_DENIED, not NOT_FOUND: the contender is
                // on the battle sheet the caller reads, so it exists for
                // them; what is refused is the agent acting for it, as the
                // agent's other refusals (policy, grants) are.
                Some(c) if !its_own(&c) => {
                    return Err(LfError::permission_denied(format!(
                        "Contender {} ({}) of battle {battle} is {} contender that is not this AI Lenser's: an agent answers only as its own ai_agent contender (leave contender_id out to answer as it).",
                        c.slot,
                        c.display_name.as_str(),
                        c.contender_type.with_article(),
                    ))
                    .with_field("contender_id"));
                }
                found => found,
            }
        }
        None => sheet.contenders.iter().find(its_own),
    }
    .ok_or_else(|| {
        LfError::new(
            ErrorCode::NotFound,
            format!("The AI Lenser is not a contender of battle {battle}: its creator adds it with add_battle_contender (contender_type ai_agent, contender_ref_id {agent})."),
        )
        .with_field("contender_id")
    })?;
    let system = match &profile.persona {
        Some(p) => p.as_str().to_owned(),
        None => format!(
            "You are {}, an AI Lenser answering a battle. Answer the task well and directly.",
            profile.display_name.as_str()
        ),
    };
    let named = profile.model.as_ref().map(|m| m.as_str());
    let model = match inner.services.battle.resolver() {
        Some(resolver) => lf_core::agent_model(resolver.as_ref(), &inner.principal, named).await?,
        None => ResolvedModel::on(inner.services.model().clone(), "default", named.map(str::to_owned)),
    };
    let request = model.request(system, sheet.battle.task_prompt.as_str());
    let started = std::time::Instant::now();
    let answered = model.provider.chat(request.clone()).await?;
    let elapsed = started.elapsed().as_millis() as u64;
    let cost = model.cost(&request, &answered, elapsed, lf_lens::estimate_tokens);
    let mut out = JsonObject::new();
    out.insert("battle_id".into(), Value::String(battle.to_string()));
    out.insert("contender_id".into(), Value::String(contender.id.to_string()));
    out.insert("content_text".into(), Value::String(answered.text));
    Ok((out, cost))
}

#[cfg(test)]
mod tests {
    use lf_agent::UsageKind;
    use lf_agent::policy::{Capability, Gate};
    use serde_json::json;

    use super::*;

    /// The tool an action names: the tool declaring the word, else the
    /// tool of that name.
    fn tool_for_action(action: &str) -> &'static str {
        catalog().for_action_word(action).or_else(|| catalog().get(action)).map_or("", |t| t.name)
    }

    #[test]
    fn action_words_map_onto_tools() {
        assert_eq!(tool_for_action("join_battle"), "add_battle_contender");
        assert_eq!(tool_for_action("cast_vote"), "cast_battle_vote");
        assert_eq!(tool_for_action("submit_entry"), "submit_battle_run");
        assert_eq!(tool_for_action("get_lens"), "get_lens");
        assert_eq!(tool_for_action(ANSWER_BATTLE), "submit_battle_run");
    }

    /// Each action word of the original names exactly one tool: the one that
    /// declares it, and no other tool declares it or is called by it.
    #[test]
    fn every_action_word_names_exactly_one_tool() {
        let words = ["join_battle", "cast_vote", "submit_entry", "create_battle", "run_lens", "run_workflow"];
        let declared: Vec<(&str, &str)> =
            catalog().tools().iter().flat_map(|t| t.action_words.iter().map(move |w| (*w, t.name))).collect();
        let mut all: Vec<&str> = declared.iter().map(|(w, _)| *w).collect();
        all.sort_unstable();
        let mut expected = [&words[..], &[ANSWER_BATTLE]].concat();
        expected.sort_unstable();
        assert_eq!(all, expected, "the original's words, each declared once");
        for (word, tool) in declared {
            let named: Vec<&str> = catalog()
                .tools()
                .iter()
                .filter(|t| t.action_words.contains(&word) || t.name == word)
                .map(|t| t.name)
                .collect();
            assert_eq!(named, [tool], "{word}");
        }
    }

    #[test]
    fn battle_tools_are_gated_and_counted() {
        let gate = |name: &str| catalog().get(name).expect("a catalog tool").agent_gate;
        assert_eq!(gate("cast_battle_vote").needs, Some(Capability::Vote));
        assert_eq!(gate("cast_battle_vote").counts, Some(UsageKind::Votes));
        assert_eq!(gate("add_battle_contender").counts, Some(UsageKind::Battles));
        assert_eq!(gate("create_battle").needs, Some(Capability::CreateBattles));
        assert_eq!(gate("submit_battle_run"), Gate { needs: Some(Capability::JoinBattles), counts: None });
        assert_eq!(gate("get_lens"), Gate::default());
    }

    #[test]
    fn the_summary_redacts_secret_named_fields_at_any_depth() {
        let args = |v: Value| v.as_object().cloned().unwrap();
        let plain = args(json!({"lens_id": "l1", "inputs": [{"topic": "tides"}]}));
        assert_eq!(summary(&plain, None), r#"{"lens_id":"l1","inputs":[{"topic":"tides"}]}"#);
        let secret =
            args(json!({"lens_id": "l1", "inputs": [{"API_KEY": "sk-1", "topic": "tides"}], "token": "t"}));
        assert_eq!(
            summary(&secret, Some("[battle b1]".into())),
            r#"[battle b1] {"lens_id":"l1","inputs":[{"API_KEY":"[redacted]","topic":"tides"}],"token":"[redacted]"}"#
        );
    }
}
