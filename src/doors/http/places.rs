//! HTTP-13: the event streams each credential holds open. A stream takes a
//! place when it starts and gives it back when it ends, whichever way it
//! ends (its client gone, the server stopping), since the place is a guard
//! the stream's task owns.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Open streams by credential (a token, a web session, or `""`: the open
/// principal's requests, which carry none).
#[derive(Default)]
pub(crate) struct StreamPlaces {
    open: Mutex<HashMap<String, usize>>,
}

/// One stream's place; dropping it frees the place.
pub(crate) struct StreamPlace {
    places: Arc<StreamPlaces>,
    credential: String,
}

impl StreamPlaces {
    /// A place for one more stream of `credential`, unless it holds `cap`.
    pub(crate) fn take(self: &Arc<Self>, credential: String, cap: usize) -> Option<StreamPlace> {
        let mut open = self
            .open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let held = open.entry(credential.clone()).or_default();
        if *held >= cap {
            return None;
        }
        *held += 1;
        Some(StreamPlace {
            places: self.clone(),
            credential,
        })
    }

    /// How many streams `credential` holds (for tests of freeing).
    #[cfg(test)]
    fn held(&self, credential: &str) -> usize {
        let open = self
            .open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        open.get(credential).copied().unwrap_or(0)
    }
}

impl Drop for StreamPlace {
    fn drop(&mut self) {
        let mut open = self
            .places
            .open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(held) = open.get_mut(&self.credential) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                open.remove(&self.credential);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_13_places_are_per_credential_and_freed_on_drop() {
        let places = Arc::new(StreamPlaces::default());
        let first = places.take("a".into(), 2).unwrap();
        let second = places.take("a".into(), 2).unwrap();
        assert!(places.take("a".into(), 2).is_none());
        assert!(places.take("b".into(), 2).is_some());
        drop(first);
        assert_eq!(places.held("a"), 1);
        let third = places.take("a".into(), 2).unwrap();
        drop((second, third));
        assert_eq!(places.held("a"), 0);
    }
}
