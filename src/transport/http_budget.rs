//! How many bytes of request bodies may be held in memory at once (issue 27 §2): the
//! screen reads a body whole before rmcp parses it, so bodies that stop one byte short
//! pinned up to the cap each (8 × 61 MiB = 497 MiB measured). Small bodies (every call
//! but a big create_file or edit) are free, so a flood of big ones never delays them;
//! past that, one client address may hold two bodies at the cap, all clients four.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Bodies up to this size are never counted: they cost at most this much per
/// connection, and connections are capped.
pub const FREE_BYTES: usize = 64 << 10;

pub struct BodyBudget {
    per_address: usize,
    total: usize,
    held: Mutex<(usize, HashMap<IpAddr, usize>)>,
}

impl BodyBudget {
    /// The budget for bodies of at most `body_cap` bytes.
    pub fn new(body_cap: usize) -> Arc<Self> {
        Arc::new(Self {
            per_address: body_cap.saturating_mul(2),
            total: body_cap.saturating_mul(4),
            held: Mutex::new((0, HashMap::new())),
        })
    }
}

/// Bytes of one body counted against the budget; released when dropped.
pub struct Reservation {
    budget: Arc<BodyBudget>,
    ip: IpAddr,
    bytes: usize,
}

impl Reservation {
    pub fn new(budget: &Arc<BodyBudget>, ip: IpAddr) -> Self {
        Self {
            budget: budget.clone(),
            ip: ip.to_canonical(),
            bytes: 0,
        }
    }

    /// Makes the body `len` bytes long: `false` (nothing changed) if that would break
    /// the address's or the total budget.
    pub fn grow_to(&mut self, len: usize) -> bool {
        if len <= FREE_BYTES || len <= self.bytes {
            return true;
        }
        let more = len - self.bytes;
        let b = &self.budget;
        let mut held = b.held.lock().unwrap_or_else(|e| e.into_inner());
        let from_ip = held.1.get(&self.ip).copied().unwrap_or(0);
        if held.0 + more > b.total || from_ip + more > b.per_address {
            return false;
        }
        held.0 += more;
        held.1.insert(self.ip, from_ip + more);
        self.bytes = len;
        true
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.bytes == 0 {
            return;
        }
        let mut held = self.budget.held.lock().unwrap_or_else(|e| e.into_inner());
        held.0 = held.0.saturating_sub(self.bytes);
        if let Some(n) = held.1.get_mut(&self.ip) {
            *n = n.saturating_sub(self.bytes);
            if *n == 0 {
                held.1.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_bodies_are_bounded_per_address_and_in_total_small_ones_never() {
        let budget = BodyBudget::new(10 << 20);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let c: IpAddr = "10.0.0.3".parse().unwrap();
        let mut a1 = Reservation::new(&budget, a);
        let mut a2 = Reservation::new(&budget, a);
        let mut a3 = Reservation::new(&budget, a);
        assert!(a1.grow_to(10 << 20) && a2.grow_to(10 << 20));
        assert!(!a3.grow_to(1 << 20), "a third big body from one address");
        assert!(a3.grow_to(FREE_BYTES), "a small body always passes");
        let mut b1 = Reservation::new(&budget, b);
        let mut b2 = Reservation::new(&budget, b);
        assert!(b1.grow_to(10 << 20) && b2.grow_to(10 << 20));
        let mut c1 = Reservation::new(&budget, c);
        assert!(!c1.grow_to(1 << 20), "the total is spent");
        drop(a1);
        assert!(c1.grow_to(10 << 20), "released when the body is dropped");
    }
}
