//! Graph algorithms over node indices, each linear in nodes plus edges:
//! Kahn's topological order, the cycles that stop it, and reachability.

use std::collections::VecDeque;

/// A directed graph of `n` nodes as successor lists in one array.
pub struct Dag {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl Dag {
    /// The graph of `edges` (`from`, `to`), both `< n`. Parallel edges and
    /// self-loops are kept.
    pub fn new(n: usize, edges: &[(u32, u32)]) -> Self {
        let mut offsets = vec![0u32; n + 1];
        for &(from, _) in edges {
            offsets[from as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut targets = vec![0u32; edges.len()];
        for &(from, to) in edges {
            targets[fill[from as usize] as usize] = to;
            fill[from as usize] += 1;
        }
        Dag { offsets, targets }
    }

    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The successors of `v`, in edge order.
    pub fn successors(&self, v: u32) -> &[u32] {
        &self.targets[self.offsets[v as usize] as usize..self.offsets[v as usize + 1] as usize]
    }

    fn in_degrees(&self) -> Vec<u32> {
        let mut d = vec![0u32; self.len()];
        for &t in &self.targets {
            d[t as usize] += 1;
        }
        d
    }

    /// Kahn's algorithm: the roots (no incoming edge) in index order, then
    /// every node once its predecessors are all out, first in first out.
    /// The nodes on a cycle, and those downstream of one, are left out.
    pub fn topological_order(&self) -> Vec<u32> {
        let mut degree = self.in_degrees();
        let mut queue: VecDeque<u32> = (0..self.len() as u32).filter(|v| degree[*v as usize] == 0).collect();
        let mut order = Vec::with_capacity(self.len());
        while let Some(v) = queue.pop_front() {
            order.push(v);
            for &w in self.successors(v) {
                degree[w as usize] -= 1;
                if degree[w as usize] == 0 {
                    queue.push_back(w);
                }
            }
        }
        order
    }

    /// The nodes with no incoming edge, in index order.
    pub fn roots(&self) -> Vec<u32> {
        let degree = self.in_degrees();
        (0..self.len() as u32).filter(|v| degree[*v as usize] == 0).collect()
    }

    /// One cycle per strongly connected component that has one, each as
    /// the nodes on it in order (`a → b → c`, back to `a`), starting at the
    /// component's lowest index; components ordered by that index. Empty
    /// exactly when the graph is acyclic.
    pub fn cycles(&self) -> Vec<Vec<u32>> {
        let comp = self.components();
        let mut members: Vec<Vec<u32>> = Vec::new();
        let mut slot = vec![usize::MAX; comp.iter().map(|c| *c as usize + 1).max().unwrap_or(0)];
        for (v, &c) in comp.iter().enumerate() {
            if slot[c as usize] == usize::MAX {
                slot[c as usize] = members.len();
                members.push(Vec::new());
            }
            members[slot[c as usize]].push(v as u32);
        }
        let mut out = Vec::new();
        // Scratch shared by every component, so the whole is linear.
        let mut parent = vec![u32::MAX; self.len()];
        for m in members {
            let start = m[0];
            let c = comp[start as usize];
            let self_loop = self.successors(start).contains(&start);
            if m.len() == 1 && !self_loop {
                continue;
            }
            if self_loop {
                out.push(vec![start]);
                continue;
            }
            // Breadth first from `start` inside the component, until an edge
            // back to `start` closes a cycle.
            let mut queue = VecDeque::from([start]);
            parent[start as usize] = start;
            let mut closing = None;
            'search: while let Some(v) = queue.pop_front() {
                for &w in self.successors(v) {
                    if comp[w as usize] != c {
                        continue;
                    }
                    if w == start {
                        closing = Some(v);
                        break 'search;
                    }
                    if parent[w as usize] == u32::MAX {
                        parent[w as usize] = v;
                        queue.push_back(w);
                    }
                }
            }
            let mut cycle = Vec::new();
            let mut v = closing
                .expect("a strongly connected component of two or more nodes has a cycle through each");
            while v != start {
                cycle.push(v);
                v = parent[v as usize];
            }
            cycle.push(start);
            cycle.reverse();
            out.push(cycle);
        }
        out
    }

    /// Tarjan's strongly connected components, iteratively (no recursion
    /// however deep the graph): each node's component number.
    fn components(&self) -> Vec<u32> {
        const UNSEEN: u32 = u32::MAX;
        let n = self.len();
        let mut index = vec![UNSEEN; n];
        let mut low = vec![0u32; n];
        let mut on_stack = vec![false; n];
        let mut comp = vec![UNSEEN; n];
        let mut stack: Vec<u32> = Vec::new();
        let mut next_index = 0u32;
        let mut next_comp = 0u32;
        // (node, position in its successor list)
        let mut call: Vec<(u32, usize)> = Vec::new();
        for root in 0..n as u32 {
            if index[root as usize] != UNSEEN {
                continue;
            }
            call.push((root, 0));
            while let Some(&mut (v, ref mut at)) = call.last_mut() {
                let vi = v as usize;
                if *at == 0 && index[vi] == UNSEEN {
                    index[vi] = next_index;
                    low[vi] = next_index;
                    next_index += 1;
                    stack.push(v);
                    on_stack[vi] = true;
                }
                let succ = self.successors(v);
                if let Some(&w) = succ.get(*at) {
                    *at += 1;
                    let wi = w as usize;
                    if index[wi] == UNSEEN {
                        call.push((w, 0));
                    } else if on_stack[wi] {
                        low[vi] = low[vi].min(index[wi]);
                    }
                    continue;
                }
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u as usize] = low[u as usize].min(low[vi]);
                }
                if low[vi] == index[vi] {
                    while let Some(w) = stack.pop() {
                        on_stack[w as usize] = false;
                        comp[w as usize] = next_comp;
                        if w == v {
                            break;
                        }
                    }
                    next_comp += 1;
                }
            }
        }
        comp
    }

    /// Which nodes can be reached from `starts` (the starts included).
    pub fn reachable_from(&self, starts: &[u32]) -> Vec<bool> {
        let mut seen = vec![false; self.len()];
        let mut queue: VecDeque<u32> = VecDeque::new();
        for &s in starts {
            if !seen[s as usize] {
                seen[s as usize] = true;
                queue.push_back(s);
            }
        }
        while let Some(v) = queue.pop_front() {
            for &w in self.successors(v) {
                if !seen[w as usize] {
                    seen[w as usize] = true;
                    queue.push_back(w);
                }
            }
        }
        seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_roots() {
        let g = Dag::new(4, &[(0, 2), (1, 2), (2, 3)]);
        assert_eq!(g.topological_order(), vec![0, 1, 2, 3]);
        assert_eq!(g.roots(), vec![0, 1]);
        assert!(g.cycles().is_empty());
        assert_eq!(g.reachable_from(&[1]), vec![false, true, true, true]);
    }

    #[test]
    fn cycles_name_their_nodes() {
        // 0 → 1 → 2 → 0, 3 → 3, 4 downstream of the first cycle.
        let g = Dag::new(5, &[(0, 1), (1, 2), (2, 0), (3, 3), (2, 4)]);
        assert_eq!(g.topological_order(), Vec::<u32>::new());
        assert_eq!(g.cycles(), vec![vec![0, 1, 2], vec![3]]);
        let g = Dag::new(2, &[(0, 1), (1, 0)]);
        assert_eq!(g.cycles(), vec![vec![0, 1]]);
    }

    #[test]
    fn deep_chains_need_no_recursion() {
        let n = 200_000u32;
        let mut edges: Vec<(u32, u32)> = (0..n - 1).map(|i| (i, i + 1)).collect();
        edges.push((n - 1, 0));
        let g = Dag::new(n as usize, &edges);
        assert_eq!(g.cycles()[0].len(), n as usize);
    }
}
