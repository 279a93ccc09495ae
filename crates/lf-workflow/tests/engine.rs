//! The engine's step function, driven by a small simulated runner: the
//! executors are closures, time is a number the test moves.

use std::sync::Arc;

use lf_core::{LenserId, Principal, Scopes, Timestamp};
use lf_workflow::engine::{
    Action, Event, Failure, Limits, LogLevel, LogLine, NodeStatus, Plan, RunState, RunStatus, Slot, Tick,
    Usage, main_input, step,
};
use lf_workflow::{
    MemoryConnections, MemoryLenses, MemoryWorkflowStore, NewWorkflow, RawBlueprint, WorkflowService,
    WorkflowVersion,
};
use pollster::block_on;
use serde_json::{Value, json};

fn version(steps: Value, connections: Value) -> WorkflowVersion {
    let service = WorkflowService::new(
        Arc::new(MemoryWorkflowStore::new()),
        Arc::new(MemoryLenses::new()),
        Arc::new(MemoryConnections::new()),
    );
    let me = Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE };
    let blueprint: RawBlueprint =
        serde_json::from_value(json!({"title": "t", "steps": steps, "connections": connections})).unwrap();
    block_on(service.create(&me, NewWorkflow { blueprint, owner: None }))
        .expect("the test's workflow is created")
        .version
}

fn trigger() -> Value {
    json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"})
}

fn tool(key: &str, node_type: &str, config: Value) -> Value {
    json!({"key": key, "kind": "tool", "name": key, "node_type": node_type, "config": config})
}

fn wire(from: &str, to: &str) -> Value {
    json!({"from_step": from, "to_step": to, "input_parameter": "input"})
}

fn wire_key(from: &str, key: &str, to: &str) -> Value {
    json!({"from_step": from, "output_key": key, "to_step": to, "input_parameter": "input"})
}

type Exec = Box<dyn FnMut(&str, Slot, u32, &Value) -> Result<(Value, Usage), Failure>>;

/// A runner that runs every started attempt at once, in order.
struct Sim {
    plan: Plan,
    state: RunState,
    now: i64,
    exec: Exec,
    /// Every Run action, as (step key, item, attempt).
    started: Vec<(String, Option<u32>, u32)>,
    /// Hold attempts instead of running them (to look between steps).
    hold: bool,
    held: Vec<(Slot, u32, Value)>,
    aborted: Vec<Slot>,
}

impl Sim {
    fn new(v: &WorkflowVersion, inputs: Value, limits: Limits, exec: Exec) -> Self {
        Sim {
            plan: Plan::new(v).expect("a plan"),
            state: RunState::new(inputs, limits),
            now: 1_000_000_000,
            exec,
            started: vec![],
            hold: false,
            held: vec![],
            aborted: vec![],
        }
    }

    fn tick(&self) -> Tick {
        Tick { now: Timestamp::from_micros(self.now), seed: 25 }
    }

    fn send(&mut self, e: Event) {
        let mut queue = vec![e];
        while let Some(e) = queue.pop() {
            let tick = self.tick();
            let out = step(&self.plan, &mut self.state, e, tick);
            for a in out.actions {
                match a {
                    Action::Run { slot, attempt, input, .. } => {
                        let key = self.plan.node(slot.node).key.clone();
                        self.started.push((key.clone(), slot.item, attempt));
                        if self.hold {
                            self.held.push((slot, attempt, input));
                            continue;
                        }
                        queue.insert(0, self.result(&key, slot, attempt, &input));
                    }
                    Action::Abort { slot } => self.aborted.push(slot),
                    Action::Finish { .. } | Action::Release => {}
                }
            }
        }
    }

    fn result(&mut self, key: &str, slot: Slot, attempt: u32, input: &Value) -> Event {
        match (self.exec)(key, slot, attempt, input) {
            Ok((output, usage)) => Event::NodeFinished { slot, attempt, output, usage, log: None },
            Err(failure) => Event::NodeFailed { slot, attempt, failure, usage: Usage::default() },
        }
    }

    /// Runs to the end, firing timers as they come due.
    fn finish(&mut self) -> RunStatus {
        self.send(Event::Started);
        for _ in 0..100 {
            if self.state.status.is_final() {
                break;
            }
            let wake = self.state.next_wake().expect("an unfinished run waits for a timer");
            self.now = self.now.max(wake.as_micros());
            self.send(Event::TimerFired);
        }
        self.state.status
    }

    fn node(&self, key: &str, item: Option<u32>) -> &lf_workflow::engine::NodeRun {
        let i = self.plan.nodes.iter().position(|n| n.key == key).unwrap() as u32;
        self.state.get(Slot { node: i, item }).unwrap_or_else(|| panic!("no result for {key}"))
    }

    fn status(&self, key: &str) -> NodeStatus {
        self.node(key, None).status
    }
}

/// Executors that pass their main input on, tagging it with the step.
fn echo() -> Exec {
    Box::new(|key, _, _, input| Ok((json!({"from": key, "input": main_input(input)}), Usage::default())))
}

#[test]
fn a_line_runs_in_order_and_its_last_step_is_the_result() {
    let v = version(
        json!([trigger(), tool("a", "noop", json!({})), tool("b", "noop", json!({}))]),
        json!([wire("start", "a"), wire("a", "b")]),
    );
    let mut sim = Sim::new(&v, json!({"topic": "rust"}), Limits::default(), echo());
    assert_eq!(sim.finish(), RunStatus::Completed);
    let keys: Vec<&str> = sim.started.iter().map(|(k, _, _)| k.as_str()).collect();
    assert_eq!(keys, ["a", "b"]);
    assert_eq!(
        sim.node("a", None).input,
        Some(json!({"input": {"topic": "rust"}})),
        "the trigger's output is the inputs"
    );
    assert_eq!(
        sim.state.result,
        Some(json!({"from": "b", "input": {"from": "a", "input": {"topic": "rust"}}}))
    );
    assert_eq!(sim.status("start"), NodeStatus::Completed);
}

#[test]
fn a_branch_not_taken_is_skipped_and_a_join_runs_with_what_reached_it() {
    let v = version(
        json!([
            trigger(),
            tool("gate", "if_condition", json!({"condition": {"path": "$.score", "op": "gte", "value": 7}})),
            tool("good", "noop", json!({})),
            tool("bad", "noop", json!({})),
            tool("after_bad", "noop", json!({})),
            tool("join", "merge", json!({})),
        ]),
        json!([
            wire("start", "gate"),
            wire_key("gate", "true", "good"),
            wire_key("gate", "false", "bad"),
            wire("bad", "after_bad"),
            {"from_step": "good", "to_step": "join", "input_parameter": "good"},
            {"from_step": "after_bad", "to_step": "join", "input_parameter": "bad"},
        ]),
    );
    let exec: Exec = Box::new(|key, _, _, input| {
        let out = match key {
            // What if_condition's executor outputs: the input under the branch taken.
            "gate" => json!({"true": main_input(input)}),
            "join" => input.clone(),
            _ => json!({"from": key}),
        };
        Ok((out, Usage::default()))
    });
    let mut sim = Sim::new(&v, json!({"score": 8}), Limits::default(), exec);
    assert_eq!(sim.finish(), RunStatus::Completed);
    assert_eq!(sim.status("bad"), NodeStatus::Skipped);
    assert_eq!(sim.status("after_bad"), NodeStatus::Skipped, "skipping carries on down the branch");
    assert_eq!(sim.status("good"), NodeStatus::Completed);
    assert_eq!(sim.node("join", None).input, Some(json!({"good": {"from": "good"}})));
}

#[test]
fn a_condition_on_a_connection_decides_whether_it_is_taken() {
    let v = version(
        json!([trigger(), tool("hi", "noop", json!({})), tool("lo", "noop", json!({}))]),
        json!([
            {"from_step": "start", "to_step": "hi", "input_parameter": "input", "condition": {"path": "n", "op": "gt", "value": 5}},
            {"from_step": "start", "to_step": "lo", "input_parameter": "input", "condition": {"not": {"path": "n", "op": "gt", "value": 5}}},
        ]),
    );
    let mut sim = Sim::new(&v, json!({"n": 9}), Limits::default(), echo());
    assert_eq!(sim.finish(), RunStatus::Completed);
    assert_eq!((sim.status("hi"), sim.status("lo")), (NodeStatus::Completed, NodeStatus::Skipped));
}

#[test]
fn at_most_the_parallel_bound_runs_at_once() {
    let keys = ["a", "b", "c", "d", "e", "f"];
    let mut steps = vec![trigger()];
    let mut conns = vec![];
    for k in keys {
        steps.push(tool(k, "noop", json!({})));
        conns.push(wire("start", k));
    }
    let v = version(json!(steps), json!(conns));
    let mut sim = Sim::new(&v, json!({}), Limits { parallel: 4, ..Limits::default() }, echo());
    sim.hold = true;
    sim.send(Event::Started);
    assert_eq!(sim.held.len(), 4, "four of six start");
    let (slot, attempt, input) = sim.held.remove(0);
    sim.send(Event::NodeFinished { slot, attempt, output: input, usage: Usage::default(), log: None });
    assert_eq!(sim.held.len(), 4, "one finished, one more started");
    assert_eq!(sim.started.len(), 5);
    while let Some((slot, attempt, input)) = sim.held.pop() {
        sim.send(Event::NodeFinished { slot, attempt, output: input, usage: Usage::default(), log: None });
    }
    assert_eq!(sim.state.status, RunStatus::Completed);
    assert_eq!(sim.started.len(), 6);
    let result = sim.state.result.clone().unwrap();
    assert_eq!(result.as_object().unwrap().len(), 6, "several last steps: the result is keyed by step");
}

fn summarizer(key: &str) -> Value {
    tool(key, "summarizer", json!({}))
}

#[test]
fn a_retryable_failure_is_retried_with_growing_backoff_then_succeeds() {
    let v = version(json!([trigger(), summarizer("sum")]), json!([wire("start", "sum")]));
    let exec: Exec = Box::new(|_, _, attempt, _| {
        if attempt < 3 {
            Err(Failure::new("provider_error", "the model answered 503"))
        } else {
            Ok((json!({"text": "ok"}), Usage { model_calls: 1, tokens: 10, credits: 1 }))
        }
    });
    let mut sim = Sim::new(&v, json!({}), Limits::default(), exec);
    sim.send(Event::Started);
    assert_eq!(sim.status("sum"), NodeStatus::Retrying);
    let first = sim.node("sum", None).wake_at.unwrap().as_micros() - sim.now;
    sim.now += first;
    sim.send(Event::TimerFired);
    let second = sim.node("sum", None).wake_at.unwrap().as_micros() - sim.now;
    // 1 s then 2 s, each scaled by the same jitter (seed 25: 100 %).
    assert_eq!((first, second), (1_000_000, 2_000_000));
    assert_eq!(sim.finish(), RunStatus::Completed);
    assert_eq!(sim.node("sum", None).attempt, 3);
    assert_eq!(sim.state.usage().credits, 1);
}

#[test]
fn jitter_spreads_retries_by_a_quarter_either_way() {
    let v = version(json!([trigger(), summarizer("sum")]), json!([wire("start", "sum")]));
    let mut delays = vec![];
    for seed in [0u64, 50, 51] {
        let plan = Plan::new(&v).unwrap();
        let mut state = RunState::new(json!({}), Limits::default());
        let now = Timestamp::from_micros(0);
        let out = step(&plan, &mut state, Event::Started, Tick { now, seed });
        let Action::Run { slot, attempt, .. } = out.actions[0].clone() else { panic!() };
        let failure = Failure::new("timeout", "slow");
        step(
            &plan,
            &mut state,
            Event::NodeFailed { slot, attempt, failure, usage: Usage::default() },
            Tick { now, seed },
        );
        delays.push(state.get(slot).unwrap().wake_at.unwrap().as_micros());
    }
    assert_eq!(delays, [750_000, 1_250_000, 750_000]);
}

#[test]
fn a_failure_nobody_handles_fails_the_run_naming_the_step() {
    let v = version(
        json!([trigger(), tool("a", "noop", json!({})), tool("b", "noop", json!({}))]),
        json!([wire("start", "a"), wire("a", "b")]),
    );
    let exec: Exec = Box::new(|key, _, _, _| match key {
        "a" => Err(Failure::new("invalid_input", "no text")),
        _ => Ok((json!({}), Usage::default())),
    });
    let mut sim = Sim::new(&v, json!({}), Limits::default(), exec);
    assert_eq!(sim.finish(), RunStatus::Failed);
    assert_eq!(sim.node("a", None).attempt, 1, "noop does not retry");
    let e = sim.state.error.clone().unwrap();
    assert_eq!((e.code.as_str(), e.node.as_deref()), ("node_failed", Some("a")));
    assert!(e.message.contains("no text"), "{}", e.message);
    assert_eq!(sim.status("b"), NodeStatus::Skipped);
}

#[test]
fn an_error_catch_takes_the_error_and_the_run_goes_on_or_ends_as_configured() {
    for (go_on, want) in [(true, RunStatus::Completed), (false, RunStatus::Failed)] {
        let v = version(
            json!([
                trigger(),
                tool("fetch", "noop", json!({})),
                tool(
                    "catch",
                    "error_catch",
                    json!({"fallback_value": {"items": []}, "continue_on_error": go_on})
                ),
            ]),
            json!([wire("start", "fetch"), wire_key("fetch", "error", "catch")]),
        );
        let exec: Exec = Box::new(|key, _, _, input| match key {
            "fetch" => Err(Failure::new("timeout", "took 60 s")),
            _ => Ok((json!({"caught": main_input(input)}), Usage::default())),
        });
        let mut sim = Sim::new(&v, json!({}), Limits::default(), exec);
        assert_eq!(sim.finish(), want);
        assert_eq!(sim.status("fetch"), NodeStatus::Failed);
        assert_eq!(
            sim.node("catch", None).input,
            Some(json!({"input": {"code": "timeout", "message": "took 60 s", "node": "fetch"}}))
        );
        if !go_on {
            let e = sim.state.error.clone().unwrap();
            assert_eq!(e.node.as_deref(), Some("fetch"));
            assert!(e.message.contains("took 60 s"));
        }
    }
}

fn guarded() -> WorkflowVersion {
    version(
        json!([
            trigger(),
            tool("guard", "try_catch", json!({})),
            tool("risky", "noop", json!({})),
            tool("then", "noop", json!({})),
            tool("other", "noop", json!({})),
            tool("handle", "noop", json!({})),
        ]),
        json!([
            wire("start", "guard"),
            wire_key("guard", "try", "risky"),
            wire("risky", "then"),
            wire_key("guard", "try", "other"),
            wire_key("guard", "catch", "handle"),
        ]),
    )
}

#[test]
fn a_try_catch_sends_a_guarded_failure_to_its_catch_output() {
    let exec: Exec = Box::new(|key, _, _, input| match key {
        "risky" => Err(Failure::new("status_5xx", "502")),
        _ => Ok((json!({"from": key, "input": main_input(input)}), Usage::default())),
    });
    let mut sim = Sim::new(&guarded(), json!({"x": 1}), Limits { parallel: 1, ..Limits::default() }, exec);
    assert_eq!(sim.finish(), RunStatus::Completed);
    assert_eq!(sim.status("risky"), NodeStatus::Failed);
    assert_eq!(sim.status("then"), NodeStatus::Cancelled, "the guarded steps after the failure do not run");
    assert_eq!(sim.status("handle"), NodeStatus::Completed);
    assert_eq!(
        sim.node("handle", None).input,
        Some(json!({"input": {"code": "status_5xx", "message": "502", "node": "risky"}}))
    );
}

#[test]
fn a_try_catch_without_failure_skips_its_catch_branch() {
    let mut sim = Sim::new(&guarded(), json!({"x": 1}), Limits::default(), echo());
    assert_eq!(sim.finish(), RunStatus::Completed);
    assert_eq!(sim.status("handle"), NodeStatus::Skipped);
    assert_eq!(sim.status("then"), NodeStatus::Completed);
    assert_eq!(sim.node("risky", None).input, Some(json!({"input": {"x": 1}})));
}

fn looped(max_items: u32) -> WorkflowVersion {
    version(
        json!([
            trigger(),
            tool("each", "loop_map", json!({"items_path": "$.items", "max_items": max_items})),
            tool("double", "noop", json!({})),
            tool("label", "noop", json!({})),
            tool("report", "noop", json!({})),
        ]),
        json!([
            wire("start", "each"),
            wire_key("each", "item", "double"),
            wire("double", "label"),
            wire_key("each", "results", "report"),
        ]),
    )
}

fn loop_exec() -> Exec {
    Box::new(|key, _, _, input| {
        let i = main_input(input);
        let out = match key {
            "double" => json!(i.as_i64().unwrap() * 2),
            "label" => json!(format!("#{i}")),
            _ => i.clone(),
        };
        Ok((out, Usage::default()))
    })
}

#[test]
fn a_loop_runs_its_body_per_item_and_collects_results_in_order() {
    let mut sim = Sim::new(&looped(10), json!({"items": [1, 2, 3]}), Limits::default(), loop_exec());
    assert_eq!(sim.finish(), RunStatus::Completed);
    assert_eq!(sim.node("each", None).output, Some(json!({"results": ["#2", "#4", "#6"]})));
    assert_eq!(sim.state.result, Some(json!(["#2", "#4", "#6"])));
    assert_eq!(sim.node("double", Some(2)).output, Some(json!(6)));
    assert_eq!(sim.started.iter().filter(|(k, _, _)| k == "double").count(), 3);
}

#[test]
fn a_loop_over_too_many_items_or_no_array_fails_saying_so() {
    let mut sim = Sim::new(&looped(2), json!({"items": [1, 2, 3]}), Limits::default(), loop_exec());
    assert_eq!(sim.finish(), RunStatus::Failed);
    assert!(sim.state.error.clone().unwrap().message.contains("more than max_items 2"));
    let mut sim = Sim::new(&looped(2), json!({"items": "x"}), Limits::default(), loop_exec());
    assert_eq!(sim.finish(), RunStatus::Failed);
    assert!(sim.state.error.clone().unwrap().message.contains("not an array"));
}

#[test]
fn a_failed_item_fails_its_loop() {
    let exec: Exec = Box::new(|key, slot, _, input| match (key, slot.item) {
        ("double", Some(1)) => Err(Failure::new("invalid_input", "not a number")),
        _ => Ok((main_input(input).clone(), Usage::default())),
    });
    let mut sim = Sim::new(&looped(10), json!({"items": [1, 2, 3]}), Limits::default(), exec);
    assert_eq!(sim.finish(), RunStatus::Failed);
    assert_eq!(sim.status("each"), NodeStatus::Failed);
    assert!(sim.node("each", None).error.clone().unwrap().message.starts_with("item 1: step double failed"));
    assert_eq!(sim.status("report"), NodeStatus::Skipped);
}

#[test]
fn an_empty_loop_completes_with_no_results() {
    let mut sim = Sim::new(&looped(10), json!({"items": []}), Limits::default(), loop_exec());
    assert_eq!(sim.finish(), RunStatus::Completed);
    assert_eq!(sim.state.result, Some(json!([])));
}

#[test]
fn a_wait_is_a_timer_in_the_state_not_a_running_task() {
    let v = version(
        json!([
            trigger(),
            tool("pause", "wait_delay", json!({"delay_ms": 3_600_000})),
            tool("after", "noop", json!({}))
        ]),
        json!([wire("start", "pause"), wire("pause", "after")]),
    );
    let mut sim = Sim::new(
        &v,
        json!({"text": "hi"}),
        Limits { run_timeout_ms: 7_200_000, ..Limits::default() },
        echo(),
    );
    sim.send(Event::Started);
    assert!(sim.started.is_empty(), "no executor runs a wait");
    let start = sim.now;
    assert_eq!(sim.state.next_wake().unwrap().as_micros(), start + 3_600_000_000);
    sim.now += 1_000_000;
    sim.send(Event::TimerFired);
    assert_eq!(sim.status("pause"), NodeStatus::Running, "an early timer changes nothing");
    // A restart: another process takes the state as the rows hold it.
    let saved = sim.state.clone();
    sim = Sim::new(&v, json!({}), Limits::default(), echo());
    sim.state = saved;
    sim.now = start + 1_000_000;
    assert_eq!(sim.finish(), RunStatus::Completed);
    assert_eq!(sim.node("pause", None).output, Some(json!({"text": "hi"})));
    assert_eq!(sim.node("after", None).started_at.unwrap().as_micros(), start + 3_600_000_000);
}

#[test]
fn a_model_step_past_the_budget_is_not_started_and_the_run_keeps_its_results() {
    let v = version(
        json!([trigger(), summarizer("one"), summarizer("two")]),
        json!([wire("start", "one"), wire("one", "two")]),
    );
    let exec: Exec =
        Box::new(|_, _, _, _| Ok((json!({"text": "s"}), Usage { model_calls: 1, tokens: 500, credits: 5 })));
    let mut sim = Sim::new(&v, json!({}), Limits { budget_credits: Some(5), ..Limits::default() }, exec);
    assert_eq!(sim.finish(), RunStatus::Failed);
    let e = sim.state.error.clone().unwrap();
    assert_eq!((e.code.as_str(), e.node.as_deref()), ("budget_exceeded", Some("two")));
    assert_eq!(sim.status("one"), NodeStatus::Completed);
    assert_eq!(sim.node("one", None).output, Some(json!({"text": "s"})));
    assert_eq!(sim.status("two"), NodeStatus::Skipped);
    assert_eq!(sim.started.len(), 1);
    assert_eq!(sim.state.usage(), Usage { model_calls: 1, tokens: 500, credits: 5 });
}

#[test]
fn a_cancel_aborts_what_runs_and_ignores_what_it_answers_later() {
    let v = version(
        json!([trigger(), tool("a", "noop", json!({})), tool("b", "noop", json!({}))]),
        json!([wire("start", "a"), wire("a", "b")]),
    );
    let mut sim = Sim::new(&v, json!({}), Limits::default(), echo());
    sim.hold = true;
    sim.send(Event::Started);
    sim.send(Event::CancelAsked { by: "alice".into() });
    assert_eq!(sim.state.status, RunStatus::Cancelled);
    assert_eq!(sim.aborted.len(), 1);
    assert_eq!((sim.status("a"), sim.status("b")), (NodeStatus::Cancelled, NodeStatus::Cancelled));
    let (slot, attempt, input) = sim.held.remove(0);
    sim.send(Event::NodeFinished { slot, attempt, output: input, usage: Usage::default(), log: None });
    assert_eq!(sim.status("a"), NodeStatus::Cancelled, "a late answer changes nothing");
    assert!(sim.state.error.clone().unwrap().message.contains("alice"));
}

#[test]
fn a_takeover_reruns_the_running_attempt_with_the_same_number() {
    let v = version(
        json!([trigger(), tool("post", "webhook_sender", json!({"url": "https://example.com/hook"}))]),
        json!([wire("start", "post")]),
    );
    let mut sim = Sim::new(&v, json!({}), Limits::default(), echo());
    sim.hold = true;
    sim.send(Event::Started);
    assert_eq!(sim.started, [("post".to_owned(), None, 1)]);
    // The process dies; another reads the rows and resumes.
    let mut other = Sim::new(&v, json!({}), Limits::default(), echo());
    other.state = sim.state.clone();
    other.send(Event::Resumed);
    assert_eq!(
        other.started,
        [("post".to_owned(), None, 1)],
        "the same attempt, so the same idempotency key"
    );
    assert_eq!(other.state.status, RunStatus::Completed);
    assert!(other.plan.node(0).key == "start" && other.plan.nodes.iter().any(|n| n.outside_effect));
}

#[test]
fn a_stale_answer_and_a_lost_lease_change_nothing() {
    let v = version(json!([trigger(), tool("a", "noop", json!({}))]), json!([wire("start", "a")]));
    let mut sim = Sim::new(&v, json!({}), Limits::default(), echo());
    sim.hold = true;
    sim.send(Event::Started);
    let (slot, _, _) = sim.held[0].clone();
    let before = sim.state.clone();
    sim.send(Event::NodeFinished { slot, attempt: 7, output: json!(1), usage: Usage::default(), log: None });
    assert_eq!(sim.state, before, "an answer for another attempt");
    let tick = sim.tick();
    let out = step(&sim.plan, &mut sim.state, Event::LeaseLost, tick);
    assert_eq!(out.actions, [Action::Release]);
    assert!(out.changed.is_empty());
    assert_eq!(sim.state, before);
}

#[test]
fn a_run_past_its_timeout_fails() {
    let v = version(json!([trigger(), tool("a", "noop", json!({}))]), json!([wire("start", "a")]));
    let mut sim = Sim::new(&v, json!({}), Limits { run_timeout_ms: 1_000, ..Limits::default() }, echo());
    sim.hold = true;
    sim.send(Event::Started);
    assert_eq!(sim.state.next_wake().unwrap().as_micros(), sim.now + 1_000_000);
    sim.now += 1_000_000;
    sim.send(Event::TimerFired);
    assert_eq!(sim.state.status, RunStatus::Failed);
    assert_eq!(sim.state.error.clone().unwrap().code, "timeout");
    assert_eq!(sim.aborted.len(), 1);
}

#[test]
fn a_stop_step_ends_the_run_with_its_result() {
    let v = version(
        json!([
            trigger(),
            tool("stop", "stop_return", json!({"return_path": "text"})),
            tool("never", "noop", json!({}))
        ]),
        json!([wire("start", "stop"), wire("start", "never")]),
    );
    let exec: Exec = Box::new(|key, _, _, _| match key {
        "stop" => Ok((json!("done"), Usage::default())),
        _ => Ok((json!({}), Usage::default())),
    });
    let mut sim = Sim::new(&v, json!({"text": "done"}), Limits { parallel: 1, ..Limits::default() }, exec);
    assert_eq!(sim.finish(), RunStatus::Completed);
    assert_eq!(sim.state.result, Some(json!("done")));
    assert_eq!(sim.status("never"), NodeStatus::Skipped);
}

#[test]
fn configured_parameters_and_wired_values_merge_by_strategy() {
    let v = version(
        json!([
            trigger(),
            tool("x", "noop", json!({})),
            tool("y", "noop", json!({})),
            {"key": "z", "kind": "tool", "name": "z", "node_type": "noop", "parameters": {"text": "intro", "keep": 1}},
        ]),
        json!([
            wire("start", "x"),
            wire("start", "y"),
            {"from_step": "x", "output_key": "t", "to_step": "z", "input_parameter": "text", "merge_strategy": "concat"},
            {"from_step": "y", "output_key": "t", "to_step": "z", "input_parameter": "text", "merge_strategy": "concat"},
        ]),
    );
    let exec: Exec = Box::new(|key, _, _, _| Ok((json!({"t": key}), Usage::default())));
    let mut sim = Sim::new(&v, json!({}), Limits::default(), exec);
    assert_eq!(sim.finish(), RunStatus::Completed);
    assert_eq!(sim.node("z", None).input, Some(json!({"text": "intro\n\nx\n\ny", "keep": 1})));
}

#[test]
fn a_loop_inside_a_loop_is_refused_with_the_steps_named() {
    let v = version(
        json!([
            trigger(),
            tool("outer", "loop_map", json!({})),
            tool("inner", "loop_map", json!({})),
            tool("body", "noop", json!({})),
        ]),
        json!([
            wire("start", "outer"),
            wire_key("outer", "item", "inner"),
            wire_key("inner", "item", "body")
        ]),
    );
    let e = Plan::new(&v).unwrap_err();
    assert!(e.contains("inner") && e.contains("outer") && e.contains("sub_workflow"), "{e}");
}

fn rate_limited() -> WorkflowVersion {
    version(
        json!([
            trigger(),
            tool("limit", "rate_limit", json!({"limit": 1})),
            tool("after", "noop", json!({}))
        ]),
        json!([wire("start", "limit"), wire("limit", "after")]),
    )
}

#[test]
fn a_deferred_attempt_runs_again_at_its_time_with_the_same_number_not_as_a_retry() {
    let v = rate_limited();
    let mut sim = Sim::new(&v, json!({"text": "hi"}), Limits::default(), echo());
    sim.hold = true;
    sim.send(Event::Started);
    let start = sim.now;
    let (slot, attempt, input) = sim.held.remove(0);
    assert_eq!(attempt, 1);
    let until = Timestamp::from_micros(start + 30_000_000);
    sim.send(Event::NodeDeferred { slot, attempt, until });
    let n = sim.node("limit", None);
    assert_eq!((n.status, n.attempt, n.wake_at), (NodeStatus::Running, 1, Some(until)));
    assert_eq!(n.error, None, "not a failure");
    assert_eq!(sim.state.next_wake(), Some(until));
    assert_eq!(sim.state.resume_at(), Some(until), "a runner that gives the run back takes it again then");
    // Early: nothing happens.
    sim.now = start + 29_000_000;
    sim.send(Event::TimerFired);
    assert_eq!(sim.started.len(), 1);
    // On time: the same attempt, with its input, and no wake left.
    sim.now = start + 30_000_000;
    sim.send(Event::TimerFired);
    assert_eq!(sim.started, [("limit".to_owned(), None, 1), ("limit".to_owned(), None, 1)]);
    assert_eq!(sim.held, [(slot, 1, input.clone())]);
    assert_eq!(sim.node("limit", None).wake_at, None);
    sim.held.clear();
    sim.hold = false;
    sim.send(Event::NodeFinished { slot, attempt: 1, output: input, usage: Usage::default(), log: None });
    assert_eq!(sim.state.status, RunStatus::Completed);
    assert_eq!(sim.node("limit", None).attempt, 1);
    assert_eq!(sim.status("after"), NodeStatus::Completed);
}

#[test]
fn a_deferred_attempt_survives_a_restart_and_is_not_rerun_before_its_time() {
    let v = rate_limited();
    let mut sim = Sim::new(&v, json!({}), Limits::default(), echo());
    sim.hold = true;
    sim.send(Event::Started);
    let (slot, attempt, _) = sim.held.remove(0);
    let until = Timestamp::from_micros(sim.now + 60_000_000);
    sim.send(Event::NodeDeferred { slot, attempt, until });
    // Another process takes the state as the rows hold it.
    let mut other = Sim::new(&v, json!({}), Limits::default(), echo());
    other.state = sim.state.clone();
    other.now = sim.now + 1_000_000;
    other.hold = true;
    other.send(Event::Resumed);
    assert!(other.started.is_empty(), "a deferred attempt waits for its timer, also after a takeover");
    other.hold = false;
    assert_eq!(other.finish(), RunStatus::Completed);
    assert_eq!(other.started, [("limit".to_owned(), None, 1), ("after".to_owned(), None, 1)]);
    assert_eq!(other.node("limit", None).started_at, sim.node("limit", None).started_at);
    assert!(other.node("after", None).started_at.unwrap() >= until);
}

#[test]
fn a_deferral_for_another_attempt_or_in_the_past_does_no_harm() {
    let v = rate_limited();
    let mut sim = Sim::new(&v, json!({}), Limits::default(), echo());
    sim.hold = true;
    sim.send(Event::Started);
    let (slot, _, _) = sim.held.remove(0);
    let before = sim.state.clone();
    sim.send(Event::NodeDeferred { slot, attempt: 2, until: Timestamp::from_micros(sim.now + 5) });
    assert_eq!(sim.state, before, "a deferral for another attempt");
    // A time already past runs the attempt again on the next timer.
    sim.send(Event::NodeDeferred { slot, attempt: 1, until: Timestamp::from_micros(0) });
    assert_eq!(sim.node("limit", None).wake_at, Some(Timestamp::from_micros(sim.now)));
    sim.send(Event::TimerFired);
    assert_eq!(sim.started.len(), 2);
    // A cancel while deferred ends it like any running attempt.
    sim.send(Event::NodeDeferred { slot, attempt: 1, until: Timestamp::from_micros(sim.now + 1_000) });
    sim.send(Event::CancelAsked { by: "bob".into() });
    assert_eq!((sim.state.status, sim.status("limit")), (RunStatus::Cancelled, NodeStatus::Cancelled));
    assert_eq!(sim.state.next_wake(), None);
}

/// Two steps side by side after the trigger, then one after both.
fn side_by_side() -> WorkflowVersion {
    version(
        json!([
            trigger(),
            tool("agent", "noop", json!({})),
            tool("other", "noop", json!({})),
            tool("after", "merge", json!({}))
        ]),
        json!([
            wire("start", "agent"),
            wire("start", "other"),
            wire("agent", "after"),
            wire("other", "after")
        ]),
    )
}

#[test]
fn a_checkpoint_is_kept_and_a_waiting_attempt_runs_again_when_woken_or_at_its_time() {
    let v = side_by_side();
    let limits = Limits { parallel: 1, ..Limits::default() };
    let mut sim = Sim::new(&v, json!({}), limits, echo());
    sim.hold = true;
    sim.send(Event::Started);
    let start = sim.now;
    let (slot, attempt, input) = sim.held.remove(0);
    assert_eq!(sim.plan.node(slot.node).key, "agent");
    assert_eq!(sim.started.len(), 1, "one at a time");

    // A save while running: kept as the output's checkpoint, its usage counted.
    let usage = Usage { model_calls: 1, tokens: 40, credits: 1 };
    sim.send(Event::NodeCheckpoint { slot, attempt, state: json!({"turn": 1}), usage, wait: None });
    let n = sim.node("agent", None);
    assert_eq!(
        (n.status, n.checkpoint(), n.waiting_for()),
        (NodeStatus::Running, Some(&json!({"turn": 1})), None)
    );
    assert_eq!(sim.state.usage(), usage);
    // Another attempt's save changes nothing.
    let before = sim.state.clone();
    sim.send(Event::NodeCheckpoint { slot, attempt: 2, state: json!({}), usage, wait: None });
    assert_eq!(sim.state, before);

    // Waiting: no place under the parallel bound, the wait added to the run's time limit.
    let until = Timestamp::from_micros(start + 3_600_000_000);
    let wait = lf_workflow::engine::Wait { until, reason: "approval of delete_lens".into() };
    sim.send(Event::NodeCheckpoint {
        slot,
        attempt,
        state: json!({"turn": 2}),
        usage: Usage::default(),
        wait: Some(wait),
    });
    assert_eq!(sim.state.waiting().collect::<Vec<_>>(), [(slot, "approval of delete_lens")]);
    assert_eq!(sim.state.limits.run_timeout_ms, Limits::default().run_timeout_ms + 3_600_000);
    assert_eq!(sim.started.last().unwrap().0, "other", "the other step starts in the freed place");
    let other = sim.held.remove(0);
    sim.send(Event::NodeFinished {
        slot: other.0,
        attempt: 1,
        output: json!("other"),
        usage: Usage::default(),
        log: None,
    });
    assert_eq!(sim.state.status, RunStatus::Running, "the run waits for the waiting step");

    // A takeover does not run it before its time.
    let mut taken = Sim::new(&v, json!({}), limits, echo());
    taken.state = sim.state.clone();
    taken.now = sim.now + 1_000_000;
    taken.hold = true;
    taken.send(Event::Resumed);
    taken.send(Event::TimerFired);
    assert!(taken.started.is_empty(), "a waiting attempt waits, also after a takeover");
    // Past the original time limit, the run has not timed out.
    taken.now = start + Limits::default().run_timeout_ms as i64 * 1_000 + 1;
    taken.send(Event::TimerFired);
    assert_eq!(taken.state.status, RunStatus::Running);
    // Woken (a decision): the same attempt runs again now, its checkpoint kept, no longer waiting.
    taken.send(Event::Woken);
    assert_eq!(taken.held, [(slot, attempt, input.clone())]);
    let n = taken.node("agent", None);
    assert_eq!((n.checkpoint(), n.waiting_for(), n.wake_at), (Some(&json!({"turn": 2})), None, None));
    taken.hold = false;
    taken.send(Event::NodeFinished { slot, attempt, output: json!({"text": "done"}), usage, log: None });
    assert_eq!(taken.state.status, RunStatus::Completed);
    let n = taken.node("agent", None);
    assert_eq!((n.output.clone(), n.checkpoint()), (Some(json!({"text": "done"})), None));
    assert_eq!(taken.state.usage().tokens, 80, "the saves' usage and the end's");

    // Not woken: at its time.
    sim.now = until.as_micros();
    sim.send(Event::TimerFired);
    assert_eq!(sim.held, [(slot, attempt, input)]);
}

#[test]
fn a_finished_step_keeps_the_line_it_wrote_with_its_result() {
    let v = version(
        json!([trigger(), tool("log", "logger", json!({"message": "hi"}))]),
        json!([wire("start", "log")]),
    );
    let mut sim = Sim::new(
        &v,
        json!({"a": 1}),
        Limits::default(),
        Box::new(|_, _, _, i| Ok((i.clone(), Usage::default()))),
    );
    sim.hold = true;
    sim.send(Event::Started);
    let (slot, attempt, input) = sim.held.remove(0);
    let line = LogLine { level: LogLevel::Warn, message: "hi".into() };
    let finished = |attempt, output| Event::NodeFinished {
        slot,
        attempt,
        output,
        usage: Usage::default(),
        log: Some(line.clone()),
    };
    sim.send(finished(attempt + 1, json!(0)));
    assert_eq!(sim.node("log", None).log, None, "an answer for another attempt writes nothing");
    sim.send(finished(attempt, input.clone()));
    assert_eq!(sim.state.status, RunStatus::Completed);
    let n = sim.node("log", None);
    assert_eq!((n.output.as_ref(), n.log.as_ref()), (Some(&input), Some(&line)));
    assert_eq!(sim.node("start", None).log, None, "the trigger writes no line");
}
