//! One call (a `tools/call`, say) as a scope its reads can share work in.
//!
//! A store may keep, for the rest of a call, what it learnt at the call's
//! first read: SQLite's cached reads keep whether the database had changed,
//! so that the call's later reads need not look again. A call is a future
//! run [`within`] a [`CallScope`]; while that future is polled, on
//! whichever thread polls it, [`with_current`] hands out its scope. A call
//! run within another is part of it (a tool a tool calls, the tool call of
//! an HTTP request): it shares the outer one's scope. Tasks it spawns run
//! outside it.

use std::any::Any;
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

thread_local! {
    /// The scope of the call being polled on this thread.
    static CURRENT: RefCell<Option<Arc<CallScope>>> = const { RefCell::new(None) };
}

/// What the stores keep for the rest of one call: at most one value of each
/// type.
#[derive(Default)]
pub struct CallScope {
    kept: Mutex<Vec<Box<dyn Any + Send>>>,
}

impl CallScope {
    fn kept_mut(&self) -> std::sync::MutexGuard<'_, Vec<Box<dyn Any + Send>>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value of type `T` kept in this call, if any.
    pub fn kept<T: Any + Clone>(&self) -> Option<T> {
        self.kept_mut().iter().find_map(|v| v.downcast_ref::<T>()).cloned()
    }

    /// Keeps `value` for the rest of this call, in place of the `T` kept
    /// before.
    pub fn keep<T: Any + Send>(&self, value: T) {
        let mut kept = self.kept_mut();
        match kept.iter_mut().find_map(|v| v.downcast_mut::<T>()) {
            Some(old) => *old = value,
            None => kept.push(Box::new(value)),
        }
    }
}

/// `call` run as one call: in a scope of its own, or in the scope of the
/// call it is first polled within.
pub fn within<F: Future>(call: F) -> Within<F> {
    Within { scope: None, call: Box::pin(call) }
}

/// `f` of the scope of the call being polled on this thread, `None` outside
/// every call.
pub fn with_current<R>(f: impl FnOnce(Option<&CallScope>) -> R) -> R {
    CURRENT.with(|current| f(current.borrow().as_deref()))
}

/// A future run as one call: see [`within`].
pub struct Within<F> {
    /// Its scope, from its first poll on.
    scope: Option<Arc<CallScope>>,
    call: Pin<Box<F>>,
}

impl<F: Future> Future for Within<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        /// Puts the scope that was current back, however the poll ends.
        struct Restore(Option<Arc<CallScope>>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let outer = self.0.take();
                CURRENT.with(|current| *current.borrow_mut() = outer);
            }
        }
        let this = &mut *self;
        let outer = CURRENT.with(|current| {
            let mut current = current.borrow_mut();
            let scope = this.scope.get_or_insert_with(|| current.clone().unwrap_or_default());
            current.replace(scope.clone())
        });
        let _restore = Restore(outer);
        this.call.as_mut().poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::task::Waker;

    use super::*;

    /// A future that is pending once, so that its call is polled twice.
    struct YieldOnce(bool);
    impl Future for YieldOnce {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                return Poll::Ready(());
            }
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    fn kept_here() -> Option<u32> {
        with_current(|scope| scope.and_then(CallScope::kept::<u32>))
    }

    fn keep_here(n: u32) {
        with_current(|scope| scope.expect("within a call").keep(n));
    }

    /// Polls `f` to its end on this thread.
    fn run<T>(f: impl Future<Output = T>) -> T {
        let mut f = std::pin::pin!(f);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(out) = f.as_mut().poll(&mut cx) {
                return out;
            }
        }
    }

    #[test]
    fn a_call_keeps_what_it_kept_across_its_polls_and_no_longer() {
        assert_eq!(kept_here(), None, "outside every call");
        let seen = run(within(async {
            assert_eq!(kept_here(), None, "a new call keeps nothing");
            keep_here(1);
            YieldOnce(false).await;
            let after_yield = kept_here();
            keep_here(2);
            (after_yield, kept_here())
        }));
        assert_eq!(seen, (Some(1), Some(2)), "kept across a poll, and replaced");
        assert_eq!(kept_here(), None, "nothing outlives the call");
        let next = run(within(async { kept_here() }));
        assert_eq!(next, None, "another call starts afresh");
    }

    #[test]
    fn calls_polled_in_turn_on_one_thread_keep_apart() {
        let a = within(async {
            keep_here(10);
            YieldOnce(false).await;
            kept_here()
        });
        let b = within(async {
            keep_here(20);
            YieldOnce(false).await;
            kept_here()
        });
        let (mut a, mut b) = (std::pin::pin!(a), std::pin::pin!(b));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(a.as_mut().poll(&mut cx).is_pending());
        assert!(b.as_mut().poll(&mut cx).is_pending());
        assert_eq!(a.as_mut().poll(&mut cx), Poll::Ready(Some(10)));
        assert_eq!(b.as_mut().poll(&mut cx), Poll::Ready(Some(20)));
    }

    #[test]
    fn a_call_within_a_call_is_part_of_it() {
        let (inner, outer) = run(within(async {
            keep_here(1);
            let inner = within(async {
                let before = kept_here();
                keep_here(2);
                YieldOnce(false).await;
                (before, kept_here())
            })
            .await;
            (inner, kept_here())
        }));
        assert_eq!(inner, (Some(1), Some(2)), "the outer call's scope");
        assert_eq!(outer, Some(2), "what the inner part kept");
        assert_eq!(kept_here(), None);
    }

    #[test]
    fn a_poll_that_panics_leaves_no_scope_behind() {
        let panicked = std::panic::catch_unwind(|| {
            run(within(async {
                keep_here(7);
                panic!("the call fails")
            }))
        });
        assert!(panicked.is_err());
        assert_eq!(kept_here(), None);
        assert_eq!(run(within(async { kept_here() })), None);
    }

    #[test]
    fn a_call_moves_between_threads_with_its_scope() {
        let mut call = Box::pin(within(async {
            keep_here(5);
            YieldOnce(false).await;
            kept_here()
        }));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(call.as_mut().poll(&mut cx).is_pending());
        let seen = std::thread::spawn(move || {
            let mut cx = Context::from_waker(Waker::noop());
            match call.as_mut().poll(&mut cx) {
                Poll::Ready(v) => v,
                Poll::Pending => panic!("the call ends on its second poll"),
            }
        })
        .join()
        .unwrap();
        assert_eq!(seen, Some(5));
        assert_eq!(kept_here(), None, "the first thread is outside every call");
    }
}
