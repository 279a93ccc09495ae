//! The read cache of the direct readers' point reads (see
//! [`super::direct::DirectReaders::run_cached`]): answers kept under the
//! generation of the tables they were read from, within a budget of bytes.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

/// Answers of one kind of point read, kept for as long as the tables the
/// cached reads read do not change (see [`DirectReaders::run_cached`]), up
/// to a budget of bytes.
///
/// Any change to one of those tables starts a new generation and forgets
/// every answer: no answer is told apart from the rows it came from, so none is
/// kept past a change to any of them. A full cache forgets half of what it
/// holds.
pub(crate) struct ReadCache<K, V> {
    state: Mutex<CacheState<K, V>>,
    /// The most the kept answers may weigh, in bytes.
    budget: usize,
    /// About how many bytes an answer holds (its strings), besides its key
    /// and its own size, which every entry is counted with.
    weigh: fn(&V) -> usize,
}

struct CacheState<K, V> {
    /// The generation every entry was read in.
    generation: u64,
    entries: HashMap<K, V, foldhash::fast::RandomState>,
    /// What the entries weigh together.
    weight: usize,
}

impl<K: Hash + Eq, V: Clone> ReadCache<K, V> {
    pub(crate) fn new(budget: usize, weigh: fn(&V) -> usize) -> Self {
        let state = CacheState { generation: 0, entries: HashMap::default(), weight: 0 };
        Self { state: Mutex::new(state), budget, weigh }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, CacheState<K, V>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn weight_of(&self, value: &V) -> usize {
        std::mem::size_of::<(K, V)>() + (self.weigh)(value)
    }

    /// Forgets every other entry, the first included, in the map's order
    /// (which has nothing to do with when or how often they were read): a
    /// full cache makes room without losing everything it holds.
    fn drop_half(&self, state: &mut CacheState<K, V>) {
        let mut keep = true;
        let mut dropped = 0;
        state.entries.retain(|_, value| {
            keep = !keep;
            if !keep {
                dropped += self.weight_of(value);
            }
            keep
        });
        state.weight -= dropped;
    }

    /// The answer kept for `key` in `generation`, if any.
    pub(super) fn get(&self, generation: u64, key: &K) -> Option<V> {
        let state = self.state();
        if state.generation != generation {
            return None;
        }
        state.entries.get(key).cloned()
    }

    /// Keeps `value`, read in `generation`, unless a newer generation has
    /// begun since or it alone weighs more than the budget.
    pub(super) fn put(&self, generation: u64, key: K, value: V) {
        let weight = self.weight_of(&value);
        if weight > self.budget {
            return;
        }
        let mut state = self.state();
        if generation < state.generation {
            return;
        }
        if generation > state.generation {
            state.entries.clear();
            state.weight = 0;
            state.generation = generation;
        }
        while state.weight + weight > self.budget {
            self.drop_half(&mut state);
        }
        state.weight += weight;
        if let Some(old) = state.entries.insert(key, value) {
            state.weight -= self.weight_of(&old);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ReadCache;

    /// Entries weigh their key and value plus their strings; what would pass
    /// the budget makes room by dropping half the entries, what alone passes
    /// it is not kept, and an answer read in an older generation is not kept
    /// either.
    #[test]
    fn the_cache_keeps_to_its_budget_and_its_generation() {
        let entry = std::mem::size_of::<(u32, String)>();
        let cache = ReadCache::new(3 * entry + 30, String::len);
        let kept = |keys: &[u32]| keys.iter().map(|k| cache.get(1, k).is_some()).collect::<Vec<_>>();
        for k in 0..3 {
            cache.put(1, k, "0123456789".to_owned());
        }
        assert_eq!(kept(&[0, 1, 2]), [true; 3]);
        assert_eq!(cache.get(1, &0).as_deref(), Some("0123456789"));
        cache.put(1, 3, "x".to_owned());
        let left = kept(&[0, 1, 2]).into_iter().filter(|k| *k).count();
        assert_eq!((left, cache.get(1, &3).is_some()), (1, true), "two of three dropped to make room");
        cache.put(1, 4, "y".repeat(3 * entry + 30));
        assert_eq!(kept(&[3, 4]), [true, false], "too heavy alone");
        cache.put(0, 5, "old".to_owned());
        assert_eq!(kept(&[3, 5]), [true, false], "read in an older generation");
        assert_eq!(cache.get(2, &3), None, "not in a newer generation");
        cache.put(2, 6, "new".to_owned());
        assert_eq!((cache.get(1, &3), cache.get(2, &6).as_deref()), (None, Some("new")));
        // Replacing an entry counts its weight once.
        for _ in 0..10 {
            cache.put(2, 6, "0123456789".to_owned());
        }
        cache.put(2, 7, "0123456789".to_owned());
        assert_eq!((cache.get(2, &6).is_some(), cache.get(2, &7).is_some()), (true, true));
    }
}
