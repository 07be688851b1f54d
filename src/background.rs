//! Background work at idle time: the rules that any engine (out-of-line
//! deduplication, [`crate::engine::Engine::idle`]) or policy (ReoDedup's
//! relocation, [`crate::policy::Policy::idle`]) uses to place its work in
//! the device's idle windows ([`IdleWindow`]). The simulator offers every
//! gap between host arrivals to both through one function
//! (`Simulation::offer_idle`), each with its own idle threshold; their
//! flash operations then compete with host I/O on the same chips under the
//! same scheduler.
//!
//! The simulator offers a window when no host request has arrived for an
//! idle threshold; background work is then issued from the window's start,
//! one item after another (a single background thread), at most `budget`
//! items per `period` of simulated time (SmartDedup §3.4: "the number of
//! blocks that it processes per period of time"), and never at or after the
//! next host arrival. Work already issued is not preempted: a host request
//! arriving while a background read or program occupies a chip waits for
//! it, which is the interference the model is for.

use crate::units::{short_f64, Nanos};

/// Longest per-page hash time an engine parameter may give: 1 s, the bound
/// of `dedup.fingerprint`.
pub const MAX_HASH_TIME_NS: f64 = 1e9;

/// Longest idle threshold or pacing period of background work: one hour
/// (a longer one would never open a window in any trace, and
/// multiplied out it saturates simulated time).
pub const MAX_BACKGROUND_TIME_NS: f64 = 3.6e12;

/// Checks a time-like parameter `key` given as a number of `unit`s
/// (`ns_per_unit` nanoseconds each): finite, not negative, at most
/// `max_ns`. The error names the key, the value (short), the bound in the
/// parameter's unit and what to check.
pub fn check_time_param(key: &str, v: f64, unit: &str, ns_per_unit: f64, max_ns: f64) -> Result<(), String> {
    if !v.is_finite() || v < 0.0 {
        return Err(format!("{key} = {}: must be a non-negative number of {unit}", short_f64(v)));
    }
    if v * ns_per_unit > max_ns {
        return Err(format!(
            "{key} = {}: more than {} {unit} ({}); simulated time would saturate. Check the unit: {key} is in {unit}",
            short_f64(v),
            short_f64(max_ns / ns_per_unit),
            crate::params::format_time_ns(max_ns as u64),
        ));
    }
    Ok(())
}

/// An idle window offered to background work: the device has had no host
/// arrival since `start` minus the idle threshold, and the next arrives at
/// `end` (`None` after the last request).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IdleWindow {
    pub start: Nanos,
    pub end: Option<Nanos>,
}

/// Paces background items: a budget per period, one item at a time.
#[derive(Clone, Debug)]
pub struct Pacer {
    period: Nanos,
    budget: u32,
    period_start: Nanos,
    used: u32,
}

impl Pacer {
    /// `budget` items per `period` (periods aligned to multiples of
    /// `period` from time 0); a zero period or budget means unlimited.
    pub fn new(period: Nanos, budget: u32) -> Pacer {
        Pacer { period, budget, period_start: Nanos::ZERO, used: 0 }
    }

    fn unlimited(&self) -> bool {
        self.period == Nanos::ZERO || self.budget == 0
    }

    /// When the next item may start, at or after `at`, inside the window
    /// ending at `end` (`None`: no end); `None` when it would not start
    /// before `end`. Takes one item of the budget.
    pub fn start(&mut self, at: Nanos, end: Option<Nanos>) -> Option<Nanos> {
        let mut x = at;
        if !self.unlimited() {
            let p = Nanos(x.0 / self.period.0 * self.period.0);
            if p > self.period_start {
                self.period_start = p;
                self.used = 0;
            }
            if self.used >= self.budget {
                x = self.period_start + self.period;
                self.period_start = x;
                self.used = 0;
            }
        }
        if end.is_some_and(|e| x >= e) {
            return None;
        }
        self.used += 1;
        Some(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_holds_per_period_and_the_window_end_stops_work() {
        let mut p = Pacer::new(Nanos::from_ms(1000), 2);
        assert_eq!(p.start(Nanos::from_ms(10), None), Some(Nanos::from_ms(10)));
        assert_eq!(p.start(Nanos::from_ms(11), None), Some(Nanos::from_ms(11)));
        // The period's budget is spent: the next item waits for the next period.
        assert_eq!(p.start(Nanos::from_ms(12), None), Some(Nanos::from_ms(1000)));
        assert_eq!(p.start(Nanos::from_ms(1001), Some(Nanos::from_ms(2000))), Some(Nanos::from_ms(1001)));
        assert_eq!(p.start(Nanos::from_ms(1002), Some(Nanos::from_ms(1500))), None);
        // A new period restores the budget.
        assert_eq!(p.start(Nanos::from_ms(2500), None), Some(Nanos::from_ms(2500)));
    }

    #[test]
    fn zero_budget_is_unlimited() {
        let mut p = Pacer::new(Nanos::from_ms(1), 0);
        for k in 0..100 {
            assert_eq!(p.start(Nanos(k), None), Some(Nanos(k)));
        }
    }
}
