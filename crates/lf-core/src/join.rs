//! [`join_all`]: futures side by side on the calling task, with no async
//! runtime: enough to put several store calls in flight at once (the
//! contract suites' races, a burst of one agent's calls).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Polls every future side by side until all are done; their outputs in
/// order. Enough to put several store calls in flight at once without an
/// async runtime.
pub async fn join_all<T>(futures: Vec<Pin<Box<dyn Future<Output = T> + Send + '_>>>) -> Vec<T> {
    JoinAll { futures: futures.into_iter().map(Some).collect(), outputs: Vec::new() }.await
}

struct JoinAll<'a, T> {
    futures: Vec<Option<Pin<Box<dyn Future<Output = T> + Send + 'a>>>>,
    outputs: Vec<Option<T>>,
}

// Nothing in a `JoinAll` is pinned structurally: the futures are boxed.
impl<T> Unpin for JoinAll<'_, T> {}

impl<T> Future for JoinAll<'_, T> {
    type Output = Vec<T>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Vec<T>> {
        let this = self.get_mut();
        if this.outputs.is_empty() {
            this.outputs = this.futures.iter().map(|_| None).collect();
        }
        for (slot, out) in this.futures.iter_mut().zip(this.outputs.iter_mut()) {
            if let Some(f) = slot
                && let Poll::Ready(v) = f.as_mut().poll(cx)
            {
                *out = Some(v);
                *slot = None;
            }
        }
        if this.futures.iter().all(Option::is_none) {
            Poll::Ready(this.outputs.iter_mut().map(|o| o.take().expect("every future is done")).collect())
        } else {
            Poll::Pending
        }
    }
}
