//! How a run moves on between events: what is ready, what starts, skips
//! or completes, loops opened and closed, and the run's result.

use super::*;

impl Mover<'_> {
    /// Starts, skips and completes what can be, until nothing changes.
    pub(super) fn advance(&mut self) {
        loop {
            let mut moved = false;
            let pending: Vec<Slot> = self.pending_in_order();
            for slot in pending {
                if self.state.status != RunStatus::Running {
                    return;
                }
                match self.readiness(slot) {
                    Readiness::Waiting => {}
                    Readiness::Skip => {
                        self.settle(slot, NodeStatus::Skipped);
                        moved = true;
                    }
                    Readiness::Ready(input) => moved |= self.begin(slot, input),
                }
            }
            moved |= self.close_loops();
            if self.state.status != RunStatus::Running {
                return;
            }
            if !moved {
                break;
            }
        }
        if self.state.slots.values().all(|n| n.status.is_settled()) {
            let result = self.result();
            self.end(RunStatus::Completed, result, None);
        }
    }

    /// Pending slots, in an order where every connection goes forward.
    fn pending_in_order(&self) -> Vec<Slot> {
        let mut rank = vec![0u32; self.plan.nodes.len()];
        for (r, &i) in self.plan.order.iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        let mut v: Vec<Slot> = self
            .state
            .slots
            .iter()
            .filter(|(_, n)| n.status == NodeStatus::Pending)
            .map(|(s, _)| *s)
            .collect();
        v.sort_by_key(|s| (rank[s.node as usize], s.item));
        v
    }

    /// Starts the node at `slot`; false when it must wait for a free place.
    fn begin(&mut self, slot: Slot, input: Value) -> bool {
        let plan = self.plan;
        let node = plan.node(slot.node);
        let now = self.now();
        match node.role {
            Role::Trigger => false,
            Role::Try => {
                let out = json!({"try": main_input(&input).clone()});
                self.set(slot, |n| {
                    n.status = NodeStatus::Completed;
                    n.attempt = 1;
                    n.input = Some(input);
                    n.output = Some(out);
                    n.started_at = Some(now);
                    n.finished_at = Some(now);
                });
                true
            }
            Role::Wait => {
                let wake = wait_until(&node.config, now);
                self.set(slot, |n| {
                    n.status = NodeStatus::Running;
                    n.attempt = 1;
                    n.input = Some(input);
                    n.started_at = Some(now);
                    n.wake_at = Some(wake);
                });
                true
            }
            Role::Loop => {
                self.open_loop(slot, input);
                true
            }
            Role::Work | Role::Catch | Role::Stop => {
                let limits: Limits = self.state.limits;
                if self.running() >= limits.parallel.max(1) as usize {
                    return false;
                }
                if node.calls_model
                    && let Some(budget) = limits.budget_credits
                {
                    let spent = self.state.usage().credits;
                    if spent >= budget {
                        let e = RunError {
                            code: "budget_exceeded".into(),
                            message: format!(
                                "the run's budget of {budget} credits is spent ({spent} used); step {} was not started. Retry with a larger budget_credits.",
                                node.key
                            ),
                            node: Some(node.key.clone()),
                        };
                        self.end(RunStatus::Failed, None, Some(e));
                        return true;
                    }
                }
                let attempt = self.state.get(slot).map_or(0, |n| n.attempt) + 1;
                let timeout_ms = self.timeout_ms(slot);
                self.set(slot, |n| {
                    n.status = NodeStatus::Running;
                    n.attempt = attempt;
                    n.input = Some(input.clone());
                    n.started_at.get_or_insert(now);
                });
                self.out.actions.push(Action::Run { slot, attempt, input, timeout_ms });
                true
            }
        }
    }

    fn open_loop(&mut self, slot: Slot, input: Value) {
        let plan = self.plan;
        let node = plan.node(slot.node);
        let now = self.now();
        let at = node.config.get("items_path").and_then(Value::as_str).unwrap_or("output");
        let max = node.config.get("max_items").and_then(Value::as_u64).unwrap_or(100);
        let items = Pick::parse("items_path", at)
            .ok()
            .and_then(|p| p.pick(main_input(&input)).map(|c| c.into_owned()));
        let failure = match &items {
            Some(Value::Array(a)) if a.len() as u64 > max => {
                Some(Failure::new("invalid_input", format!("{} items, more than max_items {max}", a.len())))
            }
            Some(Value::Array(_)) => None,
            Some(other) => Some(Failure::new(
                "invalid_input",
                format!("items_path {at} selects {}, not an array", crate::json::kind(other)),
            )),
            None => {
                Some(Failure::new("invalid_input", format!("items_path {at} selects nothing in the input")))
            }
        };
        if let Some(f) = failure {
            self.set(slot, |n| {
                n.status = NodeStatus::Failed;
                n.attempt = 1;
                n.input = Some(input);
                n.error = Some(f.clone());
                n.started_at = Some(now);
                n.finished_at = Some(now);
            });
            return self.handle_failure(slot, f);
        }
        let Some(Value::Array(items)) = items else { return };
        let count = items.len() as u32;
        self.set(slot, |n| {
            n.status = NodeStatus::Running;
            n.attempt = 1;
            n.input = Some(input);
            n.output = Some(json!({"items": items}));
            n.started_at = Some(now);
        });
        let (body, _) = plan.body(slot.node);
        for item in 0..count {
            for &b in body {
                self.set(Slot { node: b, item: Some(item) }, |_| {});
            }
        }
    }

    /// Completes every running loop whose items have all settled.
    fn close_loops(&mut self) -> bool {
        let plan = self.plan;
        let mut moved = false;
        for (l, body, last) in &plan.loops {
            let slot = Slot::top(*l);
            if self.status(slot) != Some(NodeStatus::Running) {
                continue;
            }
            let count = self
                .state
                .get(slot)
                .and_then(|n| n.output.as_ref())
                .and_then(|o| o["items"].as_array())
                .map_or(0, Vec::len) as u32;
            let all_settled = (0..count).all(|i| {
                body.iter()
                    .all(|&b| self.status(Slot { node: b, item: Some(i) }).is_none_or(NodeStatus::is_settled))
            });
            if !all_settled {
                continue;
            }
            let results: Vec<Value> = (0..count)
                .map(|i| {
                    let outs = last.iter().map(|&b| {
                        let n = self.state.get(Slot { node: b, item: Some(i) });
                        (plan.node(b).key.clone(), n.and_then(|n| n.output.clone()).unwrap_or(Value::Null))
                    });
                    one_or_keyed(outs.collect())
                })
                .collect();
            let now = self.now();
            self.set(slot, |n| {
                n.status = NodeStatus::Completed;
                n.output = Some(json!({"results": results}));
                n.finished_at = Some(now);
            });
            moved = true;
        }
        moved
    }

    /// Whether the node at `slot` can start, must be skipped, or waits.
    fn readiness(&self, slot: Slot) -> Readiness {
        let plan = self.plan;
        let node = plan.node(slot.node);
        if node.wires.is_empty() {
            return Readiness::Skip;
        }
        let mut carried: Vec<(&Wire, Value)> = Vec::new();
        for w in &node.wires {
            let src = match (slot.item, node.in_loop) {
                (Some(item), Some(l)) if w.from == l => {
                    // The loop's own connection: the item itself (or another
                    // of its outputs, which does not exist yet inside the body).
                    let items = self.state.get(Slot::top(l)).and_then(|n| n.output.as_ref());
                    let element = items.and_then(|o| o["items"].get(item as usize));
                    if w.pick.field() == Some("item")
                        && let Some(e) = element
                    {
                        carried.push((w, e.clone()));
                    }
                    continue;
                }
                (Some(item), Some(l)) if plan.node(w.from).in_loop == Some(l) => {
                    Slot { node: w.from, item: Some(item) }
                }
                _ => Slot::top(w.from),
            };
            let Some(run) = self.state.get(src) else { return Readiness::Waiting };
            if !run.status.is_settled() {
                return Readiness::Waiting;
            }
            if plan.is_catch_wire(w)
                && plan
                    .scope(w.from)
                    .iter()
                    .any(|&s| self.status(Slot::top(s)).is_some_and(|st| !st.is_settled()))
            {
                return Readiness::Waiting;
            }
            let value = match run.status {
                NodeStatus::Completed => run.output.as_ref().and_then(|o| {
                    let held = w.condition.as_ref().is_none_or(|c| c.test(o));
                    held.then(|| w.pick.pick(o).map(|c| c.into_owned())).flatten()
                }),
                NodeStatus::Failed if w.pick.field() == Some(ERROR_PORT) => {
                    run.error.as_ref().map(|e| e.to_value(&plan.node(w.from).key))
                }
                _ => None,
            };
            if let Some(v) = value {
                carried.push((w, v));
            }
        }
        if carried.is_empty() {
            return Readiness::Skip;
        }
        Readiness::Ready(resolve_inputs(plan, &node.parameters, &carried))
    }

    fn result(&self) -> Option<Value> {
        let plan = self.plan;
        let last: Vec<(String, Value)> = (0..plan.nodes.len() as u32)
            .filter(|&i| plan.node(i).in_loop.is_none())
            .filter(|&i| !plan.nodes.iter().any(|n| n.wires.iter().any(|w| w.from == i)))
            .filter_map(|i| {
                let n = self.state.get(Slot::top(i))?;
                (n.status == NodeStatus::Completed)
                    .then(|| (plan.node(i).key.clone(), n.output.clone().unwrap_or_default()))
            })
            .collect();
        (!last.is_empty()).then(|| one_or_keyed(last))
    }
}

/// Configured parameters merged with what the connections carried, by
/// input parameter (the data-flow rules in the crate docs).
fn resolve_inputs(plan: &Plan, parameters: &Map<String, Value>, carried: &[(&Wire, Value)]) -> Value {
    let mut out = parameters.clone();
    let mut params: Vec<&str> = Vec::new();
    for (w, _) in carried {
        if !params.contains(&w.param.as_str()) {
            params.push(&w.param);
        }
    }
    for p in params {
        let strategy = carried
            .iter()
            .find(|(w, _)| w.param == p)
            .map_or(MergeStrategy::LastWriteWins, |(w, _)| w.strategy);
        let wired =
            carried.iter().filter(|(w, _)| w.param == p).map(|(w, v)| (plan.node(w.from).key.as_str(), v));
        let merged = match (strategy, parameters.get(p)) {
            // The configured value comes first where it is kept at all.
            (MergeStrategy::Concat | MergeStrategy::Array, Some(configured)) => {
                combine(strategy, std::iter::once(("", configured)).chain(wired))
            }
            _ => combine(strategy, wired),
        };
        out.insert(p.to_owned(), merged);
    }
    Value::Object(out)
}

fn one_or_keyed(mut outs: Vec<(String, Value)>) -> Value {
    if outs.len() == 1 {
        return outs.remove(0).1;
    }
    Value::Object(outs.into_iter().collect())
}

/// When a `wait_delay` started `now` ends: `until`, or `delay_ms` after
/// now (at most 7 days either way).
fn wait_until(config: &Map<String, Value>, now: Timestamp) -> Timestamp {
    let latest = now.plus_micros(MAX_WAIT_MS as i64 * 1_000);
    if let Some(until) = config.get("until").and_then(Value::as_str)
        && let Ok(t) = chrono::DateTime::parse_from_rfc3339(until)
    {
        return Timestamp::from_datetime(t.to_utc()).clamp(now, latest);
    }
    let ms = config.get("delay_ms").and_then(Value::as_u64).unwrap_or(5_000).min(MAX_WAIT_MS);
    now.plus_micros(ms as i64 * 1_000)
}
