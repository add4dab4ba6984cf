//! The one async driver of a wait without a thread (HTTP-5, MCPA-4,
//! MCPA-6): the HTTP door's waits, `clarion mcp`'s waiting calls and its
//! task followers all run [`Driver::run`].
//!
//! A [`DrivenWait`] is checked on a [`BlockingPool`] at once; between
//! checks the task only sleeps, on the wait's callback (a `Notify`), its
//! poll interval when no callback can come (WAIT-3), and its next check
//! (WAIT-5). The door adds what is its own: a cap, a stop (shutdown, a
//! cancelled request), periodic ticks (progress), a bound on the time
//! between checks and an extra wake-up (the credential's keep-alive and
//! end, HTTP-10), and a hook before each check after the first.

use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::{Instant, Interval};

use crate::domain::delivery::wait::{Checked, PendingWait};
use crate::doors::envelope::Envelope;
use crate::doors::operations::{DoorWait, Step};

/// What a [`Driver`] waits on: read briefly on a blocking pool, and ended
/// by the driver's cap.
pub trait DrivenWait: Send + Sized + 'static {
    /// What the wait ends with.
    type Outcome: Send + 'static;
    /// Reads once (blocking): `Break` with the outcome once over,
    /// `Continue` with the wait otherwise.
    fn check(self) -> ControlFlow<Self::Outcome, Self>;
    /// The driver's cap came (blocking): the outcome that landed
    /// meanwhile, else the wait's end.
    fn end(self) -> Self::Outcome;
    /// How often to check when no callback can come (WAIT-3's bound).
    fn poll_interval(&self) -> Option<Duration>;
    /// WAIT-5: when to check again even if no callback comes.
    fn next_check(&self) -> Option<std::time::Instant>;
}

/// Where a driver runs its blocking reads: the HTTP door's bounded gate,
/// or tokio's blocking pool. Its error ends the drive.
pub trait BlockingPool: Sync {
    /// Why the pool could not run the work (shutting down, a panic).
    type Error;
    /// Runs `work` off the async threads.
    fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> impl Future<Output = Result<T, Self::Error>> + Send;
}

/// The driver's caps on a wait are a door's, not the caller's own
/// timeout: nothing is detached (WAIT-1b).
impl<T: Send + 'static> DrivenWait for PendingWait<T> {
    type Outcome = crate::error::Result<T>;

    fn check(self) -> ControlFlow<Self::Outcome, Self> {
        match PendingWait::check(self) {
            Ok(Checked::Waiting(pending)) => ControlFlow::Continue(pending),
            Ok(Checked::Over(outcome)) => ControlFlow::Break(Ok(outcome)),
            Err(error) => ControlFlow::Break(Err(error)),
        }
    }

    fn end(self) -> Self::Outcome {
        self.capped()
    }

    fn poll_interval(&self) -> Option<Duration> {
        PendingWait::poll_interval(self)
    }

    fn next_check(&self) -> Option<std::time::Instant> {
        PendingWait::next_check(self)
    }
}

impl DrivenWait for DoorWait {
    type Outcome = Envelope;

    fn check(self) -> ControlFlow<Envelope, Self> {
        match DoorWait::check(self) {
            Step::Waiting(wait) => ControlFlow::Continue(wait),
            Step::Over(over) => ControlFlow::Break(over),
        }
    }

    fn end(self) -> Envelope {
        DoorWait::end(self)
    }

    fn poll_interval(&self) -> Option<Duration> {
        DoorWait::poll_interval(self)
    }

    fn next_check(&self) -> Option<std::time::Instant> {
        DoorWait::next_check(self)
    }
}

type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
type Action<'a, T> = Box<dyn FnMut() -> Boxed<'a, T> + Send + 'a>;

/// Drives one wait to its end; built before the wait begins, since the
/// wait's callback is [`Driver::waker`].
pub struct Driver<'a, P: BlockingPool> {
    pool: &'a P,
    woken: Arc<Notify>,
    cap: Option<Instant>,
    stop: Boxed<'a, P::Error>,
    recheck_every: Option<Duration>,
    wake_at: Option<Instant>,
    ticks: Option<(Interval, Action<'a, ()>)>,
    before_recheck: Option<Action<'a, Result<(), P::Error>>>,
}

/// Why the driver stopped sleeping.
enum Woke<E> {
    Check,
    Tick,
    Cap,
    Stop(E),
}

impl<'a, P: BlockingPool> Driver<'a, P> {
    /// A driver whose reads run on `pool`, with no cap, stop, tick or hook.
    pub fn new(pool: &'a P) -> Self {
        Driver {
            pool,
            woken: Arc::new(Notify::new()),
            cap: None,
            stop: Box::pin(std::future::pending()),
            recheck_every: None,
            wake_at: None,
            ticks: None,
            before_recheck: None,
        }
    }

    /// The wait's callback. `notify_one` keeps a wake that comes while a
    /// check runs, so the next sleep returns at once and the change is
    /// read (WAIT-3).
    pub fn waker(&self) -> impl Fn() + Send + Sync + 'static {
        let woken = self.woken.clone();
        move || woken.notify_one()
    }

    /// At `cap` the wait ends with [`DrivenWait::end`] (a door's bound).
    pub fn cap_at(mut self, cap: Instant) -> Self {
        self.cap = Some(cap);
        self
    }

    /// Ends the drive with `stop`'s error as soon as it is ready (the
    /// server shutting down, the client cancelling); the wait is dropped,
    /// which detaches nothing (WAIT-1b).
    pub fn stop_when(mut self, stop: impl Future<Output = P::Error> + Send + 'a) -> Self {
        self.stop = Box::pin(stop);
        self
    }

    /// Checks at least once per `every` since the last check, callback or
    /// not (HTTP-10's keep-alive).
    pub fn recheck_every(mut self, every: Duration) -> Self {
        self.recheck_every = Some(every);
        self
    }

    /// Checks once more at `at` if it lies ahead (a credential's end,
    /// HTTP-10).
    pub fn wake_at(mut self, at: Option<Instant>) -> Self {
        self.wake_at = at;
        self
    }

    /// Runs `tick` every `period` from now, on a fixed schedule, then
    /// checks (MCPA-4's progress notifications).
    pub fn tick_every<F>(
        mut self,
        period: Duration,
        mut tick: impl FnMut() -> F + Send + 'a,
    ) -> Self
    where
        F: Future<Output = ()> + Send + 'a,
    {
        let ticks = tokio::time::interval_at(Instant::now() + period, period);
        self.ticks = Some((ticks, Box::new(move || Box::pin(tick()))));
        self
    }

    /// Runs `hook` before each check but the first; its error ends the
    /// drive (HTTP-10: the credential must still name the caller).
    pub fn before_recheck<F>(mut self, mut hook: impl FnMut() -> F + Send + 'a) -> Self
    where
        F: Future<Output = Result<(), P::Error>> + Send + 'a,
    {
        self.before_recheck = Some(Box::new(move || Box::pin(hook())));
        self
    }

    /// Checks `wait` until it is over, capped or stopped: its outcome, or
    /// the pool's, the hook's or the stop's error.
    pub async fn run<W: DrivenWait>(mut self, mut wait: W) -> Result<W::Outcome, P::Error> {
        let mut first = true;
        loop {
            if !first {
                self.before_check().await?;
            }
            first = false;
            wait = match self.pool.run(move || wait.check()).await? {
                ControlFlow::Break(outcome) => return Ok(outcome),
                ControlFlow::Continue(wait) => wait,
            };
            // Read here: a `&W` held across the sleep would need `W: Sync`.
            let (poll, due) = (wait.poll_interval(), wait.next_check());
            match self.sleep(poll, due).await {
                Woke::Check => {}
                Woke::Tick => self.tick().await,
                Woke::Cap => return self.pool.run(move || wait.end()).await,
                Woke::Stop(error) => return Err(error),
            }
        }
    }

    async fn before_check(&mut self) -> Result<(), P::Error> {
        match &mut self.before_recheck {
            Some(hook) => hook().await,
            None => Ok(()),
        }
    }

    async fn tick(&mut self) {
        if let Some((_, tick)) = &mut self.ticks {
            tick().await;
        }
    }

    /// Sleeps until the next reason to check, or to end.
    async fn sleep(
        &mut self,
        poll: Option<Duration>,
        due: Option<std::time::Instant>,
    ) -> Woke<P::Error> {
        let now = Instant::now();
        let poll = poll.map(|every| now + every);
        let recheck = self.recheck_every.map(|every| now + every);
        let due = due.map(Instant::from_std);
        self.wake_at = self.wake_at.filter(|at| *at > now);
        // Biased: the stop and the cap win over a wake at the same moment.
        tokio::select! {
            biased;
            error = &mut self.stop => Woke::Stop(error),
            () = sleep_until(self.cap) => Woke::Cap,
            () = self.woken.notified() => Woke::Check,
            () = sleep_until(poll) => Woke::Check,
            () = sleep_until(recheck) => Woke::Check,
            () = sleep_until(self.wake_at) => Woke::Check,
            () = sleep_until(due) => Woke::Check,
            () = next_tick(&mut self.ticks) => Woke::Tick,
        }
    }
}

async fn next_tick(ticks: &mut Option<(Interval, Action<'_, ()>)>) {
    match ticks {
        Some((interval, _)) => {
            interval.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// Sleeps until `at`; never wakes when there is no `at`.
pub(crate) async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
