//! The dashboard's way in, and the price of a wrong guess.
//!
//! `tmuxd open` asks for a one-time login code (it works once, for
//! [`CODE_TTL`]); the page exchanges it for a credential of its own that
//! lives in memory for [`CREDENTIAL_TTL`]. So the long-lived token never
//! appears in a URL, a browser history or a screen share.
//!
//! Every presented token or code that matches nothing makes the next
//! failure from the same address wait longer, and past a burst every
//! failure from anywhere waits its turn in one queue (see [`Backoff`]), so
//! neither one connection nor many source addresses can make thousands of
//! guesses a second.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::time::{Duration, Instant};

use crate::secret::constant_time_eq;
pub use crate::secret::random_hex;

/// How long a login code may wait to be used.
pub const CODE_TTL: Duration = Duration::from_secs(60);
/// How long a dashboard credential is good for.
pub const CREDENTIAL_TTL: Duration = Duration::from_secs(24 * 3600);
/// Outstanding codes and live credentials, at most; the oldest go first.
const MAX_CODES: usize = 16;
const MAX_CREDENTIALS: usize = 64;

/// Secrets that expire: login codes (used once) and dashboard credentials.
#[derive(Debug, Default)]
pub struct Expiring {
    entries: VecDeque<(String, Instant)>,
}

impl Expiring {
    /// Adds `secret`, good until `now + ttl`; drops the oldest past `max`.
    fn insert(&mut self, secret: String, now: Instant, ttl: Duration, max: usize) {
        self.entries.retain(|(_, until)| *until > now);
        while self.entries.len() >= max {
            self.entries.pop_front();
        }
        self.entries.push_back((secret, now + ttl));
    }

    /// Whether `presented` is live, compared in constant time with each.
    fn holds(&self, presented: &str, now: Instant) -> bool {
        self.entries.iter().fold(false, |found, (secret, until)| {
            found | (constant_time_eq(presented.as_bytes(), secret.as_bytes()) && *until > now)
        })
    }

    /// Removes `presented` if it is live: a code works once.
    fn take(&mut self, presented: &str, now: Instant) -> bool {
        let found = self.holds(presented, now);
        if found {
            self.entries.retain(|(secret, _)| secret != presented);
        }
        found
    }
}

/// Login codes and the credentials they were exchanged for.
#[derive(Debug, Default)]
pub struct Logins {
    codes: Expiring,
    credentials: Expiring,
}

impl Logins {
    /// A new one-time code.
    pub fn issue_code(&mut self, now: Instant) -> String {
        let code = random_hex(16);
        self.codes.insert(code.clone(), now, CODE_TTL, MAX_CODES);
        code
    }

    /// The credential for a live code, which is used up; `None` otherwise.
    pub fn exchange(&mut self, code: &str, now: Instant) -> Option<String> {
        if !self.codes.take(code, now) {
            return None;
        }
        let credential = random_hex(32);
        let (ttl, max) = (CREDENTIAL_TTL, MAX_CREDENTIALS);
        self.credentials.insert(credential.clone(), now, ttl, max);
        Some(credential)
    }

    pub fn is_credential(&self, presented: &str, now: Instant) -> bool {
        self.credentials.holds(presented, now)
    }

    /// Ends a live credential (the page logged out); false if there was none.
    pub fn end(&mut self, credential: &str, now: Instant) -> bool {
        self.credentials.take(credential, now)
    }
}

/// Addresses tracked at most; past it the quietest are forgotten.
const MAX_ADDRESSES: usize = 4096;
/// Failures this far apart do not add up.
const FORGET_AFTER: Duration = Duration::from_secs(600);
/// The first failures are free (a typo), then each waits longer, up to this.
const FREE_FAILURES: u32 = 3;
const FIRST_DELAY: Duration = Duration::from_millis(100);
const MAX_DELAY: Duration = Duration::from_secs(2);

/// Failures from all addresses together: this many answered at once...
const GLOBAL_BURST: u32 = 64;
/// ...then one every this long, whatever address each comes from.
const GLOBAL_SPACING: Duration = Duration::from_millis(50);

/// Failed authentications, per client address and in all. Each failure
/// past an address's free ones is answered only at a time slot of its own,
/// `delay` after the address's previous slot, so parallel guesses queue
/// behind each other instead of running side by side. An address costs an
/// attacker nothing to change on loopback (all of 127.0.0.0/8) or within an
/// IPv6 /64, so an address is its /64 there, and every failure also takes
/// a place in one queue for all ([`GlobalBudget`]); the answer waits for the
/// later of the two. Valid credentials never wait.
#[derive(Debug, Default)]
pub struct Backoff {
    by_address: HashMap<IpAddr, Failures>,
    all: GlobalBudget,
}

/// Failures from everywhere: [`GLOBAL_BURST`] are free, then they are
/// answered [`GLOBAL_SPACING`] apart (a leaky bucket; `next` is when the
/// bucket is empty again, the theoretical arrival time of GCRA).
#[derive(Debug, Default)]
pub struct GlobalBudget {
    next: Option<Instant>,
}

impl GlobalBudget {
    /// Records a failure at `now`; returns how long to hold its answer.
    pub fn failed(&mut self, now: Instant) -> Duration {
        let next = self.next.map_or(now, |next| next.max(now)) + GLOBAL_SPACING;
        self.next = Some(next);
        (next - now).saturating_sub(GLOBAL_SPACING * GLOBAL_BURST)
    }
}

#[derive(Clone, Copy, Debug)]
struct Failures {
    count: u32,
    /// When the last failure's answer was (or will be) sent.
    slot: Instant,
}

impl Backoff {
    /// Records a failure from `address`; returns how long to hold its answer.
    pub fn failed(&mut self, address: IpAddr, now: Instant) -> Duration {
        let global = self.all.failed(now);
        global.max(self.failed_from(source(address), now))
    }

    fn failed_from(&mut self, address: IpAddr, now: Instant) -> Duration {
        if self.by_address.len() >= MAX_ADDRESSES && !self.by_address.contains_key(&address) {
            self.forget_oldest(now);
        }
        let entry = self.by_address.entry(address).or_insert(Failures {
            count: 0,
            slot: now,
        });
        if now.saturating_duration_since(entry.slot) > FORGET_AFTER {
            *entry = Failures {
                count: 0,
                slot: now,
            };
        }
        entry.count += 1;
        let delay = delay_for(entry.count);
        entry.slot = entry.slot.max(now) + delay;
        entry.slot - now
    }

    fn forget_oldest(&mut self, now: Instant) {
        self.by_address
            .retain(|_, f| now.saturating_duration_since(f.slot) <= FORGET_AFTER);
        if self.by_address.len() >= MAX_ADDRESSES
            && let Some(oldest) = self.by_address.iter().min_by_key(|(_, f)| f.slot)
        {
            let oldest = *oldest.0;
            self.by_address.remove(&oldest);
        }
    }
}

/// The address failures are counted under: an IPv6 address's /64 (a host
/// is usually given a whole one), an IPv4-mapped one as IPv4.
fn source(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
        },
        v4 => v4,
    }
}

/// The wait for the `count`th failure in a row.
fn delay_for(count: u32) -> Duration {
    if count <= FREE_FAILURES {
        return Duration::ZERO;
    }
    let doublings = (count - FREE_FAILURES - 1).min(16);
    (FIRST_DELAY * 2u32.pow(doublings)).min(MAX_DELAY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_works_once_and_only_for_a_minute() {
        let start = Instant::now();
        let mut logins = Logins::default();
        let code = logins.issue_code(start);
        assert_eq!(code.len(), 32);
        assert!(logins.exchange("not-the-code", start).is_none());
        let credential = logins.exchange(&code, start).unwrap();
        assert_eq!(credential.len(), 64);
        assert!(logins.is_credential(&credential, start));
        assert!(logins.exchange(&code, start).is_none(), "used twice");
        assert!(logins.end(&credential, start), "logged out");
        assert!(!logins.is_credential(&credential, start));
        assert!(!logins.end(&credential, start), "ended once");
        let late = logins.issue_code(start);
        assert!(logins.exchange(&late, start + CODE_TTL).is_none());
        assert!(!logins.is_credential(&credential, start + CREDENTIAL_TTL));
    }

    #[test]
    fn old_codes_and_credentials_make_room() {
        let start = Instant::now();
        let mut logins = Logins::default();
        let first = logins.issue_code(start);
        for _ in 0..MAX_CODES {
            logins.issue_code(start);
        }
        assert!(logins.exchange(&first, start).is_none());
    }

    #[test]
    fn failures_wait_longer_and_queue_per_address() {
        let start = Instant::now();
        let mut backoff = Backoff::default();
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let waits: Vec<u128> = (0..8)
            .map(|_| backoff.failed(a, start).as_millis())
            .collect();
        // Free, free, free, then each in its own slot after the last.
        assert_eq!(waits, [0, 0, 0, 100, 300, 700, 1500, 3100]);
        assert_eq!(
            backoff.failed(b, start),
            Duration::ZERO,
            "other addresses are apart"
        );
        let later = start + FORGET_AFTER + Duration::from_secs(10);
        assert_eq!(
            backoff.failed(a, later),
            Duration::ZERO,
            "forgotten after a quiet spell"
        );
    }

    #[test]
    fn rotating_addresses_meets_the_global_budget() {
        let start = Instant::now();
        let mut backoff = Backoff::default();
        let ms = |d: Duration| d.as_millis();
        let address = |n: u32| IpAddr::V4(std::net::Ipv4Addr::from(0x7f00_0000 + n));
        // Each guess from an address of its own: free until the burst is spent...
        for n in 0..GLOBAL_BURST {
            assert_eq!(backoff.failed(address(n), start), Duration::ZERO, "{n}");
        }
        // ...then each waits its turn behind the last, whoever sends it.
        let waits: Vec<u128> = (100..104)
            .map(|n| ms(backoff.failed(address(n), start)))
            .collect();
        assert_eq!(waits, [50, 100, 150, 200]);
        // Time drains the queue at the budget's pace.
        let later = start + GLOBAL_SPACING * 4;
        assert_eq!(ms(backoff.failed(address(200), later)), 50);
        let drained = later + GLOBAL_SPACING * (GLOBAL_BURST + 1);
        assert_eq!(backoff.failed(address(201), drained), Duration::ZERO);
    }

    #[test]
    fn the_later_of_the_two_waits_holds_the_answer() {
        let start = Instant::now();
        let mut backoff = Backoff::default();
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let waits: Vec<u128> = (0..5)
            .map(|_| backoff.failed(a, start).as_millis())
            .collect();
        assert_eq!(waits, [0, 0, 0, 100, 300], "the address's own backoff");
        let mut all = GlobalBudget::default();
        let global: Vec<u128> = (0..=GLOBAL_BURST + 1)
            .map(|_| all.failed(start).as_millis())
            .skip(GLOBAL_BURST as usize - 1)
            .collect();
        assert_eq!(global, [0, 50, 100]);
    }

    #[test]
    fn an_ipv6_address_counts_as_its_64() {
        let cases = [
            ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::"),
            ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::"),
            ("::ffff:127.0.0.9", "127.0.0.9"),
            ("127.0.0.9", "127.0.0.9"),
            ("::1", "::"),
        ];
        for (address, counted) in cases {
            let address: IpAddr = address.parse().unwrap();
            assert_eq!(source(address), counted.parse::<IpAddr>().unwrap());
        }
    }

    #[test]
    fn delays_are_capped() {
        assert_eq!(delay_for(1), Duration::ZERO);
        assert_eq!(delay_for(4), FIRST_DELAY);
        assert_eq!(delay_for(5), FIRST_DELAY * 2);
        assert_eq!(delay_for(100), MAX_DELAY);
    }
}
